// The state the queue keeps for Upstash Workflow runs (the @upstash/workflow SDK drives a run; the
// service keeps its step list): a run record, its steps as delivered, and the waiters of
// waitForEvent. The SDK publishes every step result to the workflow URL with Upstash-Workflow-*
// headers; the queue delivers each such message with the run's step list as the body
// (`[{messageId, body (base64), callType}]`, the initial payload first), which is how the SDK
// replays the steps done so far.
import type { Redis } from 'ioredis';
import { QueueError } from './errors.js';
import type { QueuedMessage } from './message.js';
import type { CallbackSettings, HeaderMap } from './publish-options.js';
import { readInvokeRequest, type InvokerContext } from './workflow-invoke.js';

export type RunState = 'RUN_STARTED' | 'RUN_SUCCESS' | 'RUN_FAILED' | 'RUN_CANCELED';

export interface RunRecord {
  workflowRunId: string;
  workflowUrl: string;
  createdAt: number;
  state: RunState;
  initialBodyBase64: string;
  completedAt?: number;
  /** The route function's result, as the SDK sends it when the run ends. */
  result?: string;
  /** Settings of the trigger that the run's later steps inherit (the SDK sets them on the trigger only). */
  failureCallback?: CallbackSettings;
  maxRetries: number;
  retryDelay?: string;
  labels?: string[];
  /** The message that reached the DLQ and failed the run, and its DLQ entry. */
  failedMessageId?: string;
  dlqId?: string;
  /** The run that started this one with context.invoke, resumed when this one ends. */
  invoker?: InvokerContext;
  callerIp?: string;
  flowControlKey?: string;
  /** The trigger's forwarded headers: every later step is delivered with them (the SDK sends them on the trigger only). */
  headers?: HeaderMap;
  /** The run this one was resumed or restarted from (POST /v2/workflows/dlq/resume|restart). */
  resumedFrom?: string;
}

/** One entry of the step list delivered to the workflow endpoint (and of GET /v2/workflows/runs/{id}). */
export interface RawStep {
  messageId: string;
  body: string;
  callType: string;
  createdAt: number;
}

/** The failure callback (failure function) of a failed run, as the logs and the workflow DLQ show it. */
export interface FailureFunctionRecord {
  messageId: string;
  url: string;
  state: 'CALLBACK_INPROGRESS' | 'CALLBACK_SUCCESS' | 'CALLBACK_FAIL';
  /** Its own DLQ entry, once its retries are spent. */
  dlqId?: string;
  /** The message, to send it again (POST /v2/workflows/dlq/callback/{dlqId}). */
  job: QueuedMessage;
}

/** A run waiting for an event (POST /v2/wait/{eventId}). */
export interface Waiter {
  eventId: string;
  workflowRunId: string;
  url: string;
  /** Unix seconds. */
  deadline: number;
  timeoutUrl: string;
  timeoutHeaders: HeaderMap;
  step: Record<string, unknown>;
  /** The delayed message that resumes the run with `waitTimeout: true`; cancelled by a notify. */
  timeoutMessageId: string;
  createdAt: number;
}

const K = {
  run: (id: string) => `rq:wf:run:${id}`,
  steps: (id: string) => `rq:wf:steps:${id}`,
  seen: (id: string) => `rq:wf:seen:${id}`,
  runs: 'rq:wf:runs',
  waiters: (eventId: string) => `rq:wf:waiters:${eventId}`,
  /** The events a run waits for (a cancel drops its waiters). */
  runEvents: (runId: string) => `rq:wf:events:${runId}`,
  /** A waiter's timeout message → the waiter (its delivery ends the wait). */
  timeout: (messageId: string) => `rq:wf:timeout:${messageId}`,
  /** The failure callback of a failed run: its message and state (CALLBACK_INPROGRESS, _SUCCESS, _FAIL). */
  failureFunction: (runId: string) => `rq:wf:ff:${runId}`,
  /** An event notified for a run before the run waits for it (the SDK's lookback). */
  lookback: (runId: string, eventId: string) => `rq:wf:lookback:${runId}:${eventId}`,
};

/** How long an event notified before its wait is kept for the run (choice: the service does not say). */
const LOOKBACK_S = 7 * 86_400;

export class WorkflowRuns {
  /** Called once a run ended (success, failure or cancel): resumes its invoker, if any. */
  onEnd?: (run: RunRecord) => Promise<void>;

  constructor(private readonly redis: Redis) {}

  async get(runId: string): Promise<RunRecord | undefined> {
    const raw = await this.redis.get(K.run(runId));
    return raw ? (JSON.parse(raw) as RunRecord) : undefined;
  }

  async put(run: RunRecord): Promise<void> {
    await this.redis.set(K.run(run.workflowRunId), JSON.stringify(run));
  }

  /** Runs newest first, from `before` (exclusive, ms) on. */
  async list(before: number, count: number): Promise<RunRecord[]> {
    const ids = await this.redis.zrevrangebyscore(K.runs, `(${before}`, '-inf', 'LIMIT', 0, count);
    const runs = await Promise.all(ids.map((id) => this.get(id)));
    return runs.filter((r): r is RunRecord => r !== undefined);
  }

  /**
   * Called before the messages of a publish are persisted. A trigger (`Upstash-Workflow-Init:
   * true`) creates its run; a later step must belong to a running run (else 400, which the SDK
   * reads as "the run was cancelled") and inherits the trigger's failure callback and retries.
   */
  async admit(messages: QueuedMessage[], retriesGiven: boolean): Promise<void> {
    for (const m of messages) {
      const wf = m.workflow;
      if (!wf || wf.callType !== 'step') continue;
      if (wf.init) {
        await this.create(m);
        continue;
      }
      const run = await this.get(wf.runId);
      if (!run || run.state !== 'RUN_STARTED')
        throw new QueueError(400, `workflow run ${wf.runId} is ${run ? `over (${run.state})` : 'not found'}: no step can be added`);
      if (!m.failureCallback && run.failureCallback) m.failureCallback = run.failureCallback;
      if (run.headers) m.header = withRunHeaders(run.headers, m.header);
      if (!retriesGiven) {
        m.maxRetries = run.maxRetries;
        if (!m.retryDelay && run.retryDelay) m.retryDelay = run.retryDelay;
      }
    }
  }

  private async create(m: QueuedMessage): Promise<void> {
    const wf = m.workflow!;
    // context.invoke: the body wraps the invoked run's payload and its invoker.
    let invoker: InvokerContext | undefined;
    if (wf.invoke) {
      const request = readInvokeRequest(m.bodyBase64);
      m.bodyBase64 = request.payload.toString('base64');
      invoker = request.invoker;
    }
    const run: RunRecord = {
      workflowRunId: wf.runId,
      workflowUrl: wf.url || m.url,
      createdAt: m.createdAt,
      state: 'RUN_STARTED',
      initialBodyBase64: m.bodyBase64,
      maxRetries: m.maxRetries,
      ...(m.retryDelay ? { retryDelay: m.retryDelay } : {}),
      ...(m.failureCallback ? { failureCallback: m.failureCallback } : {}),
      ...(m.labels?.length ? { labels: m.labels } : {}),
      ...(invoker ? { invoker } : {}),
      callerIp: m.callerIp,
      headers: m.header,
      ...(m.flowControl ? { flowControlKey: m.flowControl.key } : {}),
    };
    const created = await this.redis.set(K.run(wf.runId), JSON.stringify(run), 'NX');
    if (created !== 'OK') throw new QueueError(400, `workflow run ${wf.runId} already exists: use another workflowRunId`);
    await this.redis.zadd(K.runs, run.createdAt, wf.runId);
    await this.record(wf.runId, { messageId: m.messageId, body: m.bodyBase64, callType: 'step', createdAt: m.createdAt });
  }

  /** Adds a step the first time its message is delivered (a retry does not add it twice). */
  private async record(runId: string, step: RawStep): Promise<void> {
    if ((await this.redis.sadd(K.seen(runId), step.messageId)) === 1) await this.redis.rpush(K.steps(runId), JSON.stringify(step));
  }

  async steps(runId: string): Promise<RawStep[]> {
    return (await this.redis.lrange(K.steps(runId), 0, -1)).map((s) => JSON.parse(s) as RawStep);
  }

  /**
   * What a workflow message's delivery carries instead of its own body and headers: undefined for
   * a message outside any run, `skip` when its run is over (cancelled, failed or finished).
   */
  async delivery(m: QueuedMessage): Promise<{ body?: Buffer; headers: Record<string, string> } | 'skip' | undefined> {
    const wf = m.workflow;
    if (!wf || wf.callType === 'toCallback') return undefined;
    const run = await this.get(wf.runId);
    const headers: Record<string, string> = {
      'Upstash-Workflow-RunId': wf.runId,
      'Upstash-Workflow-Url': run?.workflowUrl ?? wf.url,
      ...(run ? { 'Upstash-Workflow-CreatedAt': String(run.createdAt) } : {}),
    };
    if (wf.callType !== 'step') return { headers };
    if (!run || run.state !== 'RUN_STARTED') return 'skip';
    await this.timedOut(m.messageId);
    await this.record(wf.runId, { messageId: m.messageId, body: m.bodyBase64, callType: 'step', createdAt: Date.now() });
    const steps = await this.steps(wf.runId);
    const upTo = steps.findIndex((s) => s.messageId === m.messageId);
    return { body: Buffer.from(JSON.stringify(steps.slice(0, upTo + 1))), headers };
  }

  /** A step that reached the DLQ fails its run (its failure callback, if any, is on its way); a failed failure callback is CALLBACK_FAIL. */
  async fail(m: QueuedMessage, dlqId: string): Promise<void> {
    if (m.workflow?.callType === 'failureCall') return this.failureCallbackDone(m, 'CALLBACK_FAIL', dlqId);
    if (m.workflow?.callType !== 'step') return;
    await this.end(m.workflow.runId, 'RUN_FAILED', { failedMessageId: m.messageId, dlqId });
  }

  /** Ends a running run; false when it is unknown or already over. */
  async end(runId: string, state: RunState, extra: Partial<RunRecord> = {}): Promise<boolean> {
    const run = await this.get(runId);
    if (!run || run.state !== 'RUN_STARTED') return false;
    const ended: RunRecord = { ...run, ...extra, state, completedAt: Date.now() };
    await this.put(ended);
    await this.onEnd?.(ended);
    return true;
  }

  /**
   * A new run copied from a failed one (resume or restart from the DLQ): same URL, payload and
   * headers, the given settings, and the steps done so far that it keeps (none for a restart).
   */
  async copy(
    from: RunRecord,
    fields: Partial<RunRecord> & { workflowRunId: string; createdAt: number },
    kept: RawStep[],
  ): Promise<RunRecord> {
    const { completedAt: _c, result: _r, failedMessageId: _f, dlqId: _d, invoker: _i, ...base } = from;
    const run: RunRecord = { ...base, ...fields, state: 'RUN_STARTED', resumedFrom: from.workflowRunId };
    if ((await this.redis.set(K.run(run.workflowRunId), JSON.stringify(run), 'NX')) !== 'OK')
      throw new QueueError(400, `workflow run ${run.workflowRunId} already exists`);
    await this.redis.zadd(K.runs, run.createdAt, run.workflowRunId);
    for (const step of kept) await this.record(run.workflowRunId, step);
    return run;
  }

  // --- failure function (the failure callback of a failed run)
  async failureCallbackSent(m: QueuedMessage): Promise<void> {
    if (!m.workflow) return;
    const rec: FailureFunctionRecord = { messageId: m.messageId, url: m.url, state: 'CALLBACK_INPROGRESS', job: m };
    await this.redis.set(K.failureFunction(m.workflow.runId), JSON.stringify(rec));
  }

  async failureCallbackDone(m: QueuedMessage, state: 'CALLBACK_SUCCESS' | 'CALLBACK_FAIL', dlqId?: string): Promise<void> {
    const rec = m.workflow && (await this.failureFunction(m.workflow.runId));
    if (!rec || rec.messageId !== m.messageId) return;
    await this.redis.set(K.failureFunction(m.workflow!.runId), JSON.stringify({ ...rec, state, ...(dlqId ? { dlqId } : {}) }));
  }

  async failureFunction(runId: string): Promise<FailureFunctionRecord | undefined> {
    const raw = await this.redis.get(K.failureFunction(runId));
    return raw ? (JSON.parse(raw) as FailureFunctionRecord) : undefined;
  }

  // --- waitForEvent
  async addWaiter(w: Waiter): Promise<void> {
    await this.redis.hset(K.waiters(w.eventId), waiterField(w), JSON.stringify(w));
    await this.redis.sadd(K.runEvents(w.workflowRunId), w.eventId);
    await this.redis.set(K.timeout(w.timeoutMessageId), JSON.stringify([w.eventId, waiterField(w)]));
  }

  /** A waiter's timeout message is delivered: the waiter leaves its event (a later notify finds nobody). */
  private async timedOut(messageId: string): Promise<void> {
    const raw = await this.redis.getdel(K.timeout(messageId));
    if (!raw) return;
    const [eventId, field] = JSON.parse(raw) as [string, string];
    await this.redis.hdel(K.waiters(eventId), field);
  }

  /** Drops every waiter of a run (cancelled); returns them, so their timeout messages can be cancelled. */
  async dropWaiters(runId: string): Promise<Waiter[]> {
    const dropped: Waiter[] = [];
    for (const eventId of await this.redis.smembers(K.runEvents(runId)))
      for (const w of await this.waiters(eventId)) if (w.workflowRunId === runId && (await this.takeWaiter(w))) dropped.push(w);
    await this.redis.del(K.runEvents(runId));
    return dropped;
  }

  async waiters(eventId: string): Promise<Waiter[]> {
    return Object.values(await this.redis.hgetall(K.waiters(eventId))).map((v) => JSON.parse(v) as Waiter);
  }

  /** Keeps an event notified for a run that does not wait for it yet (only for a running run). */
  async keepForLater(runId: string, eventId: string, data: Buffer): Promise<boolean> {
    const run = await this.get(runId);
    if (!run || run.state !== 'RUN_STARTED') return false;
    await this.redis.set(K.lookback(runId, eventId), data, 'EX', LOOKBACK_S);
    return true;
  }

  /** The event kept for the run, taken (once). */
  async takeKept(runId: string, eventId: string): Promise<Buffer | undefined> {
    return (await this.redis.getdelBuffer(K.lookback(runId, eventId))) ?? undefined;
  }

  /** Takes a waiter off its event; false when another notify (or its timeout) took it first. */
  async takeWaiter(w: Waiter): Promise<boolean> {
    const taken = (await this.redis.hdel(K.waiters(w.eventId), waiterField(w))) === 1;
    if (taken) await this.redis.del(K.timeout(w.timeoutMessageId));
    return taken;
  }
}

/** The run's headers under the step's own (a name the step sets itself wins, compared without case). */
function withRunHeaders(run: HeaderMap, own: HeaderMap): HeaderMap {
  const names = new Set(Object.keys(own).map((n) => n.toLowerCase()));
  return { ...Object.fromEntries(Object.entries(run).filter(([n]) => !names.has(n.toLowerCase()))), ...own };
}

const waiterField = (w: Waiter) => `${w.workflowRunId}|${w.timeoutMessageId}`;
