// The queue page's own read calls (docs/console.md): QStash's API has no list of the messages in
// flight or scheduled (only GET /v2/messages/{id} and the bulk cancel), so the console reads them
// here, behind the queue API's tokens (QSTASH_TOKEN or the Read Only token), read only:
//   GET /console/api/queue/messages        the pending messages, each with its state and attempts
//   GET /console/api/queue/messages/<id>   one message: its record, its attempts, its callbacks' outcomes
//   GET /console/api/queue/depth           how many messages are in flight, waiting, delayed, in the DLQ
import type { Job } from 'bullmq';
import type { Engine } from '../queue/engine.js';
import { messageView, type QueuedMessage } from '../queue/message.js';
import type { LogEvent, QueueRecords } from '../queue/records.js';

/** What the console reads of the queue area. */
export interface QueueSource {
  engine: Engine;
  records: QueueRecords;
}

/** At most this many messages per BullMQ state in the list (a local dev queue is small). */
const LIST_LIMIT = 200;
/** Log events that end an attempt. */
const ATTEMPT_ENDS = new Set(['ERROR', 'DELIVERED']);

export interface QueueDepth {
  at: number;
  inFlight: number;
  waiting: number;
  /** Due later: scheduled by a delay, or waiting for a retry. */
  delayed: number;
  dlq: number;
}

export async function queueDepth(q: QueueSource): Promise<QueueDepth> {
  const [counts, dlq] = await Promise.all([q.engine.jobCounts(), q.records.listDlq()]);
  return {
    at: Date.now(),
    inFlight: counts.active ?? 0,
    waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.paused ?? 0),
    delayed: counts.delayed ?? 0,
    dlq: dlq.length,
  };
}

/** One pending message of the list: where it is, when it is due and how many attempts it has had. */
export function listedMessage(state: string, job: Job<QueuedMessage>, now: number) {
  const m = job.data;
  const attempts = job.attemptsMade + (m.retried ?? 0);
  const dueAt = state === 'delayed' ? job.timestamp + (job.delay ?? 0) : undefined;
  return {
    messageId: m.messageId,
    kind: m.kind,
    state: stateOf(state, attempts, m.notBefore, now),
    url: m.url,
    ...(m.topicName ? { topicName: m.topicName } : {}),
    ...(m.queueName ? { queueName: m.queueName } : {}),
    ...(m.scheduleId ? { scheduleId: m.scheduleId } : {}),
    ...(m.sourceMessageId ? { sourceMessageId: m.sourceMessageId } : {}),
    createdAt: m.createdAt,
    ...(dueAt !== undefined ? { dueAt } : {}),
    attempts,
    maxRetries: m.maxRetries,
  };
}

/** in flight, waiting (its turn, or its flow-control key's slot), scheduled (a delay), retry (a failed attempt's backoff). */
function stateOf(bull: string, attempts: number, notBefore: number, now: number): string {
  if (bull === 'active') return 'in flight';
  if (bull !== 'delayed') return 'waiting';
  if (attempts > 0) return 'retry';
  return notBefore > now ? 'scheduled' : 'waiting';
}

export async function listMessages(q: QueueSource) {
  const now = Date.now();
  const seen = new Set<string>();
  const messages = (await q.engine.pendingByState(LIST_LIMIT))
    .filter(({ job }) => !seen.has(job.data.messageId) && seen.add(job.data.messageId))
    .map(({ state, job }) => listedMessage(state, job, now))
    .sort((a, b) => a.createdAt - b.createdAt);
  return { messages };
}

/**
 * One message, pending or not: its record while it is pending (else the one its log events carry:
 * headers, body, method), each attempt's outcome from the log, and the outcomes of its callbacks,
 * which are messages of their own (`<id>_cb<n>` after each attempt that got a response, `<id>_fcb`).
 */
export async function messageDetail(q: QueueSource, id: string) {
  const job = await q.engine.findJob(id);
  const all = await q.records.readEvents(undefined, 2000, (e) => e.messageId === id || isCallbackOf(e.messageId, id));
  const chronological = all.events.reverse();
  const own = chronological.filter((e) => e.messageId === id);
  if (!job && own.length === 0) return undefined;
  const callbacks = new Map<string, LogEvent[]>();
  for (const e of chronological)
    if (e.messageId !== id) (callbacks.get(e.messageId) ?? callbacks.set(e.messageId, []).get(e.messageId)!).push(e);
  const first = own[0];
  const record = job
    ? messageView(job.data)
    : {
        messageId: id,
        url: first.url,
        method: first.method,
        header: first.header ?? {},
        ...(first.body ? { bodyBase64: first.body } : {}),
      };
  return {
    pending: job !== undefined,
    message: record,
    state: own.length ? own[own.length - 1].state : 'CREATED',
    attempts: own.filter((e) => ATTEMPT_ENDS.has(e.state)).map(attemptOf),
    callbacks: [...callbacks].map(([messageId, events]) => ({
      messageId,
      kind: messageId.endsWith('_fcb') ? 'failure callback' : 'callback',
      url: events[0].url,
      state: events[events.length - 1].state,
      attempts: events.filter((e) => ATTEMPT_ENDS.has(e.state)).map(attemptOf),
    })),
    events: chronological.filter((e) => e.messageId === id).map((e) => ({ time: e.time, state: e.state })),
  };
}

function attemptOf(e: LogEvent) {
  return {
    time: e.time,
    state: e.state,
    ...(e.responseStatus !== undefined ? { responseStatus: e.responseStatus } : {}),
    ...(e.error ? { error: e.error } : {}),
    ...(e.responseBody ? { responseBody: e.responseBody } : {}),
  };
}

function isCallbackOf(messageId: string, id: string): boolean {
  return messageId === `${id}_fcb` || (messageId.startsWith(`${id}_cb`) && /^\d+$/.test(messageId.slice(id.length + 3)));
}
