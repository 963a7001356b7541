// A lean HTTP/1.1 client for the proxy's calls to its upstream (/pipeline, /multi-exec, the path
// form): keep-alive connections, one request at a time on each, a FIFO queue when all are busy. It
// is an undici Dispatcher as far as http-exchange.ts sees (dispatch with the request-start /
// response-start / data / end / error handler, close, destroy), so the exchange's deadline, its
// "not sent" rule and its errors are the same. Why not undici's Pool: at `-P 1` a call carries ~24
// commands and undici's per-request machinery (its Request object and header checks, llhttp in
// WebAssembly, the Readable and Writable streams of its socket, its timers) cost the proxy 1-2 µs of
// CPU per command; this client writes a request in one write and parses the answer's head and body
// framing in a few lines (bench/README.md, "System calls per command", issue 25). The event stream
// and the REST JSON calls keep undici (streaming bodies, rarely called).
//
// HTTP it understands: a status line and headers (1xx skipped), a body framed by content-length,
// chunked transfer-encoding or the end of the connection; `connection: close`; the server's
// `keep-alive: timeout=N` (an idle connection is closed 2 s before the server would, as undici does,
// so a request is not written to a connection the server is closing). Plain TCP connections are opened
// by tcp-connector.ts (as undici's connector opens them, without loading it); TLS ones by undici's own
// connector (its connect timeout and errors, TLS session reuse). A failed connect reads as undici's.
import diagnostics from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { buildConnector as BuildConnector, Dispatcher } from 'undici';
import { largeBuffers, POOLED_MIN_BYTES } from '../resp/large-buffers.js';
import { ReadLanding } from '../resp/read-landing.js';
import { connectTcp } from './tcp-connector.js';

const require = createRequire(import.meta.url);
let connectorBuilder: typeof BuildConnector | undefined;
/**
 * undici's buildConnector, loaded with the first TLS connection (undici's core modules and node:http
 * under them): a proxy answers its first PING without waiting for them (bench/README.md, 2026-11-28).
 */
function buildConnector(options: BuildConnector.BuildOptions): BuildConnector.connector {
  connectorBuilder ??= require('undici/lib/core/connect.js') as typeof BuildConnector;
  return connectorBuilder(options);
}

export interface Http1PoolOptions {
  /** Most connections open at once. */
  connections: number;
  /** How long a connection may take to open (TCP and TLS). */
  connectTimeoutMs: number;
  /** Extra certificate authorities for an https upstream. */
  ca?: string | Buffer;
  /** Idle connections close after this, unless the server's keep-alive hint is shorter (undici's default: 4 s). */
  keepAliveTimeoutMs?: number;
}

interface DispatchOptions {
  method?: string;
  path: string;
  headers?: Record<string, string> | null;
  body?: string | Buffer | null;
}

type Handler = Dispatcher.DispatchHandler;

interface Pending {
  head: string;
  body: Buffer | string;
  handler: Handler;
}

/** An error with undici's code, so callers that test codes (kv-client's pool replacement) see the same. */
function failure(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** undici's own checks: a header value or path with a line break would split the request. */
const BAD_HEADER_VALUE = /[\r\n\0]/;
const BAD_PATH = /[^\u0021-\u00ff]/;
const BAD_TOKEN = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/;
/** The longest answer head accepted (undici and Node: 16 KiB by default; generous here). */
const MAX_HEAD_BYTES = 64 * 1024;
/** Bodies up to this size are copied behind the head and go out in one write; larger ones in a writev. */
const COPY_BODY_BYTES = 16 * 1024;
/** How long before the server's keep-alive timeout an idle connection is closed (undici's threshold). */
const KEEP_ALIVE_MARGIN_MS = 2000;
const SWEEP_MS = 500;
const NO_TRAILERS = {};
/**
 * A body framed by content-length of this size or more that goes on past the read it starts in is read
 * straight into one buffer of its whole size, taken from the large-value pool: a 1 MiB GET arrives in
 * a few large reads, with no 64 KiB Buffer per read and no join (issue 25, bench/README.md).
 */
const DIRECT_BODY_BYTES = POOLED_MIN_BYTES;
/** Larger bodies are read as they come (slab views): no buffer as large as a content-length the server merely claims. */
const DIRECT_BODY_MAX_BYTES = 16 * 1024 * 1024;
/** undici's channel of new requests (what its instrumentation and our tests watch), published on when watched. */
const requestCreated = diagnostics.channel('undici:request:create');

export class Http1Pool {
  private readonly url: URL;
  private readonly hostHeader: string;
  /** undici's connector for TLS (its session cache shared by the connections), made with the first one. */
  private tlsConnector: BuildConnector.connector | undefined;
  private readonly idle: Connection[] = [];
  private readonly open = new Set<Connection>();
  private readonly queue: Pending[] = [];
  private closing = false;
  private destroying = false;
  private closedWaiters: (() => void)[] = [];
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly origin: string,
    readonly options: Http1PoolOptions,
  ) {
    this.url = new URL(origin);
    this.hostHeader = this.url.host;
  }

  get destroyed(): boolean {
    return this.destroying;
  }
  get closed(): boolean {
    return this.closing;
  }

  /** Sends one request; every outcome reaches the handler (an error before sending: no onRequestStart). */
  dispatch(options: DispatchOptions, handler: Handler): boolean {
    if (this.destroying || this.closing) {
      const error = this.destroying
        ? failure('The client is destroyed', 'UND_ERR_DESTROYED')
        : failure('The client is closed', 'UND_ERR_CLOSED');
      handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, error);
      return false;
    }
    const method = options.method ?? 'POST';
    let head = `${method} ${options.path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    let problem = BAD_PATH.test(options.path) ? 'invalid request path' : undefined;
    if (options.headers)
      for (const name in options.headers) {
        const value = options.headers[name];
        if (BAD_TOKEN.test(name) || BAD_HEADER_VALUE.test(value)) problem ??= `invalid ${name} header`;
        head += `${name}: ${value}\r\n`;
      }
    if (problem) {
      handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, failure(problem, 'UND_ERR_INVALID_ARG'));
      return false;
    }
    const body = options.body ?? '';
    if (requestCreated.hasSubscribers)
      requestCreated.publish({
        request: { origin: this.origin, method, path: options.path, headers: options.headers, body: options.body },
      });
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    head += `content-length: ${length}\r\n\r\n`;
    const pending: Pending = { head, body, handler };
    const connection = this.takeIdle();
    if (connection) connection.send(pending);
    else {
      this.queue.push(pending);
      if (this.open.size < this.options.connections) this.connect();
    }
    return true;
  }

  /** Stops taking requests; resolves once every request sent or queued has its answer, then closes the connections. */
  close(): Promise<void> {
    this.closing = true;
    return new Promise((resolve) => {
      this.closedWaiters.push(resolve);
      this.maybeClosed();
    });
  }

  /** Fails every request queued or in flight and closes every connection now. */
  destroy(): Promise<void> {
    this.destroying = true;
    this.closing = true;
    const error = failure('The client is destroyed', 'UND_ERR_DESTROYED');
    for (const pending of this.queue.splice(0))
      pending.handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, error);
    for (const connection of [...this.open]) connection.destroy(error);
    this.maybeClosed();
    return Promise.resolve();
  }

  // ---- for the connections ----

  /** A connection is free: the next queued request, or it waits (and is swept once idle too long). */
  released(connection: Connection): void {
    const next = this.queue.shift();
    if (next) return connection.send(next);
    connection.idleSince = performance.now();
    this.idle.push(connection);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    this.maybeClosed();
  }

  /** A connection is gone (closed by either side, failed to open). */
  removed(connection: Connection): void {
    this.open.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.open.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    // Work still queued gets a new connection (a failed connect failed one request only).
    if (this.queue.length > 0 && this.open.size < this.options.connections && !this.destroying) this.connect();
    this.maybeClosed();
  }

  /** A connection that never opened: its error is the first queued request's (it was not sent). */
  failedToConnect(error: Error): void {
    this.queue.shift()?.handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, error);
  }

  /** The first queued request, for a connection that just opened. */
  nextQueued(): Pending | undefined {
    return this.queue.shift();
  }

  private takeIdle(): Connection | undefined {
    while (this.idle.length > 0) {
      const connection = this.idle.pop()!;
      if (connection.usable) return connection;
      connection.destroy();
    }
    return undefined;
  }

  private connect(): void {
    const connection = new Connection(this);
    this.open.add(connection);
    const { hostname, host, protocol, port } = this.url;
    const done = (err: Error | null | undefined, socket?: Duplex | null) =>
      err || !socket ? connection.failed(err ?? new Error('no socket')) : connection.opened(socket);
    // Plain TCP: the socket reads where the connection says (net's `onread` option). TLS keeps the
    // shared connector (its session cache) and 'data' events.
    if (protocol === 'http:') {
      connectTcp({ hostname, port: Number(port) || 80, timeoutMs: this.options.connectTimeoutMs, onread: connection.reader() }, done);
      return;
    }
    this.tlsConnector ??= buildConnector({ timeout: this.options.connectTimeoutMs, ...(this.options.ca ? { ca: this.options.ca } : {}) });
    this.tlsConnector({ hostname, host, protocol, port, servername: undefined, localAddress: null, httpSocket: undefined }, done);
  }

  private sweep(): void {
    const now = performance.now();
    for (const connection of [...this.idle]) if (now - connection.idleSince >= connection.keepAliveMs) connection.destroy();
  }

  private maybeClosed(): void {
    if (!this.closing || this.queue.length > 0 || this.open.size > this.idle.length) return;
    for (const connection of [...this.open]) connection.destroy();
    for (const resolve of this.closedWaiters.splice(0)) resolve();
  }

  get defaultKeepAliveMs(): number {
    return this.options.keepAliveTimeoutMs ?? 4000;
  }
}

/** How the answer's body is framed. */
const enum Body {
  Length,
  Chunked,
  UntilClose,
}
/** Where the chunked decoder is. */
const enum Chunk {
  Size,
  Data,
  DataEnd,
  Trailers,
}

class Connection {
  idleSince = 0;
  keepAliveMs: number;
  private socket: Duplex | undefined;
  private request: Pending | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private gone = false;
  /** An answer ended in the read being handled. */
  private completed = false;
  // The answer being read.
  private head: Buffer | undefined;
  private inHead = true;
  private reuse = true;
  private body = Body.Length;
  private left = 0;
  private chunk = Chunk.Size;
  private line = '';
  /** The answer's content-length (Body.Length), to tell whether any of its body was read yet. */
  private length = 0;
  /** Plain TCP reads (reader()) land where `landing` says: a slab, or a large body's own buffer. */
  private reads = false;
  private readonly landing = new ReadLanding();

  constructor(private readonly pool: Http1Pool) {
    this.keepAliveMs = pool.defaultKeepAliveMs;
  }

  /** net's `onread` option for this connection's socket: it reads where the landing says. */
  reader(): { buffer: () => Buffer; callback: (bytes: number, buffer: Buffer) => void } {
    this.reads = true;
    return { buffer: () => this.landing.next(), callback: (bytes) => this.onRead(bytes) };
  }

  /** A read of `bytes` bytes, where the landing said. */
  private onRead(bytes: number): void {
    if (this.gone) return;
    if (!this.landing.filling) return this.onData(this.landing.took(bytes));
    const body = this.landing.filled(bytes);
    if (body) this.directDone(body);
  }

  /** The connector's socket, connected (TLS: handshake done). */
  opened(socket: Duplex): void {
    if (this.gone) {
      socket.destroy(); // the pool was destroyed meanwhile
      return;
    }
    this.socket = socket;
    if (!this.reads) socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (err: Error) => this.destroy(err));
    socket.on('end', () => this.onEnd());
    socket.on('close', () => this.destroy());
    const next = this.pool.nextQueued();
    if (next) this.send(next);
    else this.pool.released(this);
  }

  /** The connection did not open (refused, timed out, TLS refused): a queued request fails, not sent. */
  failed(error: Error): void {
    if (this.gone) return;
    this.gone = true;
    this.pool.failedToConnect(error);
    this.pool.removed(this);
  }

  get usable(): boolean {
    return !this.gone && this.socket !== undefined && !this.socket.destroyed && !this.socket.readableEnded;
  }

  send(pending: Pending): void {
    this.request = pending;
    let aborted: Error | undefined;
    const controller = {
      abort: (reason?: Error) => {
        aborted = reason ?? failure('Request aborted', 'UND_ERR_ABORTED');
        // Once written, the connection's answer can no longer be told apart: it goes.
        if (this.controller === controller) this.destroy(aborted);
      },
      get aborted() {
        return aborted !== undefined;
      },
      get reason() {
        return aborted ?? null;
      },
      paused: false,
      pause: () => undefined,
      resume: () => undefined,
    } as unknown as Dispatcher.DispatchController;
    pending.handler.onRequestStart?.(controller, {});
    if (aborted) {
      // Abandoned before a byte was written (its deadline passed while it waited): the connection stays usable.
      this.request = undefined;
      pending.handler.onResponseError?.(controller, aborted);
      return this.pool.released(this);
    }
    this.controller = controller;
    this.startAnswer();
    const { head, body } = pending;
    const socket = this.socket!;
    if (typeof body === 'string') socket.write(body.length === 0 ? head : head + body);
    else if (body.length <= COPY_BODY_BYTES) {
      const out = Buffer.allocUnsafe(head.length + body.length);
      out.write(head, 0, 'latin1');
      out.set(body, head.length);
      socket.write(out);
    } else {
      // A large body is not copied: head and body leave in one writev.
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(body);
      socket.uncork();
    }
  }

  /** Closes the connection; the request in flight, if any, fails with `error` (or "other side closed"). */
  destroy(error?: Error): void {
    if (this.gone) return;
    this.gone = true;
    this.socket?.destroy();
    const request = this.request;
    this.request = undefined;
    if (request) {
      const problem = error ?? failure('other side closed', 'UND_ERR_SOCKET');
      request.handler.onResponseError?.(this.controller as Dispatcher.DispatchController, problem);
    }
    this.pool.removed(this);
  }

  /** The server ended its side: the end of an answer framed by the connection's end, else a failure. */
  private onEnd(): void {
    if (this.request && !this.inHead && this.body === Body.UntilClose) this.finish();
    this.destroy();
  }

  private startAnswer(): void {
    this.inHead = true;
    this.head = undefined;
    this.line = '';
  }

  private onData(data: Buffer): void {
    let at = 0;
    while (at < data.length && this.request) {
      if (this.inHead) {
        at = this.readHead(data, at);
        if (at < 0) return;
      } else at = this.readBody(data, at);
    }
    if (this.gone) return;
    // Bytes nobody asked for (after the answer, or on an idle connection): the connection is out of step.
    if (at < data.length) return this.destroy(failure('unexpected data from the upstream', 'UND_ERR_SOCKET'));
    this.afterRead();
  }

  /** The last bytes of a large body arrived in its own buffer: the handler gets it whole, in one piece. */
  private directDone(body: Buffer): void {
    this.left = 0;
    this.deliver(body);
    this.finish();
    this.afterRead();
  }

  /** After a read: an answer that ended in it frees the connection for the next request (or closes it). */
  private afterRead(): void {
    if (this.completed) {
      this.completed = false;
      if (this.reuse && this.usable) this.pool.released(this);
      else this.destroy();
    }
  }

  /** Reads head bytes from data[at…]; returns where the body starts, data.length if the head goes on, or -1 after an error. */
  private readHead(data: Buffer, at: number): number {
    const bytes = this.head ? Buffer.concat([this.head, data.subarray(at)]) : data.subarray(at);
    const end = bytes.indexOf('\r\n\r\n');
    if (end < 0) {
      if (bytes.length > MAX_HEAD_BYTES) {
        this.destroy(failure('Headers Overflow Error', 'UND_ERR_HEADERS_OVERFLOW'));
        return -1;
      }
      this.head = Buffer.from(bytes);
      return data.length;
    }
    const consumed = end + 4 - (this.head?.length ?? 0);
    this.head = undefined;
    if (!this.parseHead(bytes.toString('latin1', 0, end))) return -1;
    return at + consumed;
  }

  /** Status line and headers: calls onResponseStart and sets the body's framing; false after an error. */
  private parseHead(text: string): boolean {
    const code = statusCode(text);
    if (code < 0) {
      this.destroy(failure(`invalid answer from the upstream: ${text.slice(0, 40)}`, 'UND_ERR_SOCKET'));
      return false;
    }
    if (code >= 100 && code < 200 && code !== 101) {
      this.startAnswer(); // informational: the real answer follows
      return true;
    }
    const headers = parseHeaders(text);
    const last = (name: string): string => {
      const v = headers[name];
      return (Array.isArray(v) ? v[v.length - 1] : v) ?? '';
    };
    const connection = last('connection').toLowerCase();
    this.reuse = text.charCodeAt(7) === 49 /* HTTP/1.1 */ ? !connection.includes('close') : connection.includes('keep-alive');
    const keepAlive = last('keep-alive');
    const hint = keepAlive === '' ? null : /timeout=(\d+)/i.exec(keepAlive);
    if (hint) this.keepAliveMs = Math.min(this.pool.defaultKeepAliveMs, Number(hint[1]) * 1000 - KEEP_ALIVE_MARGIN_MS);
    if (this.keepAliveMs <= 0) this.reuse = false;
    const length = headers['content-length'];
    this.inHead = false;
    if (last('transfer-encoding').toLowerCase().includes('chunked')) {
      this.body = Body.Chunked;
      this.chunk = Chunk.Size;
      this.line = '';
    } else if (code === 204 || code === 304) {
      this.body = Body.Length;
      this.left = 0;
    } else if (length !== undefined) {
      if (typeof length !== 'string' || !/^\d+$/.test(length)) {
        this.destroy(failure('invalid content-length from the upstream', 'UND_ERR_SOCKET'));
        return false;
      }
      this.body = Body.Length;
      this.left = this.length = Number(length);
    } else {
      this.body = Body.UntilClose;
      this.reuse = false;
    }
    this.request!.handler.onResponseStart?.(this.controller!, code, headers, '');
    if (this.body === Body.Length && this.left === 0) this.finish();
    return true;
  }

  /** Reads body bytes from data[at…]; returns where the next unread byte is. */
  private readBody(data: Buffer, at: number): number {
    if (this.body === Body.UntilClose) {
      this.deliver(data.subarray(at));
      return data.length;
    }
    if (this.body === Body.Length) {
      if (
        this.reads &&
        this.left >= DIRECT_BODY_BYTES &&
        this.left <= DIRECT_BODY_MAX_BYTES &&
        this.left === this.length &&
        this.left > data.length - at
      )
        return this.readDirect(data, at);
      const take = Math.min(this.left, data.length - at);
      this.left -= take;
      if (take > 0) this.deliver(data.subarray(at, at + take));
      if (this.left === 0) this.finish();
      return at + take;
    }
    return this.readChunked(data, at);
  }

  /** A large body starts in this read and goes on: it is read into a buffer of its own (the landing's fill). */
  private readDirect(data: Buffer, at: number): number {
    const body = largeBuffers.take(this.left);
    data.copy(body, 0, at);
    this.landing.fill(body, data.length - at);
    return data.length;
  }

  private readChunked(data: Buffer, at: number): number {
    while (at < data.length && this.request) {
      if (this.chunk === Chunk.Data) {
        const take = Math.min(this.left, data.length - at);
        this.left -= take;
        this.deliver(data.subarray(at, at + take));
        at += take;
        if (this.left === 0) this.chunk = Chunk.DataEnd;
        continue;
      }
      // Size lines, the CRLF after a chunk and the trailer lines: read line by line.
      const eol = data.indexOf(10, at);
      const part = data.toString('latin1', at, eol < 0 ? data.length : eol + 1);
      at = eol < 0 ? data.length : eol + 1;
      this.line += part;
      if (eol < 0) {
        if (this.line.length > MAX_HEAD_BYTES) this.destroy(failure('invalid chunked answer from the upstream', 'UND_ERR_SOCKET'));
        continue;
      }
      const line = this.line.replace(/\r?\n$/, '');
      this.line = '';
      if (this.chunk === Chunk.DataEnd) {
        if (line !== '') this.destroy(failure('invalid chunked answer from the upstream', 'UND_ERR_SOCKET'));
        this.chunk = Chunk.Size;
      } else if (this.chunk === Chunk.Trailers) {
        if (line === '') this.finish();
      } else {
        const size = /^([0-9a-fA-F]+)\s*(;.*)?$/.exec(line);
        if (!size) {
          this.destroy(failure('invalid chunked answer from the upstream', 'UND_ERR_SOCKET'));
          continue;
        }
        this.left = parseInt(size[1], 16);
        this.chunk = this.left === 0 ? Chunk.Trailers : Chunk.Data;
      }
    }
    return at;
  }

  private deliver(chunk: Buffer): void {
    if (chunk.length > 0) this.request?.handler.onResponseData?.(this.controller!, chunk);
  }

  /** The answer is complete: the handler has it; once its read is done, the connection serves the next request or closes (onData). */
  private finish(): void {
    const request = this.request!;
    const controller = this.controller!;
    this.request = undefined;
    this.controller = undefined;
    this.inHead = true;
    this.completed = true;
    request.handler.onResponseEnd?.(controller, NO_TRAILERS);
  }
}

/** The status of `HTTP/1.x NNN …`, or -1 when the head does not start with a status line. */
function statusCode(head: string): number {
  if (!head.startsWith('HTTP/1.') || head.charCodeAt(8) !== 32) return -1;
  const minor = head.charCodeAt(7);
  if (minor !== 48 && minor !== 49) return -1;
  let code = 0;
  for (let i = 9; i < 12; i++) {
    const digit = head.charCodeAt(i) - 48;
    if (!(digit >= 0 && digit <= 9)) return -1;
    code = code * 10 + digit;
  }
  const after = head.charCodeAt(12);
  return after === 32 || after === 13 || Number.isNaN(after) ? code : -1;
}

/** The header lines after the status line, names lower-cased; a repeated name gives an array (undici's shape). */
function parseHeaders(head: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  let at = head.indexOf('\r\n');
  let line = 0;
  while (at >= 0) {
    at += 2;
    const end = head.indexOf('\r\n', at);
    const stop = end < 0 ? head.length : end;
    const colon = head.indexOf(':', at);
    if (colon > at && colon < stop) {
      const name = headerName(head, at, colon, line++);
      const value = head.slice(colon + 1, stop).trim();
      const seen = headers[name];
      headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    at = end;
  }
  return headers;
}

/**
 * The n-th header's names of the last answer, as spelled and lower-cased. An upstream sends the same
 * header names in the same order in every answer: the name is then the same string as last time, not a
 * new one to trim, lower-case and look up (a fresh string as a key made every read and write of the
 * headers object a generic lookup that hashes it: 1.6 % of the proxy's CPU at -P 16, issue 25).
 * Process-wide, like a cache of spellings.
 */
const SPELLED: string[] = [];
const LOWERED: string[] = [];
const REMEMBERED_NAMES = 32;

function headerName(head: string, at: number, colon: number, line: number): string {
  const spelled = SPELLED[line];
  if (spelled !== undefined && spelled.length === colon - at && head.startsWith(spelled, at)) return LOWERED[line];
  const raw = head.slice(at, colon);
  const name = raw.trim().toLowerCase();
  if (line < REMEMBERED_NAMES) {
    SPELLED[line] = raw;
    LOWERED[line] = name;
  }
  return name;
}
