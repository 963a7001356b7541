// The filters of the list and bulk endpoints (DLQ, message cancel, logs), as the service reads them:
// each endpoint knows its own query fields and refuses any other (a typo must not widen a bulk delete
// to everything); a field takes several values, repeated or comma-separated, matched with OR; fields
// combine with AND; numbers, dates, states and cursors are checked before anything is selected.
import { badRequest } from './errors.js';

export type ListEndpoint = 'dlq' | 'messages' | 'logs';

export interface Filterable {
  messageId?: string;
  url: string;
  topicName?: string;
  queueName?: string;
  scheduleId?: string;
  labels?: string[];
  callerIp?: string;
  createdAt?: number;
  /** A log event names its key; a message keeps its whole flow control. */
  flowControlKey?: string;
  flowControl?: { key: string };
}

/** The log states a `state` filter takes; IN_PROGRESS stands for ACTIVE, RETRY and ERROR as well. */
export const LOG_STATES = ['CREATED', 'ACTIVE', 'RETRY', 'ERROR', 'IN_PROGRESS', 'DELIVERED', 'FAILED', 'CANCEL_REQUESTED', 'CANCELLED'];
const IN_PROGRESS_STATES = ['ACTIVE', 'RETRY', 'ERROR', 'IN_PROGRESS'];

/** Fields every list endpoint takes (urlGroup and callerIP: the SDK's older and deprecated spellings). */
const COMMON = [
  'url',
  'topicName',
  'urlGroup',
  'queueName',
  'scheduleId',
  'label',
  'callerIp',
  'callerIP',
  'flowControlKey',
  'fromDate',
  'toDate',
];
/** Accepted everywhere: the token in the query, and the SDK's removed `api` filter, which the service ignores. */
const ALWAYS = ['qstash_token', 'queue_token', 'api'];
const FIELDS: Record<ListEndpoint, string[]> = {
  dlq: [...COMMON, 'messageId', 'responseStatus', 'dlqIds', 'cursor', 'count', 'order', 'source'],
  messages: [...COMMON, 'messageIds', 'host', 'path', 'count'],
  logs: [...COMMON, 'messageId', 'messageIds', 'state', 'host', 'path', 'cursor', 'count'],
};
/** Page sizes: the DLQ and the logs give at most 100 a page; a bulk cancel takes at most 500 and, without count, all. */
const COUNT_LIMIT: Record<ListEndpoint, number> = { dlq: 100, messages: 500, logs: 100 };

export interface ListQuery {
  keep: (m: Filterable, time?: number) => boolean;
  /** Explicit ids (dlqIds, messageIds, or the logs' messageId/messageIds): the other filters are ignored. */
  ids: string[];
  /** DLQ only: the response status of the last attempt (any of these). */
  responseStatus: number[];
  /** Logs only: the states asked for (any of these). */
  states: string[];
  count?: number;
  cursor?: string;
  order: 'earliestFirst' | 'latestFirst';
  /** DLQ only: `workflow` (the workflow SDK's dlq.list) keeps the entries of workflow steps, `qstash` the others. */
  source?: 'workflow' | 'qstash';
}

export function parseListQuery(endpoint: ListEndpoint, q: URLSearchParams): ListQuery {
  const allowed = FIELDS[endpoint];
  for (const name of new Set(q.keys())) {
    if (!allowed.includes(name) && !ALWAYS.includes(name))
      throw badRequest(`unknown query parameter '${name}': the filters of this endpoint are ${allowed.join(', ')}`);
  }
  const list = (...names: string[]) => listParam(q, ...names);
  const ids = endpoint === 'dlq' ? list('dlqIds') : endpoint === 'messages' ? list('messageIds') : list('messageIds', 'messageId');
  const messageIds = endpoint === 'dlq' ? list('messageId') : [];
  const urls = list('url');
  const topics = list('topicName', 'urlGroup');
  const queues = list('queueName');
  const schedules = list('scheduleId');
  const labels = list('label');
  const ips = list('callerIp', 'callerIP');
  const flowKeys = list('flowControlKey');
  const hosts = list('host');
  const paths = list('path');
  const from = integer(q, 'fromDate');
  const to = integer(q, 'toDate');
  const responseStatus = list('responseStatus').map((v) => checkedInteger('responseStatus', v));
  const states = list('state').map((s) => s.toUpperCase());
  for (const s of states) if (!LOG_STATES.includes(s)) throw badRequest(`invalid state '${s}': one of ${LOG_STATES.join(', ')}`);
  const order = q.get('order') ?? 'earliestFirst';
  if (order !== 'earliestFirst' && order !== 'latestFirst') throw badRequest(`invalid order '${order}': earliestFirst or latestFirst`);
  const source = q.get('source') ?? undefined;
  if (source !== undefined && source !== 'workflow' && source !== 'qstash')
    throw badRequest(`invalid source '${source}': workflow or qstash`);
  const count = integer(q, 'count');
  if (count !== undefined && (count < 1 || (endpoint === 'messages' && count > COUNT_LIMIT.messages)))
    throw badRequest(`invalid count ${count}: between 1 and ${COUNT_LIMIT[endpoint]}`);
  const cursor = q.get('cursor') || undefined;
  if (cursor !== undefined) checkCursor(endpoint, cursor);

  const keep = (m: Filterable, time?: number): boolean => {
    const t = time ?? m.createdAt ?? 0;
    if (messageIds.length && !messageIds.includes(m.messageId ?? '')) return false;
    if (urls.length && !urls.includes(m.url)) return false;
    if (topics.length && !topics.includes(m.topicName ?? '')) return false;
    if (queues.length && !queues.includes(m.queueName ?? '')) return false;
    if (schedules.length && !schedules.includes(m.scheduleId ?? '')) return false;
    if (labels.length && !labels.some((l) => m.labels?.includes(l))) return false;
    if (ips.length && !ips.includes(m.callerIp ?? '')) return false;
    if (flowKeys.length && !flowKeys.includes(m.flowControlKey ?? m.flowControl?.key ?? '')) return false;
    if (hosts.length || paths.length) {
      const u = new URL(m.url);
      if (hosts.length && !hosts.includes(u.host) && !hosts.includes(u.hostname)) return false;
      if (paths.length && !paths.includes(u.pathname)) return false;
    }
    if (from !== undefined && t < from) return false;
    if (to !== undefined && t > to) return false;
    return true;
  };
  return {
    keep,
    ids,
    responseStatus,
    states,
    ...(count !== undefined ? { count: Math.min(count, COUNT_LIMIT[endpoint]) } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
    order,
    ...(source !== undefined ? { source } : {}),
  };
}

/** Whether a log state passes a `state` filter (IN_PROGRESS: any state of a delivery under way). */
export function stateMatches(states: string[], state: string): boolean {
  if (states.length === 0 || states.includes(state)) return true;
  return states.includes('IN_PROGRESS') && IN_PROGRESS_STATES.includes(state);
}

function integer(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null || v === '' ? undefined : checkedInteger(name, v);
}

function checkedInteger(name: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw badRequest(`invalid ${name} '${v}': a whole number is expected`);
  return Number(v);
}

/**
 * DLQ cursors are DLQ ids (`<ms>-<n>`). Log cursors are ours (`<entry>.<index>`), or a time in ms
 * or a stream-style id, as the SDK documents (`cursor: Date.now()` starts before now).
 */
function checkCursor(endpoint: ListEndpoint, cursor: string): void {
  const ok = endpoint === 'dlq' ? /^\d+-\d+$/.test(cursor) : /^\d+(-\d+)?(\.\d+)?$/.test(cursor);
  if (!ok) throw badRequest(`invalid cursor '${cursor}': pass the cursor of the previous page unchanged`);
}

/** The values of query parameters that take a list: repeated (`?a=1&a=2`), comma-separated (`?a=1,2`), or both. */
export function listParam(q: URLSearchParams, ...names: string[]): string[] {
  return names.flatMap((name) =>
    q
      .getAll(name)
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean),
  );
}
