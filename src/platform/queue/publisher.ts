// Publishing: a request (publish, enqueue, batch item, webhook, schedule tick) becomes one message
// per endpoint: destination resolved (URL or URL group with its default headers), options read,
// deduplication ids claimed, the budget charged, and the jobs persisted before the answer.
import { createHash } from 'node:crypto';
import type { Billing } from '../account/billing.js';
import type { Engine } from './engine.js';
import { badRequest, notFound, QueueError } from './errors.js';
import { newId } from './ids.js';
import type { QueuedMessage } from './message.js';
import { checkUrl, PublishHeaders, readPublishOptions, type PublishOptions } from './publish-options.js';
import type { QueueRecords } from './records.js';
import type { WorkflowRuns } from './workflow-runs.js';

export interface PublishRequest {
  /** A destination URL or a URL group name. */
  destination: string;
  /** Request headers in original case. */
  headers: Array<[string, string]>;
  query?: URLSearchParams;
  body: Buffer;
  callerIp: string;
  queueName?: string;
  scheduleId?: string;
}

export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated?: boolean;
}

export interface Published {
  group: boolean;
  results: PublishResult[];
}

/** A publish checked and built, not yet persisted. */
export interface Prepared {
  group: boolean;
  messages: QueuedMessage[];
  dedupKey?: string;
  queueName?: string;
  /** Upstash-Retries was given (a workflow step without it takes its run's retries). */
  retriesGiven?: boolean;
}

export class Publisher {
  constructor(
    private readonly records: QueueRecords,
    private readonly engine: Engine,
    private readonly billing: Billing,
    private readonly workflows?: WorkflowRuns,
  ) {}

  /** `group` tells whether the answer is an array (URL group) or one object (URL). */
  async publish(req: PublishRequest): Promise<Published> {
    return (await this.commit([await this.prepare(req)]))[0];
  }

  /**
   * Everything that can refuse a publish, without side effects: destination resolved, options
   * read, one message per endpoint built. A batch prepares all its items before committing any.
   */
  async prepare(req: PublishRequest): Promise<Prepared> {
    const isUrl = /^https?:\/\//i.test(req.destination);
    let endpoints: Array<{ name?: string; url: string }>;
    let topicName: string | undefined;
    let defaults: Record<string, string[]> | undefined;
    if (isUrl || /[:/.]/.test(req.destination)) {
      checkUrl(req.destination);
      endpoints = [{ url: req.destination }];
    } else {
      const group = await this.records.getGroup(req.destination);
      if (!group)
        throw notFound(
          `topic ${req.destination} not found: create it with POST /v2/topics/${req.destination}/endpoints, or publish to a URL (http:// or https://)`,
        );
      endpoints = group.endpoints;
      topicName = group.name;
      defaults = group.headers;
    }
    const options = readPublishOptions(new PublishHeaders(req.headers, req.query, defaults));
    const queueName = req.queueName;
    if (queueName !== undefined) checkQueueName(queueName);
    const now = Date.now();
    const notBefore = options.notBeforeMs ?? now + options.delayMs;
    const bodyBase64 = req.body.toString('base64');
    const messages = endpoints.map((endpoint): QueuedMessage => ({
      messageId: newId('msg_'),
      kind: 'message',
      url: endpoint.url,
      method: options.method,
      header: options.header,
      bodyBase64,
      maxRetries: options.retries,
      retryDelay: options.retryDelay,
      timeoutMs: options.timeoutMs,
      notBefore,
      createdAt: now,
      callerIp: req.callerIp,
      ...(topicName ? { topicName } : {}),
      ...(endpoint.name ? { endpointName: endpoint.name } : {}),
      ...(queueName ? { queueName } : {}),
      ...(req.scheduleId ? { scheduleId: req.scheduleId } : {}),
      ...(options.labels.length ? { labels: options.labels } : {}),
      ...(options.callback ? { callback: options.callback } : {}),
      ...(options.failureCallback ? { failureCallback: options.failureCallback } : {}),
      ...(options.flowControl ? { flowControl: options.flowControl } : {}),
      ...(options.redact ? { redact: options.redact } : {}),
      ...(options.workflow ? { workflow: options.workflow } : {}),
    }));
    const dedupKey = deduplicationKey(options, req.destination, options.header, req.body);
    return {
      group: topicName !== undefined,
      messages,
      ...(dedupKey ? { dedupKey } : {}),
      ...(queueName ? { queueName } : {}),
      retriesGiven: options.retriesGiven,
    };
  }

  /**
   * Claims the deduplication ids, charges the budget and persists every message of the prepared
   * publishes at once; on any failure nothing is kept (the claimed ids are freed, so the client's
   * retry is not taken for a duplicate). A duplicate answers the first publish's messages.
   */
  async commit(items: Prepared[]): Promise<Published[]> {
    const answers: Published[] = [];
    const fresh: QueuedMessage[] = [];
    const freshItems: Prepared[] = [];
    const claimed: string[] = [];
    try {
      for (const it of items) {
        const results = it.messages.map((m) => ({ messageId: m.messageId, url: m.url }));
        if (it.dedupKey) {
          const holder = await this.records.claimDeduplicationId(it.dedupKey, JSON.stringify(results));
          if (holder !== undefined) {
            answers.push({ group: it.group, results: earlierResults(holder, results) });
            continue;
          }
          claimed.push(it.dedupKey);
        }
        fresh.push(...it.messages);
        freshItems.push(it);
        answers.push({ group: it.group, results });
      }
      // Workflow runs: a trigger creates its run, a step of an ended run is refused (before any charge).
      if (this.workflows) for (const it of freshItems) await this.workflows.admit(it.messages, it.retriesGiven ?? false);
      const refused = await this.billing.charge(fresh.length);
      if (refused) throw new QueueError(402, refused);
      for (const name of new Set(fresh.map((m) => m.queueName).filter((q): q is string => q !== undefined))) await this.ensureQueue(name);
      await this.engine.add(fresh);
    } catch (err) {
      await Promise.all(claimed.map((k) => this.records.releaseDeduplicationId(k)));
      throw err;
    }
    return answers;
  }

  /** Enqueueing to an unknown queue creates it with parallelism 1, as the service does. */
  private async ensureQueue(name: string): Promise<void> {
    if (await this.records.getQueue(name)) return;
    const now = Date.now();
    const q = { name, createdAt: now, updatedAt: now, parallelism: 1, paused: false };
    await this.records.putQueue(q);
    await this.engine.openNamedQueue(q);
  }
}

export function checkQueueName(name: string): void {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
    throw badRequest(`invalid queue name '${name}': use letters, digits, '-', '_' and '.' (at most 100)`);
  }
}

/**
 * A deduplication id is the account's, not a URL's (the same id to another destination is a
 * duplicate too). Content-based deduplication hashes what the service documents: the destination
 * as published to (a URL or a group name), the body, and the headers (Content-Type and the
 * forwarded ones); not the method.
 */
function deduplicationKey(
  options: PublishOptions,
  destination: string,
  header: Record<string, string[]>,
  body: Buffer,
): string | undefined {
  if (options.deduplicationId) return `id|${options.deduplicationId}`;
  if (!options.contentBasedDeduplication) return undefined;
  const headers = Object.entries(header)
    .map(([k, v]) => [k.toLowerCase(), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return (
    'content|' +
    createHash('sha256').update(destination).update('\0').update(JSON.stringify(headers)).update('\0').update(body).digest('base64url')
  );
}

/** The first publish's answer kept with its deduplication id (an older record holds a bare message id). */
function earlierResults(holder: string, fresh: PublishResult[]): PublishResult[] {
  let earlier: PublishResult[];
  try {
    earlier = JSON.parse(holder) as PublishResult[];
  } catch {
    earlier = [{ messageId: holder, url: fresh[0].url }];
  }
  return earlier.map((r) => ({ ...r, deduplicated: true }));
}
