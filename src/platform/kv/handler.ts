// The Area B HTTP endpoint: authentication, headers, limits, and the answer in JSON or resp2.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../logger.js';
import { readBodyPieces, BodyTooLargeError, joinBody, type BodyPieces } from '../http-body.js';
import type { InternalStore } from '../internal-store.js';
import { startStream } from './events.js';
import { CredentialsRevokedError, Executor, StoreUnavailableError } from './executor.js';
import { replyToJsonObject } from './json-reply.js';
import { scanReply } from '../../resp/reply-scanner.js';
import type { Principal, Principals } from './principals.js';
import { parseKvRequest, readLargePathCommand } from './request.js';
import { LARGE_ARG_BYTES } from '../../resp/request-writer.js';
import { largeValuesSeen } from '../../large-value-heap.js';
import { largeBuffers, POOLED_MIN_BYTES } from '../../resp/large-buffers.js';

export interface KvLimits {
  maxRequestSize: number;
  dailyRequestLimit: number;
}

const ALLOWED_METHODS = new Set(['HEAD', 'GET', 'POST', 'PUT']);
/** A resp2 pipeline answer from this size on starts before it is complete (plainResp2). */
const STREAM_FROM = 4 * 1024 * 1024;
/** Binary answers up to this size are written as one latin1 string (binaryPieces); below POOLED_MIN_BYTES. */
const SMALL_ANSWER = 16 * 1024;
export const UNAUTHORIZED =
  'WRONGPASS invalid or missing auth token. See https://docs.upstash.com/redis/troubleshooting/http_unauthorized for details.';

export class KvHandler {
  private readonly syncEpoch = randomBytes(6).toString('base64url');
  private writes = 0;

  constructor(
    private readonly principals: Principals,
    private readonly executor: Executor,
    private readonly internal: InternalStore,
    private readonly limits: KvLimits,
    private readonly log: Logger,
  ) {}

  /** `upstash-sync-token`: changes after every write, as the real service's read-your-writes token does. */
  private syncToken(): string {
    return `${this.syncEpoch}-${this.writes}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (req.headers.origin !== undefined) {
      setCorsHeaders(res);
      if (isPreflight(req)) return answerPreflight(req, res);
    }
    if (path === HEALTH_PATH && (method === 'GET' || method === 'HEAD')) return this.health(res);
    if (!ALLOWED_METHODS.has(method)) {
      res.setHeader('Allow', 'HEAD, GET, POST, PUT');
      return this.json(res, 405, errorJson(`ERR HTTP method ${method} is not allowed: use HEAD, GET, POST or PUT`));
    }
    const token = bearerToken(req.headers.authorization) ?? queryToken(query);
    const principal = token ? (this.principals.known(token) ?? (await this.principals.resolve(token))) : undefined;
    if (!principal) return this.json(res, 401, errorJson(UNAUTHORIZED));

    const encoding = header(req, 'upstash-encoding', 'service-encoding');
    const format = header(req, 'upstash-response-format', 'service-response-format');
    if (encoding !== undefined && encoding.toLowerCase() !== 'base64') {
      return this.json(res, 400, errorJson(`ERR unsupported Upstash-Encoding '${encoding}': the only value is base64`));
    }
    if (format !== undefined && !['json', 'resp2'].includes(format.toLowerCase())) {
      return this.json(res, 400, errorJson(`ERR unsupported Upstash-Response-Format '${format}': use json or resp2`));
    }
    const base64 = encoding !== undefined;
    const resp2 = format?.toLowerCase() === 'resp2';
    if (base64 && resp2) {
      return this.json(
        res,
        400,
        errorJson('ERR Upstash-Encoding: base64 cannot be combined with Upstash-Response-Format: resp2 (resp2 is already binary-safe)'),
      );
    }

    let body: BodyPieces;
    try {
      body = await readBodyPieces(req, this.limits.maxRequestSize - Buffer.byteLength(req.url ?? ''));
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        const actual = err.actual + Buffer.byteLength(req.url ?? '');
        return this.json(
          res,
          400,
          errorJson(
            `ERR max request size exceeded. Limit: ${this.limits.maxRequestSize} bytes, Actual: ${actual} bytes. See https://upstash.com/docs/redis/troubleshooting/max_request_size_exceeded for details`,
          ),
        );
      }
      throw err;
    }
    if (body.size >= LARGE_ARG_BYTES) largeValuesSeen();
    const request =
      readLargePathCommand(path, query, body, this.executor.plainKind) ??
      parseKvRequest(path, query, joinBody(body), this.executor.plainKind);
    if (request.kind === 'invalid') return this.json(res, 400, errorJson(request.error));

    const commandCount =
      request.kind === 'pipeline' || request.kind === 'multi-exec'
        ? request.commands.length
        : request.kind === 'plain-pipeline'
          ? request.count
          : 1;
    if (this.limits.dailyRequestLimit > 0 && !(await this.withinDailyLimit(commandCount))) {
      return this.json(res, 400, errorJson('ERR max daily request limit exceeded'));
    }

    try {
      switch (request.kind) {
        case 'subscribe':
        case 'psubscribe':
        case 'ssubscribe':
        case 'monitor':
          return await startStream(
            req,
            res,
            principal,
            request.kind,
            request.kind === 'monitor' ? undefined : request.channel,
            { 'upstash-sync-token': this.syncToken() },
            (status, error) => this.json(res, status, errorJson(error)),
          );
        case 'command': {
          const {
            replies: [reply],
            wrote,
          } = await this.executor.run(principal, [request.command]);
          if (wrote) this.writes++;
          const isError = reply[0] === 0x2d;
          if (resp2) return this.binary(res, isError ? 400 : 200, reply);
          return this.json(res, isError ? 400 : 200, replyToJsonObject(reply, { base64 }));
        }
        case 'plain-command': {
          const reply = await this.executor.runPlain(principal, request.resp, 1);
          if (request.wrote) this.writes++;
          const isError = reply[0] === 0x2d;
          if (resp2) return this.binary(res, isError ? 400 : 200, reply);
          return this.json(res, isError ? 400 : 200, replyToJsonObject(reply, { base64 }));
        }
        case 'pipeline': {
          const { replies, wrote } = await this.executor.run(principal, request.commands);
          if (wrote) this.writes++;
          if (resp2) return this.binary(res, 200, Buffer.concat(replies));
          return this.json(res, 200, `[${replies.map((r) => replyToJsonObject(r, { base64 })).join(',')}]`);
        }
        case 'plain-pipeline': {
          if (resp2) {
            if (request.wrote) this.writes++; // before the answer starts (it may start before the last reply)
            return await this.plainResp2(res, principal, request.resp, request.count);
          }
          const replies = await this.executor.runPlain(principal, request.resp, request.count);
          if (request.wrote) this.writes++;
          return this.json(res, 200, pipelineJson(replies, base64));
        }
        case 'multi-exec': {
          const result = await this.executor.transaction(principal, request.commands);
          if ('error' in result) return this.json(res, 400, errorJson(result.error));
          if (result.wrote) this.writes++;
          return this.json(res, 200, `[${result.replies.map((r) => replyToJsonObject(r, { base64 })).join(',')}]`);
        }
      }
    } catch (err) {
      if (err instanceof CredentialsRevokedError) return this.json(res, 401, errorJson(UNAUTHORIZED));
      if (err instanceof StoreUnavailableError) {
        this.log.error({ err: err.message }, 'data store unavailable');
        return this.json(res, 500, errorJson(err.message));
      }
      throw err;
    }
  }

  /**
   * A plain pipeline's resp2 answer. Replies are held back and sent with a Content-Length (one write
   * of the pieces as they were read, not joined) while they add up to less than STREAM_FROM bytes;
   * past that, the answer starts at once and the rest follows as it arrives (chunked), so 600
   * pipelined 1 MiB GETs do not wait for 600 MiB before their first byte (the proxy's upstream
   * deadline grows with the bytes that arrive).
   */
  private async plainResp2(res: ServerResponse, principal: Principal, resp: Buffer, count: number): Promise<void> {
    let pieces: Buffer[] = [];
    let size = 0;
    let streaming = false;
    const onPiece = (piece: Buffer): void => {
      if (streaming) return writePiece(res, piece);
      pieces.push(piece);
      size += piece.length;
      if (size < STREAM_FROM) return;
      streaming = true;
      largeValuesSeen();
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'upstash-sync-token': this.syncToken() });
      for (const p of pieces) writePiece(res, p);
      pieces = [];
    };
    try {
      await this.executor.runPlain(principal, resp, count, onPiece);
    } catch (err) {
      // Part of the answer is sent: the connection is cut, so the client sees a failed request.
      if (streaming) return void res.destroy();
      throw err;
    }
    if (streaming) return void res.end();
    this.binaryPieces(res, 200, pieces, size);
  }

  /** Liveness and readiness without a token: 200 when the data store answers PING, 503 otherwise. */
  private async health(res: ServerResponse): Promise<void> {
    try {
      const ok = await this.executor.ping();
      if (ok) return this.json(res, 200, '{"status":"ok"}');
      return this.json(res, 503, '{"status":"unavailable","error":"the data store did not answer PING"}');
    } catch (err) {
      return this.json(res, 503, JSON.stringify({ status: 'unavailable', error: (err as Error).message }));
    }
  }

  private async withinDailyLimit(count: number): Promise<boolean> {
    if (this.limits.dailyRequestLimit <= 0) return true;
    const total = await this.internal.addUsage(count);
    return total <= this.limits.dailyRequestLimit;
  }

  private json(res: ServerResponse, status: number, text: string): void {
    if (res.headersSent) return void res.end();
    if (text.length >= LARGE_ARG_BYTES) largeValuesSeen();
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'upstash-sync-token': this.syncToken(),
    });
    res.end(text);
  }

  private binary(res: ServerResponse, status: number, bytes: Buffer): void {
    this.binaryPieces(res, status, [bytes], bytes.length);
  }

  /** A binary answer of `size` bytes in pieces, written together (one writev) without joining them. */
  private binaryPieces(res: ServerResponse, status: number, pieces: readonly Buffer[], size: number): void {
    if (size >= LARGE_ARG_BYTES) largeValuesSeen();
    res.writeHead(status, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': size,
      'upstash-sync-token': this.syncToken(),
    });
    // A small answer (every answer at -P 1) goes as one latin1 string: node:http then sends its head and
    // body in one write of one string, where a Buffer body is corked and written with the head as a
    // writev of two (bench/README.md, the platform's cost per /pipeline call). latin1 keeps every byte.
    if (size <= SMALL_ANSWER) return void res.end(latin1Of(pieces), 'latin1');
    if (pieces.length === 1 && pieces[0].length < POOLED_MIN_BYTES) return void res.end(pieces[0]);
    res.cork();
    for (const piece of pieces) writePiece(res, piece);
    res.end();
    res.uncork();
  }
}

/**
 * Writes a piece of an answer. A large bulk that redis-server's connection read straight into a buffer
 * of the large-value pool (redis/connection.ts) goes back to the pool once written, for the next one:
 * no fresh 1 MiB per GET (issue 25). After a failed write it is left to the garbage collector.
 */
function writePiece(res: ServerResponse, piece: Buffer): void {
  if (!largeBuffers.writeGivingBack(res, piece)) res.write(piece);
}

/** The pieces' bytes as one latin1 string (one character per byte). */
function latin1Of(pieces: readonly Buffer[]): string {
  if (pieces.length === 1) return pieces[0].toString('latin1');
  let text = '';
  for (const piece of pieces) text += piece.toString('latin1');
  return text;
}

/** `[{"result": …}, …]` of replies back to back in one Buffer (a plain pipeline's). */
function pipelineJson(replies: Buffer, base64: boolean): string {
  const parts: string[] = [];
  for (let pos = 0; pos < replies.length;) {
    const end = scanReply(replies, pos);
    parts.push(replyToJsonObject(replies.subarray(pos, end), { base64 }));
    pos = end;
  }
  return `[${parts.join(',')}]`;
}

/** Unauthenticated health route (GET or HEAD); no Redis command is named HEALTH. */
export const HEALTH_PATH = '/health';

// CORS (docs/platform-kv.md "Browsers"): tokens travel in the Authorization header or `_token`, never in
// cookies, so any origin may call the API with a token it holds, as the Read Only token is meant for
// browsers (spec 5). A preflight is an OPTIONS request with Origin and Access-Control-Request-Method; any
// other OPTIONS request is still refused with 405 like every method but HEAD, GET, POST and PUT.
const CORS_METHODS = 'HEAD, GET, POST, PUT';
const CORS_EXPOSED = 'upstash-sync-token, content-type';

function setCorsHeaders(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED);
}

function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const requested = String(req.headers['access-control-request-method']).toUpperCase();
  if (!CORS_METHODS.split(', ').includes(requested)) {
    // No Allow-Methods for it: the browser blocks the request; the body says why to a person reading it.
    const body = errorJson(`ERR HTTP method ${requested} is not allowed: use HEAD, GET, POST or PUT`);
    res.writeHead(405, { Allow: CORS_METHODS, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    return void res.end(body);
  }
  const headers: Record<string, string> = {
    'Access-Control-Allow-Methods': CORS_METHODS,
    'Access-Control-Max-Age': '86400',
    Vary: 'Access-Control-Request-Headers',
    'Content-Length': '0',
  };
  const wanted = req.headers['access-control-request-headers'];
  if (wanted) headers['Access-Control-Allow-Headers'] = String(wanted);
  res.writeHead(204, headers);
  res.end();
}

export function errorJson(text: string): string {
  return JSON.stringify({ error: text });
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  // The usual spelling without a regular expression: `Bearer <token>`, nothing around it.
  const n = authorization.length;
  if (n > 7 && authorization.startsWith('Bearer ') && !isSpace(authorization.charCodeAt(7)) && !isSpace(authorization.charCodeAt(n - 1)))
    return authorization.slice(7);
  const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return m ? m[1] : undefined;
}

/** `\s` among the characters a header value can hold (node:http gives them as latin1). */
function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0;
}

function queryToken(query: string): string | undefined {
  if (!query) return undefined;
  return new URLSearchParams(query).get('_token') ?? undefined;
}

/** Upstash-* and the spec's Service-* spellings of a header (names given whole: no string built per request). */
function header(req: IncomingMessage, upstash: string, service: string): string | undefined {
  const v = req.headers[upstash] ?? req.headers[service];
  return Array.isArray(v) ? v[0] : v;
}
