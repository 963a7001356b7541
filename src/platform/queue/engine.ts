// The durable delivery engine on BullMQ: one job per message (its id is the message id), delays as
// job delays, retries as job attempts with the service's backoff, named queues as BullMQ queues
// whose worker concurrency is the queue's parallelism. A job is added before a publish is
// acknowledged, so a restart loses nothing; completed jobs are removed, so nothing completed is
// delivered twice. Callbacks and failure callbacks are messages too: signed, retried, charged.
import { DelayedError, Job, Queue, Worker, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Logger } from '../../logger.js';
import type { Billing } from '../account/billing.js';
import { Deliverer, type AttemptOutcome, type EndpointResponse } from './delivery.js';
import type { FlowControl } from './flow-control.js';
import { newDlqId } from './ids.js';
import { flatHeaders, logFields, messageView, type QueuedMessage } from './message.js';
import type { NamedQueue, QueueRecords, LogEvent } from './records.js';
import { defaultBackoffMs, retryDelayMs } from './retry-delay.js';
import type { Signer } from './signer.js';
import type { WorkflowRuns } from './workflow-runs.js';

export const BULL_PREFIX = 'respgate:bull';
const DEFAULT_QUEUE = 'deliveries';
const namedQueueKey = (name: string) => `named-${name}`;
const CANCELLED = (id: string) => `rq:cancelled:${id}`;
/** How long a stop waits for the deliveries in flight. */
const STOP_GRACE_MS = 5000;
/**
 * A message held by its flow-control key sleeps as a delayed job: a freed slot (reserved for it), a
 * resume, a pin or a reset wakes it at once; this recheck wakes it anyway (a slot freed by the expired
 * lease of a crashed process, a wake that could not find the job).
 */
const FLOW_RECHECK_MS = 5000;
/** A message holding its queue slot looks this often whether it was cancelled by another process. */
const HOLD_CHECK_MS = 1000;

export interface EngineDeps {
  connection: ConnectionOptions;
  records: QueueRecords;
  signer: Signer;
  deliverer: Deliverer;
  billing: Billing;
  flow: FlowControl;
  log: Logger;
  /** Multiplies the default backoff (development: 0.001 turns 12 s into 12 ms). */
  backoffScale: number;
  concurrency: number;
  /** Upstash Workflow runs: step lists delivered, runs failed (workflow-runs.ts). */
  workflows?: WorkflowRuns;
}

/** A failed attempt that will be retried after `delayMs` (read by the backoff strategy). */
class DeliveryFailure extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

export class Engine {
  private readonly queues = new Map<string, Queue>();
  private readonly workers = new Map<string, Worker>();
  /** Delivery attempts running now (a stop waits for them, briefly). */
  private inFlight = 0;
  /** Named-queue messages waiting for their next attempt in their slot: waking one ends its wait early. */
  private readonly holds = new Map<string, () => void>();
  private stopping = false;

  constructor(private readonly deps: EngineDeps) {}

  async start(namedQueues: NamedQueue[]): Promise<void> {
    this.open(DEFAULT_QUEUE, this.deps.concurrency);
    for (const q of namedQueues) await this.openNamedQueue(q);
  }

  private open(key: string, concurrency: number): Queue {
    let queue = this.queues.get(key);
    if (queue) return queue;
    queue = new Queue(key, { connection: this.deps.connection, prefix: BULL_PREFIX });
    queue.on('error', (err) => this.deps.log.warn({ err: String(err) }, 'queue engine: redis error'));
    this.queues.set(key, queue);
    const worker = new Worker(key, (job: Job<QueuedMessage>, token?: string) => this.process(job, token), {
      connection: this.deps.connection,
      prefix: BULL_PREFIX,
      concurrency,
      maxStalledCount: 10,
      settings: { backoffStrategy: (_attempts: number, _type?: string, err?: Error) => (err instanceof DeliveryFailure ? err.delayMs : 0) },
    });
    worker.on('error', (err) => this.deps.log.warn({ err: String(err) }, 'queue engine: worker error'));
    this.workers.set(key, worker);
    return queue;
  }

  /** Opens (or updates) a named queue: parallelism = concurrency of its worker; paused = BullMQ pause. */
  async openNamedQueue(q: NamedQueue): Promise<void> {
    const key = namedQueueKey(q.name);
    const queue = this.open(key, q.parallelism);
    this.workers.get(key)!.concurrency = q.parallelism;
    if (q.paused) await queue.pause();
    else await queue.resume();
  }

  async deleteNamedQueue(name: string): Promise<void> {
    const key = namedQueueKey(name);
    const worker = this.workers.get(key);
    const queue = this.queues.get(key) ?? new Queue(key, { connection: this.deps.connection, prefix: BULL_PREFIX });
    // Its messages leave the wait lists of their flow-control keys too; one holding its slot for a
    // retry is cancelled (the forced close below does not stop a processor that is waiting).
    await worker?.close(true);
    for (const job of (await queue.getJobs(['waiting', 'delayed', 'paused', 'prioritized', 'active'])) as Job<QueuedMessage>[]) {
      if (!job) continue;
      if (job.data.flowControl) await this.deps.flow.forget(job.data.flowControl.key, job.data.messageId);
      if (await job.isActive()) {
        await this.deps.records.redis.set(CANCELLED(job.data.messageId), '1', 'EX', 86_400);
        this.holds.get(job.data.messageId)?.();
      }
    }
    await queue.obliterate({ force: true });
    await queue.close();
    this.workers.delete(key);
    this.queues.delete(key);
  }

  /** Messages waiting in a named queue (its lag). */
  async lag(name: string): Promise<number> {
    const queue = this.queues.get(namedQueueKey(name));
    return queue ? queue.getJobCountByTypes('waiting', 'paused', 'prioritized', 'delayed') : 0;
  }

  /**
   * Queues new messages and logs their CREATED events. The events are logged first: a worker of this
   * process may deliver a message before the add's own reply arrives, and its DELIVERED must not come
   * before its CREATED in the log. If the add fails, the events not yet flushed are taken back.
   */
  async add(messages: QueuedMessage[]): Promise<void> {
    const created = messages.map((m) => this.event(m, 'CREATED'));
    try {
      await this.enqueue(messages);
    } catch (err) {
      this.deps.records.withdrawEvents(created);
      throw err;
    }
  }

  /** Persists the messages as jobs; resolves once Redis has them. */
  private async enqueue(messages: QueuedMessage[]): Promise<void> {
    const now = Date.now();
    // The key's configuration first, so the first attempt is already held to the new limits.
    for (const m of messages) if (m.flowControl) await this.deps.flow.register(m.flowControl, m.messageId, m.notBefore <= now, now);
    const byQueue = new Map<string, QueuedMessage[]>();
    for (const m of messages) {
      const key = m.queueName ? namedQueueKey(m.queueName) : DEFAULT_QUEUE;
      (byQueue.get(key) ?? byQueue.set(key, []).get(key)!).push(m);
    }
    await Promise.all(
      [...byQueue].map(([key, list]) => {
        const queue = this.queues.get(key) ?? this.open(key, 1);
        return list.length === 1
          ? queue.add(list[0].kind, list[0], this.jobOptions(list[0], now))
          : queue.addBulk(list.map((m) => ({ name: m.kind, data: m, opts: this.jobOptions(m, now) })));
      }),
    );
  }

  private jobOptions(m: QueuedMessage, now: number): JobsOptions {
    return {
      jobId: m.messageId,
      delay: Math.max(0, m.notBefore - now),
      attempts: m.maxRetries + 1,
      backoff: { type: 'upstash' },
      removeOnComplete: true,
      // A job only fails for an internal error (Redis gone while writing the DLQ); keep those to inspect.
      removeOnFail: 1000,
    };
  }

  async findJob(messageId: string): Promise<Job<QueuedMessage> | undefined> {
    for (const queue of this.queues.values()) {
      const job = (await queue.getJob(messageId)) as Job<QueuedMessage> | undefined;
      if (job && !(await job.isCompleted()) && !(await job.isFailed())) return job;
    }
    return undefined;
  }

  /** Every pending message (waiting, delayed, in flight), for filtered bulk operations. */
  async pending(): Promise<Job<QueuedMessage>[]> {
    const all: Job<QueuedMessage>[] = [];
    for (const queue of this.queues.values()) {
      all.push(
        ...((await queue.getJobs(['waiting', 'delayed', 'paused', 'prioritized', 'active', 'waiting-children'])) as Job<QueuedMessage>[]),
      );
    }
    return all.filter(Boolean);
  }

  /** Pending messages by BullMQ state ('active', 'waiting', 'delayed', …), at most `limit` a state (the web console's list). */
  async pendingByState(limit: number): Promise<{ state: string; job: Job<QueuedMessage> }[]> {
    const out: { state: string; job: Job<QueuedMessage> }[] = [];
    for (const state of ['active', 'waiting', 'prioritized', 'paused', 'delayed'] as const)
      for (const queue of this.queues.values())
        for (const job of (await queue.getJobs([state], 0, limit - 1, true)) as Job<QueuedMessage>[]) if (job) out.push({ state, job });
    return out;
  }

  /** How many messages each BullMQ state holds, summed over every queue (the web console's queue depth). */
  async jobCounts(): Promise<Record<string, number>> {
    const sum: Record<string, number> = {};
    for (const queue of this.queues.values())
      for (const [state, n] of Object.entries(await queue.getJobCounts('active', 'waiting', 'prioritized', 'paused', 'delayed')))
        sum[state] = (sum[state] ?? 0) + n;
    return sum;
  }

  /** Cancels a pending message: removed, or (when in flight) no retry after this attempt. */
  async cancel(job: Job<QueuedMessage>): Promise<void> {
    try {
      await job.remove();
      // Not in flight: off its key's wait list (and a slot reserved for it is free again).
      if (job.data.flowControl) await this.deps.flow.forget(job.data.flowControl.key, job.data.messageId);
    } catch {
      // In flight (or holding its queue slot): honoured when the attempt ends, logged CANCELLED then.
      this.event(job.data, 'CANCEL_REQUESTED');
      await this.deps.records.redis.set(CANCELLED(job.data.messageId), '1', 'EX', 86_400);
      this.holds.get(job.data.messageId)?.();
      return;
    }
    this.event(job.data, 'CANCEL_REQUESTED');
    this.event(job.data, 'CANCELLED');
  }

  /** Deliveries in flight in this process (GET /v2/globalParallelism). */
  get deliveriesInFlight(): number {
    return this.inFlight;
  }

  // --- one delivery attempt of one message
  private async process(job: Job<QueuedMessage>, token?: string): Promise<void> {
    const fc = job.data.flowControl;
    if (fc) {
      const verdict = await this.deps.flow.acquire(fc.key, job.data.messageId, job.data.timeoutMs, job.timestamp);
      if (!verdict.granted) {
        // Held by its key: back to sleep as a delayed job (not an attempt: attemptsMade is unchanged).
        const wakeAt = verdict.retryAt ?? Date.now() + FLOW_RECHECK_MS;
        await job.moveToDelayed(wakeAt, token);
        // A slot reserved for this job while it was being put to sleep could not wake it: look once more.
        await this.wake(fc.key, await this.deps.flow.release(fc.key, '', job.data.messageId));
        throw new DelayedError();
      }
    }
    this.inFlight++;
    try {
      if (job.queueName === DEFAULT_QUEUE) await this.attempt(job);
      else await this.attemptInOrder(job, token);
    } finally {
      this.inFlight--;
      if (fc) await this.wake(fc.key, await this.deps.flow.release(fc.key, job.data.messageId));
    }
  }

  /**
   * A named queue is FIFO, as the service's: a message waiting for its next attempt keeps its slot
   * (its worker waits here instead of sleeping as a delayed job), so with parallelism 1 nothing
   * later is delivered until it succeeded or reached the DLQ. A cancel ends the wait; a stop puts
   * the job back as a delayed job for the rest of its wait (its attempts so far kept in its data).
   */
  private async attemptInOrder(job: Job<QueuedMessage>, token?: string): Promise<void> {
    for (;;) {
      try {
        return await this.attempt(job);
      } catch (err) {
        if (!(err instanceof DeliveryFailure)) throw err;
        const wakeAt = Date.now() + err.delayMs;
        await job.updateData({ ...job.data, retried: (job.data.retried ?? 0) + 1 });
        const why = await this.hold(job.data.messageId, wakeAt);
        if (why === 'cancelled') return void this.event(job.data, 'CANCELLED');
        if (why === 'stopping') {
          await job.moveToDelayed(wakeAt, token);
          throw new DelayedError();
        }
      }
    }
  }

  /** Waits until `wakeAt`, a cancel of the message (seen here or in Redis) or a stop, whichever comes first. */
  private async hold(messageId: string, wakeAt: number): Promise<'due' | 'cancelled' | 'stopping'> {
    while (Date.now() < wakeAt) {
      if (this.stopping) return 'stopping';
      if (await this.deps.records.redis.get(CANCELLED(messageId))) return 'cancelled';
      const wait = Math.min(HOLD_CHECK_MS, wakeAt - Date.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.holds.set(messageId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.holds.delete(messageId);
    }
    return this.stopping ? 'stopping' : 'due';
  }

  /** Wakes waiting messages of a key now (each is a delayed job in one of our queues). */
  async wake(key: string, messageIds: string[]): Promise<void> {
    for (const id of messageIds) {
      let job: Job<QueuedMessage> | undefined;
      for (const queue of this.queues.values()) if ((job = (await queue.getJob(id)) as Job<QueuedMessage> | undefined)) break;
      // Gone without passing the gate (its queue deleted, a publish not acknowledged): off the wait list.
      if (!job) await this.deps.flow.forget(key, id);
      // Not delayed (already woken, or in flight): nothing to do.
      else await job.promote().catch(() => undefined);
    }
  }

  private async attempt(job: Job<QueuedMessage>): Promise<void> {
    const m = job.data;
    // Attempts of a named-queue message are counted in its data (it retries in its slot, not as a BullMQ attempt).
    const retried = job.attemptsMade + (m.retried ?? 0);
    let body: Buffer = Buffer.from(m.bodyBase64, 'base64');
    // A workflow step is delivered with its run's step list (and the run's headers); one of a run that is over is dropped.
    const wf = await this.deps.workflows?.delivery(m);
    if (wf === 'skip') return void this.event(m, 'CANCELLED');
    if (wf?.body) body = wf.body;
    this.event(m, 'ACTIVE');
    const headers = { ...this.deliveryHeaders(m, retried, body), ...wf?.headers };
    const outcome = await this.deps.deliverer.attempt(m.url, m.method, headers, body, m.timeoutMs);
    const status = outcome.response?.status;
    if (status !== undefined && status >= 200 && status < 300) {
      if (m.callback) await this.publishCallback(m, 'callback', outcome, retried);
      if (m.workflow?.callType === 'failureCall') await this.deps.workflows?.failureCallbackDone(m, 'CALLBACK_SUCCESS');
      this.event(m, 'DELIVERED', { responseStatus: status });
      if (m.scheduleId) await this.deps.records.scheduleMessageDone(m.scheduleId, m.messageId, 'SUCCESS');
      return;
    }
    if (m.callback && outcome.response) await this.publishCallback(m, 'callback', outcome, retried);
    const error = outcome.error ?? `the endpoint answered with status ${status}`;
    const nonRetryable = status === 489 && header(outcome.response, 'upstash-nonretryable-error') === 'true';
    const failed = { error, ...responseFields(outcome.response) };
    if (!nonRetryable && retried < m.maxRetries) {
      const delayMs = this.retryDelay(m, retried + 1, outcome.response);
      this.event(m, 'ERROR', failed);
      if (await this.deps.records.redis.get(CANCELLED(m.messageId))) return void this.event(m, 'CANCELLED');
      this.event(m, 'RETRY', { nextDeliveryTime: Date.now() + delayMs });
      throw new DeliveryFailure(error, delayMs);
    }
    this.event(m, 'ERROR', failed);
    // Retries exhausted (or refused by the endpoint): dead letter queue, then the failure callback.
    const response = outcome.response;
    const bodyText = response?.body.toString('utf8');
    const textual = response !== undefined && Buffer.from(bodyText!, 'utf8').equals(response.body);
    const dlqId = await this.deps.records.addToDlq(
      m.messageId,
      {
        message: messageView(m),
        job: m,
        responseStatus: status,
        responseHeader: response?.headers,
        ...(response ? (textual ? { responseBody: bodyText } : { responseBodyBase64: response.body.toString('base64') }) : {}),
        createdAt: Date.now(),
      },
      newDlqId(),
    );
    if (m.scheduleId) await this.deps.records.scheduleMessageDone(m.scheduleId, m.messageId, 'FAIL');
    if (m.failureCallback) await this.publishCallback(m, 'failure-callback', outcome, retried, dlqId);
    await this.deps.workflows?.fail(m, dlqId);
    this.event(m, 'FAILED', { ...failed, error: nonRetryable ? `${error} (Upstash-NonRetryable-Error)` : error });
  }

  private retryDelay(m: QueuedMessage, retryNumber: number, response?: EndpointResponse): number {
    const retryAfter = retryAfterMs(response);
    if (retryAfter !== undefined) return retryAfter;
    return m.retryDelay ? retryDelayMs(m.retryDelay, retryNumber - 1) : defaultBackoffMs(retryNumber, this.deps.backoffScale);
  }

  private deliveryHeaders(m: QueuedMessage, retried: number, body: Buffer): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = {};
    for (const [name, values] of Object.entries(m.header)) h[name] = values.length === 1 ? values[0] : values;
    h['User-Agent'] = 'Upstash-QStash';
    h['Upstash-Message-Id'] = m.messageId;
    h['Upstash-Retried'] = String(retried);
    if (m.topicName) h['Upstash-Topic-Name'] = m.topicName;
    if (m.endpointName) h['Upstash-Endpoint-Name'] = m.endpointName;
    if (m.scheduleId) h['Upstash-Schedule-Id'] = m.scheduleId;
    if (m.queueName) h['Upstash-Queue-Name'] = m.queueName;
    h['Upstash-Caller-Ip'] = m.callerIp;
    h['Upstash-Signature'] = this.deps.signer.sign(m.url, body);
    return h;
  }

  /** The callback message of spec 2.5, published like any message (its id derives from the attempt, so a redone attempt does not send it twice). */
  private async publishCallback(
    m: QueuedMessage,
    kind: 'callback' | 'failure-callback',
    outcome: AttemptOutcome,
    retried: number,
    dlqId?: string,
  ): Promise<void> {
    const settings = kind === 'callback' ? m.callback! : m.failureCallback!;
    const messageId = kind === 'callback' ? `${m.messageId}_cb${retried}` : `${m.messageId}_fcb`;
    const refused = await this.deps.billing.charge(1);
    if (refused) {
      this.event(m, 'ERROR', { error: `${kind} not sent: ${refused}` });
      return;
    }
    const response = outcome.response;
    const payload = {
      status: response?.status ?? 0,
      header: response?.headers ?? {},
      body: response?.body.toString('base64') ?? '',
      retried,
      maxRetries: m.maxRetries,
      ...(dlqId ? { dlqId } : {}),
      sourceMessageId: m.messageId,
      ...(m.topicName ? { topicName: m.topicName } : {}),
      ...(m.endpointName ? { endpointName: m.endpointName } : {}),
      url: m.url,
      method: m.method,
      sourceHeader: flatHeaders(m.header),
      sourceBody: m.bodyBase64,
      notBefore: String(m.notBefore),
      createdAt: String(m.createdAt),
      ...(m.scheduleId ? { scheduleId: m.scheduleId } : {}),
      callerIP: m.callerIp,
      ...(await this.workflowFields(m, kind)),
    };
    const workflow = kind === 'callback' ? settings.workflow : (settings.workflow ?? m.workflow);
    const now = Date.now();
    const message: QueuedMessage = {
      messageId,
      kind,
      url: settings.url,
      method: settings.method,
      header: { 'Content-Type': ['application/json'], ...settings.header },
      bodyBase64: Buffer.from(JSON.stringify(payload)).toString('base64'),
      maxRetries: settings.retries,
      retryDelay: settings.retryDelay,
      timeoutMs: settings.timeoutMs,
      notBefore: now + settings.delayMs,
      createdAt: now,
      callerIp: m.callerIp,
      labels: m.labels,
      sourceMessageId: m.messageId,
      ...(workflow ? { workflow: { ...workflow, init: false, callType: kind === 'callback' ? 'fromCallback' : 'failureCall' } } : {}),
    };
    // A workflow run's failure function: its state shows in the run's logs and DLQ entry (kept before it can be delivered).
    if (kind === 'failure-callback' && m.workflow?.callType === 'step') await this.deps.workflows?.failureCallbackSent(message);
    await this.add([message]);
  }

  /** A workflow step's failure callback names its run, and its sourceBody is the run's initial payload (what the failure function reads). */
  private async workflowFields(m: QueuedMessage, kind: 'callback' | 'failure-callback'): Promise<Record<string, string>> {
    if (kind !== 'failure-callback' || m.workflow?.callType !== 'step') return {};
    const run = await this.deps.workflows?.get(m.workflow.runId);
    if (!run) return { workflowRunId: m.workflow.runId };
    return { workflowRunId: run.workflowRunId, workflowCreatedAt: String(run.createdAt), sourceBody: run.initialBodyBase64 };
  }

  event(m: QueuedMessage, state: string, extra: Partial<LogEvent> = {}): LogEvent {
    return this.deps.records.logEvent({
      time: Date.now(),
      state,
      messageId: m.messageId,
      url: m.url,
      ...(m.topicName ? { topicName: m.topicName } : {}),
      ...(m.endpointName ? { endpointName: m.endpointName } : {}),
      ...(m.queueName ? { queueName: m.queueName } : {}),
      ...(m.scheduleId ? { scheduleId: m.scheduleId } : {}),
      callerIp: m.callerIp,
      ...(m.labels?.length ? { label: m.labels[0], labels: m.labels } : {}),
      ...(m.flowControl ? { flowControlKey: m.flowControl.key } : {}),
      ...logFields(m),
      ...extra,
    });
  }

  async stop(): Promise<void> {
    // Stop taking jobs, let the attempts in flight finish for a few seconds (so a restart redoes
    // nothing half-done), then close; an attempt still running past that is abandoned: BullMQ sees
    // its job stalled and the next process redoes it (at least once).
    this.stopping = true;
    for (const wake of this.holds.values()) wake();
    await Promise.all([...this.workers.values()].map((w) => w.pause(true)));
    const deadline = Date.now() + STOP_GRACE_MS;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const abandoned = this.inFlight > 0;
    await Promise.all([...this.workers.values()].map((w) => w.close(abandoned)));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await this.deps.deliverer.close(abandoned);
  }
}

/** The response fields of a log entry of a failed attempt (none when the endpoint did not answer). */
function responseFields(response: EndpointResponse | undefined): Partial<LogEvent> {
  if (!response) return {};
  return { responseStatus: response.status, responseBody: response.body.toString('base64'), responseHeaders: response.headers };
}

function header(response: EndpointResponse | undefined, name: string): string | undefined {
  if (!response) return undefined;
  for (const [k, v] of Object.entries(response.headers)) if (k.toLowerCase() === name) return v[0];
  return undefined;
}

/** Retry-After (seconds or an HTTP date) of a failed response, capped at one day like the service. */
function retryAfterMs(response: EndpointResponse | undefined): number | undefined {
  const value = header(response, 'retry-after');
  if (value === undefined) return undefined;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.min(86_400_000, Math.max(0, Math.round(seconds * 1000))) : undefined;
}
