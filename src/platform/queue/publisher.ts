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

export class Publisher {
  constructor(
    private readonly records: QueueRecords,
    private readonly engine: Engine,
    private readonly billing: Billing,
  ) {}

  /** `group` tells whether the answer is an array (URL group) or one object (URL). */
  async publish(req: PublishRequest): Promise<{ group: boolean; results: PublishResult[] }> {
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

    const results: PublishResult[] = [];
    const fresh: QueuedMessage[] = [];
    const claimed: string[] = [];
    try {
      for (const endpoint of endpoints) {
        const message: QueuedMessage = {
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
        };
        const dedupKey = deduplicationKey(options, message, req.body);
        if (dedupKey) {
          const holder = await this.records.claimDeduplicationId(dedupKey, message.messageId);
          if (holder) {
            results.push({ messageId: holder, url: endpoint.url, deduplicated: true });
            continue;
          }
          claimed.push(dedupKey);
        }
        fresh.push(message);
        results.push({ messageId: message.messageId, url: endpoint.url });
      }
      const refused = await this.billing.charge(fresh.length);
      if (refused) throw new QueueError(402, refused);
      if (queueName !== undefined) await this.ensureQueue(queueName);
      await this.engine.add(fresh);
    } catch (err) {
      // Not acknowledged: free the deduplication ids so the client's retry is not taken for a duplicate.
      await Promise.all(claimed.map((k) => this.records.releaseDeduplicationId(k)));
      throw err;
    }
    for (const m of fresh) this.engine.event(m, 'CREATED');
    return { group: topicName !== undefined, results };
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

function deduplicationKey(options: PublishOptions, m: QueuedMessage, body: Buffer): string | undefined {
  if (options.deduplicationId) return `${options.deduplicationId}|${m.url}`;
  if (!options.contentBasedDeduplication) return undefined;
  return (
    'content|' +
    createHash('sha256')
      .update(m.url)
      .update('\0')
      .update(m.method)
      .update('\0')
      .update(JSON.stringify(m.header))
      .update('\0')
      .update(body)
      .digest('base64url')
  );
}
