// One HTTP request to an upstream through an undici dispatcher, with a deadline. It tells apart a
// request that never reached the wire (safe: not executed) from one that may have (outcome unknown),
// because undici announces `onRequestStart` right before it writes a request to a connected socket.
//
// The deadline (issue 22): a burst of large requests (600 auto-pipelined 1 MiB SETs) waits its turn
// for a pooled connection, and it used to time out while merely waiting, because the deadline counted
// from dispatch. Now:
// - once sent, a request has `timeoutMs` plus time for its bytes (request and answer, at
//   MIN_BYTES_PER_SECOND) counted from when it was sent;
// - while it waits for a connection, it times out only when the pool made no progress (no answer or
//   part of one, on any connection: `PoolProgress`) for `timeoutMs`: a stuck upstream still fails every
//   waiting request after `timeoutMs`, as "not executed", while a busy one serves them all.
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { oneLine } from '../resp/protocol.js';

export type Exchange =
  /**
   * `body`: the answer's bytes in one Buffer (joined when first read); `pieces`: the same bytes as they
   * arrived, for a large answer passed on without that join. `retryAfter`: the Retry-After header,
   * when the answer has one (429, 503).
   */
  | { ok: true; status: number; contentType: string; readonly body: Buffer; pieces: readonly Buffer[]; size: number; retryAfter?: string }
  | {
      ok: false;
      /** What went wrong, without credentials, e.g. `connect ECONNREFUSED 127.0.0.1:8079`. */
      problem: string;
      /** True when no byte of the request was written, so the upstream did not execute it. */
      notSent: boolean;
      timedOut: boolean;
      /** undici or system error code, when there is one. */
      code: string | undefined;
    };

export interface ExchangeRequest {
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | null;
}

/**
 * When the exchanges of one pool last saw the upstream answer (headers or bytes of an answer), in
 * performance.now() milliseconds: a request waiting for a connection keeps waiting while this moves.
 */
export interface PoolProgress {
  at: number;
}

/**
 * The slowest transfer a sent request is allowed before its deadline, on top of `timeoutMs`: 4 MiB/s,
 * so a 1 MiB value adds 250 ms, a 10 MiB request (the service's largest) 2.5 s.
 */
export const MIN_BYTES_PER_SECOND = 4 * 1024 * 1024;

/** The extra time for moving `bytes` at MIN_BYTES_PER_SECOND, in ms. */
export function transferAllowanceMs(bytes: number): number {
  return (bytes * 1000) / MIN_BYTES_PER_SECOND;
}

/**
 * Sends one POST; resolves (never rejects) once the answer is complete, failed, or the deadline passed.
 * Without `progress`, a request waiting for a connection counts its wait against `timeoutMs` alone.
 */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest, timeoutMs: number, progress?: PoolProgress): Promise<Exchange> {
  return new Promise((resolve) => {
    const bodyBytes = request.body === null ? 0 : typeof request.body === 'string' ? Buffer.byteLength(request.body) : request.body.length;
    const handler = new ExchangeHandler(resolve, timeoutMs, bodyBytes, progress);
    try {
      dispatcher.dispatch({ method: 'POST', path: request.path, headers: request.headers, body: request.body }, handler);
    } catch (err) {
      handler.onResponseError(undefined, err as Error);
    }
  });
}

const EMPTY = Buffer.alloc(0);

class ExchangeHandler implements Dispatcher.DispatchHandler {
  private done = false;
  private started = false;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private contentType = '';
  private retryAfter: string | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private timer: NodeJS.Timeout;
  /** performance.now() when the request was sent, and its deadline from then (grows with the answer's bytes). */
  private sentAt = 0;
  private allowedMs = 0;

  constructor(
    private readonly resolve: (answer: Exchange) => void,
    private readonly timeoutMs: number,
    private readonly bodyBytes: number,
    private readonly progress: PoolProgress | undefined,
  ) {
    this.timer = setTimeout(this.onTimeout, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.done) {
      // The deadline passed while the request waited for a connection: never send it.
      controller.abort(new Error('request abandoned after its deadline'));
      return;
    }
    this.started = true;
    this.controller = controller;
    // The deadline counts from now, with time for the request's own bytes.
    clearTimeout(this.timer);
    this.sentAt = performance.now();
    this.allowedMs = this.timeoutMs + transferAllowanceMs(this.bodyBytes);
    this.timer = setTimeout(this.onTimeout, this.allowedMs);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.progress) this.progress.at = performance.now();
    if (statusCode < 200) return; // 1xx informational: the real answer follows
    this.status = statusCode;
    const type = headers['content-type'];
    this.contentType = (Array.isArray(type) ? type[0] : type) ?? '';
    const retry = headers['retry-after'];
    if (retry !== undefined) this.retryAfter = Array.isArray(retry) ? retry[0] : retry;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    // A large answer earns time as it arrives (its timer is re-armed only when it fires).
    this.allowedMs += transferAllowanceMs(chunk.length);
    if (this.progress) this.progress.at = performance.now();
  }

  onResponseEnd(): void {
    if (this.finish()) return;
    const pieces = this.chunks;
    const size = this.size;
    this.chunks = [];
    let body: Buffer | undefined = pieces.length === 1 ? pieces[0] : pieces.length === 0 ? EMPTY : undefined;
    const answer: Exchange = {
      ok: true,
      status: this.status,
      contentType: this.contentType,
      pieces,
      size,
      get body() {
        return (body ??= Buffer.concat(pieces, size));
      },
    };
    if (this.retryAfter !== undefined) answer.retryAfter = this.retryAfter;
    this.resolve(answer);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.finish()) return;
    this.chunks = [];
    const code = (err as { code?: string }).code;
    this.resolve({ ok: false, problem: describeError(err), notSent: !this.started, timedOut: false, code });
  }

  private readonly onTimeout = (): void => {
    if (this.done) return;
    const now = performance.now();
    // Sent: the answer's bytes may have earned more time since the timer was armed.
    const left = this.started ? this.sentAt + this.allowedMs - now : this.waitLeft(now);
    if (left >= 1) {
      this.timer = setTimeout(this.onTimeout, left);
      return;
    }
    this.done = true;
    this.chunks = [];
    const sent = this.started;
    this.controller?.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    this.resolve({ ok: false, problem: `timed out after ${this.timeoutMs} ms`, notSent: !sent, timedOut: true, code: undefined });
  };

  /** Still waiting for a connection: how much longer, given the pool's last progress (none without a tracker). */
  private waitLeft(now: number): number {
    const at = this.progress?.at;
    return at === undefined ? 0 : at + this.timeoutMs - now;
  }

  /** Marks the exchange settled; true when it already was (a late event after the deadline). */
  private finish(): boolean {
    if (this.done) return true;
    this.done = true;
    clearTimeout(this.timer);
    return false;
  }
}

/** A one-line description of a network error: `connect ECONNREFUSED 127.0.0.1:8079`, `other side closed`. */
function describeError(err: Error): string {
  const parts: string[] = [];
  let e: unknown = err;
  // undici wraps system errors (`fetch failed` style); AggregateError carries one per address tried.
  for (let depth = 0; e && depth < 3; depth++) {
    const x = e as { message?: string; code?: string; errors?: unknown[]; cause?: unknown };
    if (!x.message && x.errors?.length) {
      e = x.errors[0];
      continue;
    }
    const message = x.message || x.code || String(e);
    if (!parts.includes(message)) parts.push(message);
    e = x.errors?.[0] ?? x.cause;
  }
  return oneLine(parts.join(': '));
}
