// The queue area's records in the platform's internal Redis (never the Area B data): URL groups,
// named queues, the dead letter queue, deduplication ids, schedules, the event log and the
// signing keys. Pending messages themselves are BullMQ jobs (engine.ts).
import { Redis } from 'ioredis';
import type { HeaderMap } from './publish-options.js';

const K = {
  keys: 'rq:signing-keys',
  topics: 'rq:topics',
  queues: 'rq:queues',
  dlq: 'rq:dlq',
  dlqOrder: 'rq:dlq:order',
  dlqByMessage: 'rq:dlq:by-message',
  dedup: (id: string) => `rq:dedup:${id}`,
  schedules: 'rq:schedules',
  scheduleStates: (id: string) => `rq:schedule-states:${id}`,
  events: 'rq:events',
};

/** Events kept for GET /v2/events (approximate cap, like a log retention window). */
const EVENTS_KEPT = 100_000;
/** Events logged within this many ms share one stream entry. */
const EVENT_BATCH_MS = 20;
/** Deduplication window of the real service: 10 minutes. */
const DEDUP_WINDOW_S = 600;

export interface UrlGroup {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: Array<{ name?: string; url: string }>;
  /** Default headers of every publish to the group (PATCH /v2/topics/{name}). */
  headers?: HeaderMap;
}

export interface NamedQueue {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  paused: boolean;
}

export interface DlqEntry {
  dlqId: string;
  /** The message as GET /v2/messages shows it. */
  message: Record<string, unknown>;
  /** The job data, to publish it again on retry. */
  job: unknown;
  responseStatus?: number;
  responseHeader?: HeaderMap;
  responseBody?: string;
  responseBodyBase64?: string;
  createdAt: number;
}

export interface LogEvent {
  time: number;
  state: string;
  messageId: string;
  url: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  /** The first label (the service's older field), beside all of them. */
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  /** The message's headers and base64 body (redacted as Upstash-Redact-Fields says), method and settings. */
  header?: HeaderMap;
  body?: string;
  method?: string;
  timeout?: number;
  maxRetries?: number;
  retryDelayExpression?: string;
  callback?: string;
  callbackHeaders?: HeaderMap;
  failureCallback?: string;
  failureCallbackHeaders?: HeaderMap;
  error?: string;
  nextDeliveryTime?: number;
  /** The response of a failed attempt (ERROR, FAILED): status, base64 body and headers. */
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: HeaderMap;
}

export interface ScheduleRecord {
  scheduleId: string;
  cron: string;
  destination: string;
  createdAt: number;
  /** The publish request to replay at each tick: its headers and body (base64). */
  requestHeaders: Array<[string, string]>;
  bodyBase64: string;
  callerIp: string;
  isPaused: boolean;
  lastScheduleTime?: number;
}

export class QueueRecords {
  readonly redis: Redis;

  constructor(redis: Redis) {
    this.redis = redis;
  }

  // --- signing keys: given by flags, else made once and kept so a restart signs with the same keys
  async signingKeys(given: { current?: string; next?: string }, generate: () => string): Promise<{ current: string; next: string }> {
    if (given.current) await this.redis.hset(K.keys, 'current', given.current);
    if (given.next) await this.redis.hset(K.keys, 'next', given.next);
    await this.redis.hsetnx(K.keys, 'current', generate());
    await this.redis.hsetnx(K.keys, 'next', generate());
    const [current, next] = await this.redis.hmget(K.keys, 'current', 'next');
    return { current: current!, next: next! };
  }

  async rotateKeys(next: string, generate: () => string): Promise<{ current: string; next: string }> {
    const keys = { current: next, next: generate() };
    await this.redis.hset(K.keys, keys);
    return keys;
  }

  // --- URL groups
  async getGroup(name: string): Promise<UrlGroup | undefined> {
    const text = await this.redis.hget(K.topics, name);
    return text ? (JSON.parse(text) as UrlGroup) : undefined;
  }

  async listGroups(): Promise<UrlGroup[]> {
    return Object.values(await this.redis.hgetall(K.topics))
      .map((t) => JSON.parse(t) as UrlGroup)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async putGroup(group: UrlGroup): Promise<void> {
    await this.redis.hset(K.topics, group.name, JSON.stringify(group));
  }

  async deleteGroup(name: string): Promise<boolean> {
    return (await this.redis.hdel(K.topics, name)) === 1;
  }

  // --- named queues (their jobs live in BullMQ)
  async getQueue(name: string): Promise<NamedQueue | undefined> {
    const text = await this.redis.hget(K.queues, name);
    return text ? (JSON.parse(text) as NamedQueue) : undefined;
  }

  async listQueues(): Promise<NamedQueue[]> {
    return Object.values(await this.redis.hgetall(K.queues))
      .map((t) => JSON.parse(t) as NamedQueue)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async putQueue(queue: NamedQueue): Promise<void> {
    await this.redis.hset(K.queues, queue.name, JSON.stringify(queue));
  }

  async deleteQueue(name: string): Promise<boolean> {
    return (await this.redis.hdel(K.queues, name)) === 1;
  }

  // --- deduplication: the first publish with an id within 10 minutes wins
  /** Returns what the earlier publish stored with `id` (its answer), or undefined when this one takes the id. */
  async claimDeduplicationId(id: string, answer: string): Promise<string | undefined> {
    const set = await this.redis.set(K.dedup(id), answer, 'EX', DEDUP_WINDOW_S, 'NX');
    return set === 'OK' ? undefined : ((await this.redis.get(K.dedup(id))) ?? undefined);
  }

  async releaseDeduplicationId(id: string): Promise<void> {
    await this.redis.del(K.dedup(id));
  }

  // --- dead letter queue
  /** Adds the message once: a second call for the same message (a redelivered job) returns the first dlqId. */
  async addToDlq(messageId: string, entry: Omit<DlqEntry, 'dlqId'>, dlqId: string): Promise<string> {
    const claimed = await this.redis.hsetnx(K.dlqByMessage, messageId, dlqId);
    if (!claimed) return (await this.redis.hget(K.dlqByMessage, messageId))!;
    await this.redis
      .multi()
      .hset(K.dlq, dlqId, JSON.stringify({ dlqId, ...entry }))
      .zadd(K.dlqOrder, entry.createdAt, dlqId)
      .exec();
    return dlqId;
  }

  async getDlq(dlqId: string): Promise<DlqEntry | undefined> {
    const text = await this.redis.hget(K.dlq, dlqId);
    return text ? (JSON.parse(text) as DlqEntry) : undefined;
  }

  /** All entries, newest first (the local DLQ is small; filters run in memory). */
  async listDlq(): Promise<DlqEntry[]> {
    const ids = await this.redis.zrevrange(K.dlqOrder, 0, -1);
    if (ids.length === 0) return [];
    const texts = await this.redis.hmget(K.dlq, ...ids);
    return texts.filter((t): t is string => t !== null).map((t) => JSON.parse(t) as DlqEntry);
  }

  async deleteDlq(entries: DlqEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const ids = entries.map((e) => e.dlqId);
    const [[, deleted]] = (await this.redis
      .multi()
      .hdel(K.dlq, ...ids)
      .zrem(K.dlqOrder, ...ids)
      .hdel(K.dlqByMessage, ...entries.map((e) => String(e.message.messageId)))
      .exec())!;
    return deleted as number;
  }

  // --- schedules
  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    const text = await this.redis.hget(K.schedules, id);
    return text ? (JSON.parse(text) as ScheduleRecord) : undefined;
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    return Object.values(await this.redis.hgetall(K.schedules))
      .map((t) => JSON.parse(t) as ScheduleRecord)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async putSchedule(s: ScheduleRecord): Promise<void> {
    await this.redis.hset(K.schedules, s.scheduleId, JSON.stringify(s));
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const [[, deleted]] = (await this.redis.multi().hdel(K.schedules, id).del(K.scheduleStates(id)).exec())!;
    return deleted === 1;
  }

  // lastScheduleStates: the messages of a schedule's last tick, IN_PROGRESS until SUCCESS or FAIL.
  async startScheduleRun(id: string, messageIds: string[]): Promise<void> {
    const m = this.redis.multi().del(K.scheduleStates(id));
    if (messageIds.length > 0) m.hset(K.scheduleStates(id), Object.fromEntries(messageIds.map((mid) => [mid, 'IN_PROGRESS'])));
    await m.exec();
  }

  /** Marks a message of the last tick done (a message of an older tick is not in the hash and stays out). */
  async scheduleMessageDone(id: string, messageId: string, state: 'SUCCESS' | 'FAIL'): Promise<void> {
    await this.redis.eval(
      "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end",
      1,
      K.scheduleStates(id),
      messageId,
      state,
    );
  }

  async scheduleStates(id: string): Promise<Record<string, string>> {
    return this.redis.hgetall(K.scheduleStates(id));
  }

  // --- event log: a capped stream; events are written in batches (one entry holds the events of
  // about 20 ms, a JSON array), so logging costs one Redis command per batch, not per event. The
  // cursor is "<entry id>.<index in the entry>".
  private pendingEvents: LogEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;

  logEvent(event: LogEvent): LogEvent {
    // Never on the delivery's critical path; a crash loses at most the last batch of the log.
    this.pendingEvents.push(event);
    this.flushTimer ??= setTimeout(() => void this.flushEvents(), EVENT_BATCH_MS);
    return event;
  }

  /** Takes back events that are still waiting for their batch (those of an add that failed). */
  withdrawEvents(events: LogEvent[]): void {
    const gone = new Set(events);
    this.pendingEvents = this.pendingEvents.filter((e) => !gone.has(e));
  }

  async flushEvents(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pendingEvents.length === 0) return;
    const batch = JSON.stringify(this.pendingEvents);
    this.pendingEvents = [];
    await this.redis.xadd(K.events, 'MAXLEN', '~', String(EVENTS_KEPT / 10), '*', 'e', batch).catch(() => undefined);
  }

  /** Events newest first, from before `cursor` (exclusive); returns the page and the next cursor. */
  async readEvents(
    cursor: string | undefined,
    count: number,
    keep: (e: LogEvent) => boolean,
  ): Promise<{ events: LogEvent[]; cursor?: string }> {
    await this.flushEvents(); // a reader sees what was logged before it asked
    const events: LogEvent[] = [];
    const [cursorEntry, cursorIndex] = cursor ? cursor.split('.') : [undefined, undefined];
    // A cursor without an index (a time, or a stream id) ends the page just before it.
    let end = cursorEntry === undefined ? '+' : cursorIndex === undefined ? `(${cursorEntry}` : cursorEntry;
    let first = true;
    for (;;) {
      const batch = await this.redis.xrevrange(K.events, end, '-', 'COUNT', 100);
      for (const [id, fields] of batch) {
        const logged = JSON.parse(fields[1]) as LogEvent[];
        // Inside the cursor's own entry, only the events older than the cursor's index.
        const from = first && cursorEntry === id && cursorIndex !== undefined ? Number(cursorIndex) - 1 : logged.length - 1;
        first = false;
        for (let i = from; i >= 0; i--) {
          if (!keep(logged[i])) continue;
          events.push(logged[i]);
          if (events.length === count) return { events, cursor: `${id}.${i}` };
        }
      }
      if (batch.length < 100) return { events };
      end = `(${batch[batch.length - 1][0]}`;
    }
  }
}
