// One HTTP request to an upstream through an undici dispatcher, with a hard deadline that covers
// waiting for a pooled connection, sending, and reading the whole answer. It tells apart a request
// that never reached the wire (safe: not executed) from one that may have (outcome unknown), because
// undici announces `onRequestStart` right before it writes a request to a connected socket.
import type { Dispatcher } from 'undici';
import { oneLine } from '../resp/protocol.js';

export type Exchange =
  /** `retryAfter`: the Retry-After header, when the answer has one (429, 503). */
  | { ok: true; status: number; contentType: string; body: Buffer; retryAfter?: string }
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

/** Sends one POST; resolves (never rejects) once the answer is complete, failed, or the deadline passed. */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(resolve, timeoutMs);
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
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (answer: Exchange) => void,
    private readonly timeoutMs: number,
  ) {
    this.timer = setTimeout(() => this.onTimeout(), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.done) {
      // The deadline passed while the request waited for a connection: never send it.
      controller.abort(new Error('request abandoned after its deadline'));
      return;
    }
    this.started = true;
    this.controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
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
  }

  onResponseEnd(): void {
    if (this.finish()) return;
    const body = this.chunks.length === 1 ? this.chunks[0] : this.chunks.length === 0 ? EMPTY : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    const answer: Exchange = { ok: true, status: this.status, contentType: this.contentType, body };
    if (this.retryAfter !== undefined) answer.retryAfter = this.retryAfter;
    this.resolve(answer);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.finish()) return;
    this.chunks = [];
    const code = (err as { code?: string }).code;
    this.resolve({ ok: false, problem: describeError(err), notSent: !this.started, timedOut: false, code });
  }

  private onTimeout(): void {
    if (this.done) return;
    this.done = true;
    this.chunks = [];
    const sent = this.started;
    this.controller?.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    this.resolve({ ok: false, problem: `timed out after ${this.timeoutMs} ms`, notSent: !sent, timedOut: true, code: undefined });
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
