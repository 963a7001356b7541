// Client of Area B's server-sent event streams: `POST /subscribe/{channel}`, `/psubscribe/{pattern}`,
// `/ssubscribe/{shardchannel}` (a respgate extension: the real service has no sharded stream) and `/monitor`. One HTTP request per stream, read with eventsource-parser; closing a stream aborts
// its request, which closes the upstream's subscription. It knows nothing of sockets or sessions.
//
// Three layers, each usable alone:
// - EventStreamClient.open: one raw stream; reports its opening, each event's data and its end.
// - ResilientEventStream: the first event of a stream is its confirmation (`subscribe,ch,1`, `OK`);
//   a confirmed stream that drops is opened again with backoff, and its new confirmation swallowed.
// - decodePubsubEvent / monitorLine: the event texts (docs/platform-kv.md, "Event streams").
//
// Credentials: a stream carries the configured token, or the connection's own credential (pass-through
// tokens, ACL users' tokens). Each stream is its own HTTP request, so no stream is ever shared, between
// connections or between credentials. After a 401 the credential's refresh() is asked once, as KvClient
// does: a token made by ACL RESTTOKEN comes back fresh and the request is sent again; a pass-through
// token has none (its refresh only drops the proxy's cached AUTH verdict).
//
// Binary safety: the data of an event is text. The proxy asks for the respgate extension
// `Respgate-Event-Encoding: base64` (our platform encodes every channel, pattern and message in
// base64 and echoes the header); an upstream that does not echo it (the real service) sends plain
// text, where invalid UTF-8 has become U+FFFD, CR and CRLF inside a message have become LF, and the
// channel of a pmessage that contains a comma cannot be told from its message (the first comma wins).
import { createParser } from 'eventsource-parser';
import { undiciPool, type Pool } from './undici-pool.js';
import { PROXY_DEFAULTS } from '../config.js';
import type { Credential } from './kv-client.js';
import { AUTH_FAILED, CLIENT_TOKEN_REFUSED, jsonErrorField, retryAfterText } from './kv-errors.js';
import { percentEncode } from './path-form.js';
import { redact } from './redact.js';

/** The request header (and echoed response header) of the base64 event encoding; see docs/platform-kv.md. */
export const EVENT_ENCODING_HEADER = 'respgate-event-encoding';

export type StreamTarget =
  | { kind: 'subscribe'; channel: Buffer }
  | { kind: 'psubscribe'; pattern: Buffer }
  | { kind: 'ssubscribe'; channel: Buffer }
  | { kind: 'monitor' };

export type StreamEnd =
  /**
   * The upstream answered with an error status instead of a stream (before any event); `retryAfter`:
   * its Retry-After header; `clientToken`: the stream carried a connection's own credential.
   */
  | { kind: 'refused'; status: number; error: string; retryAfter?: string; clientToken?: boolean }
  /** Network error, timeout, or an event too large to buffer. */
  | { kind: 'failed'; problem: string }
  /** The upstream closed the stream. */
  | { kind: 'ended' };

export interface StreamHandlers {
  /** The upstream answered 2xx; `encoded`: it echoed `Respgate-Event-Encoding: base64`. */
  onOpen?(encoded: boolean): void;
  /** The data of one event (several `data:` lines joined with LF). */
  onEvent(data: string): void;
  /** The stream is over; never called after close(). */
  onEnd(end: StreamEnd): void;
}

export interface EventStream {
  /** Aborts the HTTP request (the upstream closes its subscription); no handler is called afterwards. */
  close(): void;
}

export interface EventStreamClientOptions {
  /** Base URL of Area B (as for KvClient). */
  url: string;
  /** Bearer token; never in logs or error texts. */
  token: string;
  /** Until the upstream answers with its status and headers (it does once the subscription is made). */
  timeoutMs: number;
  /** Largest event, in characters; a larger one fails the stream (default: PROXY_DEFAULTS.maxEventChars). */
  maxEventChars?: number;
  /** Extra trusted CA certificates (PEM) for an HTTPS upstream with a private CA. */
  ca?: string | Buffer;
}

/** The path of a stream below the base URL; names are percent-encoded byte for byte. */
export function streamPath(target: StreamTarget): string {
  switch (target.kind) {
    case 'subscribe':
      return '/subscribe/' + segment(target.channel);
    case 'psubscribe':
      return '/psubscribe/' + segment(target.pattern);
    case 'ssubscribe':
      return '/ssubscribe/' + segment(target.channel);
    case 'monitor':
      return '/monitor';
  }
}

/** percentEncode, plus the dot segments `.` and `..`, which URL normalization would remove. */
function segment(name: Buffer): string {
  const s = percentEncode(name);
  return s === '.' ? '%2E' : s === '..' ? '%2E%2E' : s;
}

export class EventStreamClient {
  /** One connection per stream, made with the first stream (undici loads then: most proxies never stream). */
  private pool: Pool | undefined;
  private readonly origin: string;
  private readonly ca: string | Buffer | undefined;
  private readonly prefix: string;
  private readonly headers: Record<string, string>;
  /** The configured token's Authorization header; a stream with a credential of its own replaces it. */
  private readonly authorization: string;
  private readonly streams = new Set<Stream>();
  private readonly timeoutMs: number;
  private readonly maxEventChars: number;
  private readonly token: string;

  constructor(options: EventStreamClientOptions) {
    const base = new URL(options.url);
    this.prefix = base.pathname.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs > 0 ? options.timeoutMs : PROXY_DEFAULTS.upstreamTimeoutMs;
    this.maxEventChars = options.maxEventChars ?? PROXY_DEFAULTS.maxEventChars;
    // Body `[]` and these headers are what the official SDK sends for its subscriptions.
    this.authorization = `Bearer ${options.token}`;
    this.headers = {
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
      'content-type': 'application/json',
      [EVENT_ENCODING_HEADER]: 'base64',
    };
    this.origin = base.origin;
    this.ca = options.ca;
  }

  /** The streams' connections: as many as needed; an idle stream is not a timeout (bodyTimeout 0). */
  private connections(): Pool {
    this.pool ??= new (undiciPool())(this.origin, {
      headersTimeout: this.timeoutMs,
      bodyTimeout: 0,
      connect: { timeout: this.timeoutMs, ...(this.ca ? { ca: this.ca } : {}) },
    });
    return this.pool;
  }

  /** Streams open now (for tests and metrics). */
  get openCount(): number {
    return this.streams.size;
  }

  /** Opens one stream with the configured token, or with `credential` (a connection's own token). */
  open(target: StreamTarget, handlers: StreamHandlers, credential?: Credential): EventStream {
    const stream = new Stream(handlers, () => this.streams.delete(stream));
    this.streams.add(stream);
    void this.run(stream, this.prefix + streamPath(target), credential);
    return stream;
  }

  /** Closes every stream and the connections. */
  async close(): Promise<void> {
    for (const s of [...this.streams]) s.close();
    await this.pool?.close().catch(() => undefined);
  }

  private async run(stream: Stream, path: string, credential: Credential | undefined, refreshed = false): Promise<void> {
    // Texts from outside never carry the configured token nor the connection's own.
    const clean = (text: string) => this.redact(credential ? redact(text, credential.token) : text);
    const authorization = credential ? `Bearer ${credential.token}` : this.authorization;
    let res;
    try {
      res = await this.connections().request({
        method: 'POST',
        path,
        headers: { ...this.headers, authorization },
        body: '[]',
        signal: stream.abort.signal,
      });
    } catch (err) {
      return stream.end({ kind: 'failed', problem: clean(this.problem(err)) });
    }
    if (stream.closed) {
      res.body.destroy();
      return;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      let body = Buffer.alloc(0);
      try {
        body = Buffer.from(await res.body.arrayBuffer()).subarray(0, 4096);
      } catch {
        // the status is enough
      }
      if (res.statusCode === 401 && credential?.refresh && !refreshed && !stream.closed) {
        // A token from ACL RESTTOKEN was revoked (password changed, token rotated): ask for a fresh one.
        const fresh = await credential.refresh().catch(() => undefined);
        if (fresh && !stream.closed) return this.run(stream, path, credential, true);
      }
      const text = jsonErrorField(body) ?? body.toString('utf8').trim().slice(0, 200);
      const retryAfter = res.headers['retry-after'];
      return stream.end({
        kind: 'refused',
        status: res.statusCode,
        error: clean(text),
        ...(retryAfter !== undefined ? { retryAfter: String(retryAfter) } : {}),
        ...(credential ? { clientToken: true } : {}),
      });
    }
    stream.handlers.onOpen?.(String(res.headers[EVENT_ENCODING_HEADER] ?? '').toLowerCase() === 'base64');
    const decoder = new TextDecoder('utf-8');
    const parser = createParser({
      maxBufferSize: this.maxEventChars,
      onEvent: (event) => {
        if (!stream.closed) stream.handlers.onEvent(event.data);
      },
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') {
          stream.end({ kind: 'failed', problem: `an event longer than ${this.maxEventChars} characters` });
          stream.abort.abort();
        }
      },
    });
    res.body.on('data', (chunk: Buffer) => {
      if (stream.closed) return;
      try {
        parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // the parser is terminated after an error it already reported
      }
    });
    res.body.on('end', () => stream.end({ kind: 'ended' }));
    res.body.on('error', (err: Error) => stream.end({ kind: 'failed', problem: clean(this.problem(err)) }));
  }

  private problem(err: unknown): string {
    const e = err as { code?: string; message?: string };
    const text = e?.message ?? String(err);
    return this.redact(e?.code && !text.includes(e.code) ? `${text} (${e.code})` : text);
  }

  private redact(text: string): string {
    return redact(text, this.token);
  }
}

class Stream implements EventStream {
  readonly abort = new AbortController();
  closed = false;

  constructor(
    readonly handlers: StreamHandlers,
    private readonly forget: () => void,
  ) {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.forget();
    this.abort.abort();
  }

  /** Reports the end once, unless closed by its owner. */
  end(end: StreamEnd): void {
    if (this.closed) return;
    this.closed = true;
    this.forget();
    this.handlers.onEnd(end);
  }
}

// ---- confirmation and reconnection ----

export interface ResilientHandlers {
  /** The first event of a stream arrived: `again` is false the first time, true after a reconnection. */
  onConfirmed(again: boolean): void;
  /** Every later event of the stream. */
  onEvent(data: string, encoded: boolean): void;
  /** The first stream failed before its confirmation (refused, unreachable, timeout): nothing is retried. */
  onFailed(error: string): void;
  /** A confirmed stream dropped (or a reconnection failed); it is opened again after `delayMs`. */
  onDropped(reason: string, attempt: number, delayMs: number): void;
  /** A reconnection was refused by the upstream (4xx: token revoked, permission removed): it stops. */
  onRefused(error: string): void;
}

export interface ResilientOptions {
  /** Until the first event of each stream. */
  confirmTimeoutMs: number;
  /** The connection's own credential (pass-through, ACL users); undefined = the configured token. */
  credential?: Credential;
  /** Backoff of reconnections: first delay and cap (defaults: PROXY_DEFAULTS in config.ts). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A stream whose first event confirms it, re-established after a drop with exponential backoff
 * (jittered, capped). Events published while it is down are lost: the upstream keeps no backlog.
 */
export class ResilientEventStream {
  private stream: EventStream | undefined;
  private confirmedOnce = false;
  private streamConfirmed = false;
  private encoded = false;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: EventStreamClient,
    private readonly target: StreamTarget,
    private readonly handlers: ResilientHandlers,
    private readonly options: ResilientOptions,
  ) {
    this.open();
  }

  /** True once the first stream was confirmed. */
  get confirmed(): boolean {
    return this.confirmedOnce;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stream?.close();
    this.stream = undefined;
  }

  private open(): void {
    this.streamConfirmed = false;
    this.encoded = false;
    const stream = this.client.open(
      this.target,
      {
        onOpen: (encoded) => {
          this.encoded = encoded;
        },
        onEvent: (data) => this.event(data),
        onEnd: (end) => {
          if (this.stream === stream) this.ended(end);
        },
      },
      this.options.credential,
    );
    this.stream = stream;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.stream !== stream || this.streamConfirmed) return;
      stream.close();
      this.ended({ kind: 'failed', problem: `no confirmation from the upstream within ${this.options.confirmTimeoutMs} ms` });
    }, this.options.confirmTimeoutMs);
    this.timer.unref();
  }

  private event(data: string): void {
    if (this.closed) return;
    if (!this.streamConfirmed) {
      this.streamConfirmed = true;
      clearTimeout(this.timer);
      const again = this.confirmedOnce;
      this.confirmedOnce = true;
      this.attempt = 0;
      this.handlers.onConfirmed(again);
      return;
    }
    this.handlers.onEvent(data, this.encoded);
  }

  private ended(end: StreamEnd): void {
    if (this.closed) return;
    this.stream = undefined;
    clearTimeout(this.timer);
    const reason = endText(end);
    if (!this.confirmedOnce) {
      this.closed = true;
      // A connection's own token the upstream no longer accepts: revoked, as a deleted Redis user,
      // whose connections Redis closes (a wrong token never got this far: AUTH said WRONGPASS).
      if (end.kind === 'refused' && end.status === 401 && end.clientToken) return this.handlers.onRefused(reason);
      return this.handlers.onFailed(reason);
    }
    if (end.kind === 'refused' && end.status >= 400 && end.status < 500 && end.status !== 408 && end.status !== 429) {
      this.closed = true;
      return this.handlers.onRefused(reason);
    }
    const min = this.options.minDelayMs ?? PROXY_DEFAULTS.reconnectMinDelayMs;
    const max = this.options.maxDelayMs ?? PROXY_DEFAULTS.reconnectMaxDelayMs;
    const delayMs = Math.round(Math.min(max, min * 2 ** this.attempt) * (1 + Math.random() * 0.2));
    this.attempt++;
    this.handlers.onDropped(reason, this.attempt, delayMs);
    this.timer = setTimeout(() => {
      if (!this.closed) this.open();
    }, delayMs);
    this.timer.unref();
  }
}

/** An error text for a stream's end, in Redis' style (`ERR …` unless the upstream's own error has a code). */
export function endText(end: StreamEnd): string {
  switch (end.kind) {
    case 'refused': {
      if (end.status === 401) return end.clientToken ? CLIENT_TOKEN_REFUSED : AUTH_FAILED;
      // The upstream's own Redis error (NOPERM …) passes through as Redis would have answered it.
      if (end.status === 400 && /^[A-Z]+ /.test(end.error)) return end.error;
      const what = `HTTP ${end.status}${end.error ? `: ${end.error}` : ''}`;
      const retry = retryAfterText(end.retryAfter);
      if (end.status === 429) return `ERR upstream rate limit reached (${what})${retry}; the event stream was not opened`;
      return `ERR upstream refused the event stream (${what})${retry}`;
    }
    case 'failed':
      return `ERR upstream event stream failed: ${end.problem}`;
    case 'ended':
      return 'ERR upstream closed the event stream';
  }
}

// ---- event texts ----

type ConfirmationType = 'subscribe' | 'psubscribe' | 'ssubscribe' | 'unsubscribe' | 'punsubscribe' | 'sunsubscribe';

export type PubsubEvent =
  | { type: ConfirmationType; name: Buffer; count: number }
  | { type: 'message' | 'smessage'; channel: Buffer; message: Buffer }
  | { type: 'pmessage'; pattern: Buffer; channel: Buffer; message: Buffer };

const b64 = (s: string): Buffer => Buffer.from(s, 'base64');

/**
 * Decodes the data of a /subscribe, /psubscribe or /ssubscribe event. `name` is the channel or pattern the stream
 * is for: in the plain format it tells where that name ends even when it contains commas. Undefined
 * for an event of another shape.
 */
export function decodePubsubEvent(data: string, encoded: boolean, name: Buffer): PubsubEvent | undefined {
  const comma = data.indexOf(',');
  if (comma < 0) return undefined;
  const type = data.slice(0, comma);
  const rest = data.slice(comma + 1);
  if (encoded) {
    const fields = rest.split(',');
    switch (type) {
      case 'subscribe':
      case 'psubscribe':
      case 'ssubscribe':
      case 'unsubscribe':
      case 'punsubscribe':
      case 'sunsubscribe':
        return fields.length === 2 ? { type, name: b64(fields[0]), count: Number(fields[1]) } : undefined;
      case 'message':
      case 'smessage':
        return fields.length === 2 ? { type, channel: b64(fields[0]), message: b64(fields[1]) } : undefined;
      case 'pmessage':
        return fields.length === 3 ? { type, pattern: b64(fields[0]), channel: b64(fields[1]), message: b64(fields[2]) } : undefined;
      default:
        return undefined;
    }
  }
  // Plain text: `<type>,<name>,…`, where the name is ours (so commas in it are no trouble).
  const text = name.toString('utf8');
  const after = rest.startsWith(text + ',') ? rest.slice(text.length + 1) : undefined;
  switch (type) {
    case 'subscribe':
    case 'psubscribe':
    case 'ssubscribe':
    case 'unsubscribe':
    case 'punsubscribe':
    case 'sunsubscribe': {
      const tail = after ?? rest.slice(rest.lastIndexOf(',') + 1);
      return { type, name, count: Number(tail) };
    }
    case 'message':
    case 'smessage': {
      if (after !== undefined) return { type, channel: name, message: Buffer.from(after, 'utf8') };
      const c = rest.indexOf(',');
      return c < 0 ? undefined : { type, channel: Buffer.from(rest.slice(0, c), 'utf8'), message: Buffer.from(rest.slice(c + 1), 'utf8') };
    }
    case 'pmessage': {
      // The channel ends at the first comma after the pattern: a channel holding a comma is ambiguous.
      const body = after ?? rest.slice(rest.indexOf(',') + 1);
      const c = body.indexOf(',');
      if (c < 0) return undefined;
      return { type, pattern: name, channel: Buffer.from(body.slice(0, c), 'utf8'), message: Buffer.from(body.slice(c + 1), 'utf8') };
    }
    default:
      return undefined;
  }
}

/** A /monitor event as the text of a status reply (never with CR or LF). */
export function monitorLine(data: string): string {
  return data.includes('\n') || data.includes('\r') ? data.replace(/[\r\n]/g, ' ') : data;
}
