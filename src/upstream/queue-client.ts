// HTTP client of Area D (Upstash QStash v2 REST API): publish/enqueue with Upstash-* headers, URL groups
// (topics), messages, dead letter queue, schedules, queues, signing keys and flow-control keys. Paths and methods as
// @upstash/qstash sends them; answers are the service's JSON, passed back unchanged.
import { bearerRestClient, RestClient, segment, type BearerClientOptions } from './rest-json.js';

export type QueueClientOptions = BearerClientOptions;

export interface OutgoingMessage {
  body: Buffer;
  /** Upstash-* settings and Content-Type, plus Upstash-Forward-* headers for the destination. */
  headers: Record<string, string>;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Filters = Record<string, string | undefined>;

export class QueueClient {
  private readonly rest: RestClient;

  constructor(options: QueueClientOptions) {
    this.rest = bearerRestClient('queue service', options);
  }

  get origin(): string {
    return this.rest.origin;
  }

  // The destination (a URL or a URL group name) goes into the path as it is, like the SDK does.
  publish(destination: string, message: OutgoingMessage): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/publish/${destination}`, body: message.body, headers: message.headers });
  }

  enqueue(queue: string, destination: string, message: OutgoingMessage): Promise<Json> {
    return this.rest.call({
      method: 'POST',
      path: `/v2/enqueue/${segment(queue)}/${destination}`,
      body: message.body,
      headers: message.headers,
    });
  }

  // ---- URL groups ----
  addEndpoints(group: string, endpoints: { url: string; name?: string }[]): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/topics/${segment(group)}/endpoints`, json: { endpoints } });
  }

  removeEndpoints(group: string, endpoints: ({ url: string } | { name: string })[]): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: `/v2/topics/${segment(group)}/endpoints`, json: { endpoints } });
  }

  getGroup(group: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/topics/${segment(group)}` });
  }

  listGroups(): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/topics' });
  }

  deleteGroup(group: string): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: `/v2/topics/${segment(group)}` });
  }

  setGroupHeaders(group: string, headers: Record<string, string | string[]>): Promise<Json> {
    return this.rest.call({ method: 'PATCH', path: `/v2/topics/${segment(group)}`, json: { headers } });
  }

  // ---- messages ----
  getMessage(id: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/messages/${segment(id)}` });
  }

  cancelMessage(id: string): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: `/v2/messages/${segment(id)}` });
  }

  cancelMessages(filters: Filters, messageIds?: string[]): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: '/v2/messages', query: { ...filters, messageIds } });
  }

  // ---- dead letter queue ----
  listDlq(filters: Filters): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/dlq', query: filters });
  }

  getDlq(dlqId: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/dlq/${segment(dlqId)}` });
  }

  deleteDlq(dlqIds: string[]): Promise<Json> {
    if (dlqIds.length === 1) return this.rest.call({ method: 'DELETE', path: `/v2/dlq/${segment(dlqIds[0])}` });
    return this.rest.call({ method: 'DELETE', path: '/v2/dlq', query: { dlqIds } });
  }

  retryDlq(dlqIds: string[]): Promise<Json> {
    if (dlqIds.length === 1) return this.rest.call({ method: 'POST', path: `/v2/dlq/retry/${segment(dlqIds[0])}` });
    return this.rest.call({ method: 'POST', path: '/v2/dlq/retry', query: { dlqIds } });
  }

  // ---- schedules ----
  createSchedule(destination: string, message: OutgoingMessage): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/schedules/${destination}`, body: message.body, headers: message.headers });
  }

  getSchedule(id: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/schedules/${segment(id)}` });
  }

  listSchedules(): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/schedules' });
  }

  deleteSchedule(id: string): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: `/v2/schedules/${segment(id)}` });
  }

  pauseSchedule(id: string): Promise<Json> {
    return this.rest.call({ method: 'PATCH', path: `/v2/schedules/${segment(id)}/pause` });
  }

  resumeSchedule(id: string): Promise<Json> {
    return this.rest.call({ method: 'PATCH', path: `/v2/schedules/${segment(id)}/resume` });
  }

  // ---- queues ----
  upsertQueue(name: string, parallelism: number | undefined): Promise<Json> {
    return this.rest.call({
      method: 'POST',
      path: '/v2/queues',
      json: parallelism === undefined ? { queueName: name } : { queueName: name, parallelism },
    });
  }

  getQueue(name: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/queues/${segment(name)}` });
  }

  listQueues(): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/queues' });
  }

  deleteQueue(name: string): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: `/v2/queues/${segment(name)}` });
  }

  pauseQueue(name: string): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/queues/${segment(name)}/pause` });
  }

  resumeQueue(name: string): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/queues/${segment(name)}/resume` });
  }

  // ---- flow-control keys (the SDK's FlowControlApi) ----
  /** Every key's FlowControlInfo; `search` keeps the keys containing the text. */
  listFlowControl(search: string | undefined): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/flowControl', query: { search } });
  }

  getFlowControl(key: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/flowControl/${segment(key)}` });
  }

  pauseFlowControl(key: string): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/flowControl/${segment(key)}/pause` });
  }

  resumeFlowControl(key: string): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/flowControl/${segment(key)}/resume` });
  }

  /** Fixes the given values against later publishes; `period` in seconds (the SDK's PinFlowControlOptions). */
  pinFlowControl(key: string, pin: { parallelism?: number; rate?: number; period?: number }): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/flowControl/${segment(key)}/pin`, query: pin });
  }

  /** Lets later publishes set the chosen values again (sent as `=true`, left out otherwise). */
  unpinFlowControl(key: string, which: { parallelism?: boolean; rate?: boolean }): Promise<Json> {
    const query = { parallelism: which.parallelism || undefined, rate: which.rate || undefined };
    return this.rest.call({ method: 'POST', path: `/v2/flowControl/${segment(key)}/unpin`, query });
  }

  resetFlowControlRate(key: string): Promise<Json> {
    return this.rest.call({ method: 'POST', path: `/v2/flowControl/${segment(key)}/resetRate` });
  }

  globalParallelism(): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/globalParallelism' });
  }

  // ---- signing keys and event log ----
  getKeys(): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/keys' });
  }

  rotateKeys(): Promise<Json> {
    return this.rest.call({ method: 'POST', path: '/v2/keys/rotate' });
  }

  events(filters: Filters): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/events', query: filters });
  }

  // ---- Upstash Workflow runs ----
  notify(eventId: string, data: Buffer, workflowRunId?: string): Promise<Json> {
    const path =
      workflowRunId === undefined ? `/v2/notify/${segment(eventId)}` : `/v2/notify/${segment(workflowRunId)}/${segment(eventId)}`;
    return this.rest.call({ method: 'POST', path, body: data, headers: {} });
  }

  waiters(eventId: string): Promise<Json> {
    return this.rest.call({ method: 'GET', path: `/v2/waiters/${segment(eventId)}` });
  }

  workflowLogs(filters: Filters): Promise<Json> {
    return this.rest.call({ method: 'GET', path: '/v2/workflows/events', query: filters });
  }

  cancelWorkflowRuns(workflowRunIds: string[]): Promise<Json> {
    return this.rest.call({ method: 'DELETE', path: '/v2/workflows/runs', query: { workflowRunIds: workflowRunIds.join(',') } });
  }

  close(): Promise<void> {
    return this.rest.close();
  }
}
