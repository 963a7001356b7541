// A message as the engine keeps it (the data of its BullMQ job) and as the API shows it.
import type { FlowControlSetting } from './flow-control-value.js';
import type { CallbackSettings, HeaderMap, WorkflowTag } from './publish-options.js';
import { bodyFields, redacted, redactHeaders, type Redaction } from './redact.js';

export type MessageKind = 'message' | 'callback' | 'failure-callback';

export interface QueuedMessage {
  messageId: string;
  kind: MessageKind;
  url: string;
  method: string;
  /** Headers delivered to the endpoint (forwarded and Content-Type), original case. */
  header: HeaderMap;
  bodyBase64: string;
  maxRetries: number;
  retryDelay?: string;
  timeoutMs: number;
  /** Unix ms at which the first delivery is due. */
  notBefore: number;
  createdAt: number;
  callerIp: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  labels?: string[];
  callback?: CallbackSettings;
  failureCallback?: CallbackSettings;
  /** Upstash-Flow-Control-Key and -Value: the key this message counts against, with its limits. */
  flowControl?: FlowControlSetting;
  /** Upstash-Redact-Fields: what the API shows redacted (the endpoint gets the originals). */
  redact?: Redaction;
  /** Attempts made while holding a named queue's slot (beyond BullMQ's own attempt count). */
  retried?: number;
  /** For callback messages: the message whose response they carry. */
  sourceMessageId?: string;
  /** The Upstash Workflow run the message belongs to (workflow-runs.ts). */
  workflow?: WorkflowTag;
}

/** The message record of GET /v2/messages/{id} (and the base of a DLQ record). */
export function messageView(m: QueuedMessage): Record<string, unknown> {
  const body = Buffer.from(m.bodyBase64, 'base64');
  return {
    messageId: m.messageId,
    ...(m.topicName ? { topicName: m.topicName } : {}),
    ...(m.endpointName ? { endpointName: m.endpointName } : {}),
    url: m.url,
    method: m.method,
    header: redactHeaders(m.redact, m.header),
    ...bodyFields(body, m.redact),
    maxRetries: m.maxRetries,
    ...(m.retryDelay ? { retryDelayExpression: m.retryDelay } : {}),
    notBefore: m.notBefore,
    createdAt: m.createdAt,
    ...(m.callback ? { callback: m.callback.url } : {}),
    ...(m.failureCallback ? { failureCallback: m.failureCallback.url } : {}),
    ...(m.queueName ? { queueName: m.queueName } : {}),
    ...(m.scheduleId ? { scheduleId: m.scheduleId } : {}),
    callerIp: m.callerIp,
    ...(m.labels?.length ? { label: m.labels[0], labels: m.labels } : {}),
    ...(m.flowControl ? flowControlView(m.flowControl) : {}),
  };
}

/** Headers of the original message in a callback body: name → one string (spec 2.5). */
export function flatHeaders(h: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(h)) out[name] = values.join(',');
  return out;
}

/** The flow control fields of a message or schedule record (the SDK's types: flowControlKey, parallelism, rate, period). */
export function flowControlView(fc: FlowControlSetting): Record<string, unknown> {
  return {
    flowControlKey: fc.key,
    ...(fc.parallelism ? { parallelism: fc.parallelism } : {}),
    ...(fc.rate ? { rate: fc.rate } : {}),
    period: fc.periodS,
  };
}

/** The message fields of every log entry (the reference's LogEntry): headers, base64 body, method, settings. */
export function logFields(m: QueuedMessage): Record<string, unknown> {
  return {
    header: redactHeaders(m.redact, m.header),
    body: m.redact?.body ? Buffer.from(redacted(Buffer.from(m.bodyBase64, 'base64'))).toString('base64') : m.bodyBase64,
    method: m.method,
    timeout: m.timeoutMs,
    maxRetries: m.maxRetries,
    ...(m.retryDelay ? { retryDelayExpression: m.retryDelay } : {}),
    ...(m.callback ? { callback: m.callback.url, callbackHeaders: m.callback.header } : {}),
    ...(m.failureCallback ? { failureCallback: m.failureCallback.url, failureCallbackHeaders: m.failureCallback.header } : {}),
  };
}
