// A DLQ retry publishes the dead message again; the configuration headers of the retry request
// override the original's, as the service documents ("pass Upstash-Retries: 0 to retry once"):
// only the settings the request names change, everything else is the original message's.
import { newId } from './ids.js';
import type { QueuedMessage } from './message.js';
import { readPublishOptions, type PublishHeaders } from './publish-options.js';

export function retriedMessage(old: QueuedMessage, h: PublishHeaders, now: number): QueuedMessage {
  // Validates every given header (a bad Upstash-Retries is a 400 before anything is published).
  const o = readPublishOptions(h);
  const given = (name: string) => h.get(name) !== undefined;
  const m: QueuedMessage = { ...old, messageId: newId('msg_'), notBefore: now, createdAt: now, retried: undefined };
  if (given('upstash-retries')) m.maxRetries = o.retries;
  if (given('upstash-retry-delay')) m.retryDelay = o.retryDelay;
  if (given('upstash-timeout')) m.timeoutMs = o.timeoutMs;
  if (given('upstash-method')) m.method = o.method;
  if (given('upstash-delay')) m.notBefore = now + o.delayMs;
  if (o.notBeforeMs !== undefined) m.notBefore = o.notBeforeMs;
  if (given('upstash-callback')) m.callback = o.callback;
  if (given('upstash-failure-callback')) m.failureCallback = o.failureCallback;
  if (given('upstash-label')) m.labels = o.labels.length ? o.labels : undefined;
  if (o.flowControl) m.flowControl = o.flowControl;
  if (given('upstash-redact-fields')) m.redact = o.redact;
  const forwarded = h.prefixed('Upstash-Forward-');
  if (Object.keys(forwarded).length > 0) {
    // A forwarded header replaces the original's of the same name (names compared without case).
    const names = new Set(Object.keys(forwarded).map((n) => n.toLowerCase()));
    m.header = { ...Object.fromEntries(Object.entries(old.header).filter(([n]) => !names.has(n.toLowerCase()))), ...forwarded };
  }
  return m;
}
