// Reads the configuration of a publish from its headers and query parameters: every Upstash-* header
// (also spelled Service-*, also as a lowercase query parameter), the headers to forward, and the
// settings of the callback and failure callback messages. Bad values are 400s naming the header.
import { canonicalHeader } from './delivery.js';
import { badRequest } from './errors.js';
import { parseDuration } from './duration.js';
import { readFlowControl, type FlowControlSetting } from './flow-control-value.js';
import { readRedaction, type Redaction } from './redact.js';
import { parseRetryDelay, RetryDelayError } from './retry-delay.js';

export const DEFAULT_RETRIES = 3;
/** The real default is the plan's maximum HTTP response duration; ours is 15 minutes (documented). */
export const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** Headers as name → values, names in their original case. */
export type HeaderMap = Record<string, string[]>;

export interface DeliverySettings {
  method: string;
  timeoutMs: number;
  retries: number;
  retryDelay?: string;
  delayMs: number;
  /** Headers sent to the endpoint, besides the ones the service adds. */
  header: HeaderMap;
}

export interface CallbackSettings extends DeliverySettings {
  url: string;
  /** Upstash-Callback-Workflow-* (or -Failure-Callback-Workflow-*): the callback belongs to a workflow run. */
  workflow?: WorkflowTag;
}

/**
 * The Upstash-Workflow-* headers the @upstash/workflow SDK puts on its publishes: the message
 * belongs to a run. `callType` is `step` (a step result for the workflow URL), `toCallback` (a
 * context.call to a third party), `fromCallback` (its answer) or `failureCall`.
 */
export interface WorkflowTag {
  runId: string;
  url: string;
  init: boolean;
  callType: string;
  /** `Upstash-Workflow-Invoke: true`: a trigger sent by context.invoke (workflow-invoke.ts). */
  invoke?: boolean;
}

export interface PublishOptions extends DeliverySettings {
  notBeforeMs?: number;
  deduplicationId?: string;
  contentBasedDeduplication: boolean;
  callback?: CallbackSettings;
  failureCallback?: CallbackSettings;
  labels: string[];
  /** Settings only schedules read. */
  cron?: string;
  scheduleId?: string;
  queueName?: string;
  flowControl?: FlowControlSetting;
  /** Upstash-Redact-Fields: what the API shows redacted. */
  redact?: Redaction;
  workflow?: WorkflowTag;
  /** Whether Upstash-Retries was given (a workflow step without it takes its run's). */
  retriesGiven: boolean;
}

/** Header names never forwarded by Upstash-Header-Forward: transport and credentials. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'authorization',
  'upgrade',
  'proxy-authorization',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
]);

/**
 * The publish request as the options reader sees it: its headers (original case, in order) and its
 * query parameters. Service-* is the same as Upstash-*.
 */
export class PublishHeaders {
  /** lowercase upstash-* name → value (first wins: the request's own headers before group defaults). */
  private readonly config = new Map<string, string>();
  /** Every header with original case. */
  readonly all: Array<[string, string]> = [];

  constructor(rawHeaders: Array<[string, string]>, query?: URLSearchParams, defaults?: HeaderMap) {
    const add = (name: string, value: string) => {
      const canonical = canonicalName(name);
      const lower = canonical.toLowerCase();
      if (lower.startsWith('upstash-')) {
        // Forward headers may repeat; other settings keep the first value given.
        if (!this.config.has(lower)) this.config.set(lower, value);
      }
      this.all.push([canonical, value]);
    };
    for (const [name, value] of rawHeaders) add(name, value);
    if (query) for (const [name, value] of query) if (/^(upstash|service)-/i.test(name)) add(name, value);
    if (defaults) {
      for (const [name, values] of Object.entries(defaults)) {
        const lower = canonicalName(name).toLowerCase();
        if (this.all.some(([n]) => n.toLowerCase() === lower)) continue;
        for (const v of values) add(name, v);
      }
    }
  }

  get(name: string): string | undefined {
    return this.config.get(name.toLowerCase());
  }

  /** Headers named `<prefix><Name>`, as Name → values. */
  prefixed(prefix: string): HeaderMap {
    const out: HeaderMap = {};
    const lowerPrefix = prefix.toLowerCase();
    for (const [name, value] of this.all) {
      if (name.toLowerCase().startsWith(lowerPrefix) && name.length > prefix.length) {
        const target = name.slice(prefix.length);
        (out[target] ??= []).push(value);
      }
    }
    return out;
  }
}

/** Service-Foo → Upstash-Foo (the platform accepts both spellings). */
function canonicalName(name: string): string {
  return /^service-/i.test(name) ? 'Upstash-' + name.slice(8) : name;
}

export function readPublishOptions(h: PublishHeaders): PublishOptions {
  const header: HeaderMap = {};
  const contentType = h.all.find(([n]) => n.toLowerCase() === 'content-type')?.[1];
  // Names as the service shows them: Go's canonical form (test-header → Test-Header).
  if (h.get('upstash-header-forward') === 'true') {
    for (const [name, value] of h.all) {
      const lower = name.toLowerCase();
      if (NOT_FORWARDED.has(lower) || lower.startsWith('upstash-')) continue;
      (header[canonicalHeader(name)] ??= []).push(value);
    }
  } else if (contentType !== undefined) {
    header['Content-Type'] = [contentType];
  }
  for (const [name, values] of Object.entries(h.prefixed('Upstash-Forward-'))) header[canonicalHeader(name)] = values;

  const settings = readDelivery(h, '', header);
  const notBefore = h.get('upstash-not-before');
  let notBeforeMs: number | undefined;
  if (notBefore !== undefined) {
    if (!/^\d+$/.test(notBefore.trim()))
      throw badRequest(
        `invalid Upstash-Not-Before header value '${notBefore}': it must be a Unix time in seconds, such as ${Math.floor(Date.now() / 1000) + 60}`,
      );
    notBeforeMs = Number(notBefore) * 1000;
  }
  const deduplicationId = h.get('upstash-deduplication-id');
  if (deduplicationId !== undefined && deduplicationId.includes(':')) throw badRequest("DeduplicationId cannot contain ':'");
  const cbd = h.get('upstash-content-based-deduplication');
  const labels = (h.get('upstash-label') ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  return {
    ...settings,
    notBeforeMs,
    deduplicationId: deduplicationId || undefined,
    contentBasedDeduplication: cbd === 'true',
    // A callback is retried as often as its message unless Upstash-Callback-Retries says otherwise.
    callback: readCallback(h, 'Callback', settings.retries),
    failureCallback: readCallback(h, 'Failure-Callback', settings.retries),
    labels,
    cron: h.get('upstash-cron'),
    scheduleId: h.get('upstash-schedule-id'),
    queueName: h.get('upstash-queue-name'),
    flowControl: readFlowControl(h.get('upstash-flow-control-key'), h.get('upstash-flow-control-value')),
    redact: readRedaction(h.get('upstash-redact-fields')),
    workflow: readWorkflowTag(h, 'Upstash-Workflow-'),
    retriesGiven: h.get('upstash-retries') !== undefined,
  };
}

/** The run a message (or its callback) belongs to, from `<prefix>RunId`, `-Init`, `-Url`, `-CallType`. */
function readWorkflowTag(h: PublishHeaders, prefix: string, fallbackUrl = ''): WorkflowTag | undefined {
  const runId = h.get(`${prefix}RunId`);
  if (!runId) return undefined;
  return {
    runId,
    url: h.get(`${prefix}Url`) ?? fallbackUrl,
    init: h.get(`${prefix}Init`) === 'true',
    callType: h.get(`${prefix}CallType`) ?? 'step',
    ...(h.get(`${prefix}Invoke`) === 'true' ? { invoke: true } : {}),
  };
}

function readCallback(h: PublishHeaders, kind: 'Callback' | 'Failure-Callback', retries: number): CallbackSettings | undefined {
  const url = h.get(`upstash-${kind}`);
  // The reference gives callbacks a method, timeout, retries and retry delay, no delay: the service refuses one.
  const delay = h.get(`upstash-${kind}-delay`);
  if (delay !== undefined)
    throw badRequest(`Upstash-${kind}-Delay is not supported: a ${kind.toLowerCase()} is sent as soon as the response is known`);
  if (url === undefined || url === '') return undefined;
  checkUrl(url, `Upstash-${kind}`);
  const header = h.prefixed(`Upstash-${kind}-Forward-`);
  const settings = readDelivery(h, `${kind}-`, header, retries);
  const workflow = readWorkflowTag(h, `Upstash-${kind}-Workflow-`, url);
  return { url, ...settings, ...(workflow ? { workflow } : {}) };
}

function readDelivery(h: PublishHeaders, infix: string, header: HeaderMap, defaultRetries = DEFAULT_RETRIES): DeliverySettings {
  const name = (setting: string) => `Upstash-${infix}${setting}`;
  const method = (h.get(name('Method')) ?? 'POST').toUpperCase();
  if (!METHODS.has(method)) throw badRequest(`invalid ${name('Method')} header value '${method}': use GET, POST, PUT, PATCH or DELETE`);
  const retriesText = h.get(name('Retries'));
  let retries = defaultRetries;
  if (retriesText !== undefined) {
    if (!/^\d+$/.test(retriesText.trim()))
      throw badRequest(`invalid ${name('Retries')} header value '${retriesText}': it must be a whole number >= 0`);
    retries = Number(retriesText);
  }
  const retryDelay = h.get(name('Retry-Delay'));
  if (retryDelay !== undefined) {
    try {
      parseRetryDelay(retryDelay);
    } catch (err) {
      if (err instanceof RetryDelayError) throw badRequest(`invalid ${name('Retry-Delay')} header value: ${err.message}`);
      throw err;
    }
  }
  return {
    method,
    timeoutMs: duration(h, name('Timeout')) ?? DEFAULT_TIMEOUT_MS,
    retries,
    retryDelay: retryDelay || undefined,
    delayMs: duration(h, name('Delay')) ?? 0,
    header,
  };
}

function duration(h: PublishHeaders, header: string): number | undefined {
  const text = h.get(header);
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined) throw badRequest(`invalid ${header} header value '${text}': use a duration such as 10s, 5m, 2h, 1d or 1d10h30m`);
  return ms;
}

/** A destination or callback URL must be http(s); loopback is allowed (local development). */
export function checkUrl(url: string, what = 'destination'): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url))
      throw badRequest(`invalid ${what} url: endpoint has invalid scheme, add http:// or https://`);
    throw badRequest(`invalid ${what} url: '${url}' is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw badRequest(`invalid ${what} url: endpoint has invalid scheme, add http:// or https://`);
  }
  return parsed;
}
