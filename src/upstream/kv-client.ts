// The proxy's HTTP client of Area B (the key-value REST API). It turns ordered batches of commands
// into as few HTTP requests as the rules allow and gives back one raw RESP2 reply per command,
// passing the upstream's resp2 bytes through without decoding them (an upstream that answers JSON
// instead is read by content type and converted by reply type: json-to-resp.ts). It knows nothing of sockets or
// sessions: the batcher hands it commands and gets replies (or error replies) back, never a
// rejection.
//
// Batches: commands whose arguments are all valid UTF-8 go in JSON `/pipeline` requests (split so
// each body stays under maxRequestBytes); a command with a binary argument, or a large value as its
// last argument, goes alone in the path form. The parts of a batch run one after the other, so the upstream sees them in order.
// Transactions go as one /multi-exec call, or as one EVAL when keys are watched or an argument is
// binary (script-transaction.ts).
import { callPool, type Pool } from './undici-pool.js';
import { PROXY_DEFAULTS, type UpstreamFormat } from '../config.js';
import { errorReply, oneLine } from '../resp/protocol.js';
import { describeReplies, splitReplies } from '../resp/reply-scanner.js';
import { exchange, transferAllowanceMs, type Exchange, type ExchangeRequest, type PoolProgress } from './http-exchange.js';
import { parseJsonExactIntegers } from './json-parse.js';
import { AUTH_FAILED, CLIENT_TOKEN_REFUSED, failureText, jsonErrorField, malformedText, skippedText, statusText } from './kv-errors.js';
import { redact } from './redact.js';
import { splitResp2Ranges, splitResp2Replies, type SplitAnswer } from '../resp/resp2-splitter.js';
import { largeBuffers } from '../resp/large-buffers.js';
import { joinReply, splitResp2Pieces, type Reply } from '../resp/reply-pieces.js';
import { pathForm } from './path-form.js';
import { measureCommand, plainBody, writeCommands, type Escapes } from './pipeline-body.js';
import { jsonPipelineToResp, type JsonItem } from './json-to-resp.js';
import { readTransactionReply, scriptLimitError, transactionCommand, type WatchedKeys } from './script-transaction.js';
import { ScriptBodies } from './script-bodies.js';
import { planScriptSlots, resolveScriptSlots } from './transaction-scripts.js';

export interface KvClientOptions {
  /** Base URL of Area B, e.g. http://127.0.0.1:8079 or https://xyz.upstash.io (no trailing slash needed). */
  url: string;
  /** Bearer token; never put it in logs or error messages. */
  token: string;
  /** Per HTTP request (waiting for a connection, headers and body); defaults: PROXY_DEFAULTS in config.ts. */
  timeoutMs: number;
  /** undici Pool size. */
  connections: number;
  /** Keep every request body under this (the upstream's max request size is larger). */
  maxRequestBytes: number;
  /**
   * What to ask of /pipeline: `resp2` (raw reply bytes; a JSON answer is an error), `json` (JSON with
   * base64 strings, turned into RESP by reply type), or `auto` (default: ask resp2, and if the
   * upstream answers JSON, convert that answer and ask JSON from then on).
   */
  format?: UpstreamFormat;
  /** The upstream's own max request size: one command larger than this is refused before it is sent. */
  upstreamMaxRequestBytes?: number;
  /** Extra trusted CA certificates (PEM) for an HTTPS upstream with a private CA. */
  ca?: string | Buffer;
}

/**
 * Whose token a call carries when it is not the configured one (pass-through and ACL users): the
 * token, and for a token obtained from credentials (ACL RESTTOKEN) a way to get a fresh one after
 * the upstream revoked it (HTTP 401). A 401 means nothing ran, so the request is sent again once.
 */
export interface Credential {
  readonly token: string;
  refresh?: () => Promise<string | undefined>;
}

export type { JsonItem };

export type TransactionOutcome =
  | { kind: 'executed'; items: JsonItem[] }
  /** Run as one EVAL (WATCH, binary arguments): the RESP2 reply of each command, as Lua gave it back. */
  | { kind: 'executed-script'; replies: Buffer[] }
  /** A watched key changed (or its WATCH failed): nothing ran; EXEC answers null. */
  | { kind: 'aborted' }
  | { kind: 'discarded'; error: string }
  | { kind: 'failed'; error: string };

/** HTTP statuses with which the upstream refuses a whole request before executing any of it. */
const REJECTED_WHOLE = new Set([400, 413, 414, 431]);

/** How an answer to a request of `count` commands is to be used. */
type Verdict =
  | { kind: 'replies'; replies: Reply[] }
  /** The upstream refused the (single) command with this error reply; the batch goes on. */
  | { kind: 'refused'; reply: Buffer }
  /** The request failed: its commands get `reply`; the batch stops, the commands not sent yet get `rest`. */
  | { kind: 'failed'; reply: Buffer; rest: Buffer }
  /** Rejected whole before anything ran: send each half on its own. */
  | { kind: 'isolate' };

/** The state of one pipeline call. */
interface Batch {
  readonly commands: Buffer[][];
  /**
   * Size of each command as JSON; -1 for the path form. Undefined while the batch goes as one plain body
   * (plainBody), measured only if it must be split after all (an upstream that rejects it whole).
   */
  sizes: number[] | undefined;
  escapes: Escapes;
  readonly replies: Reply[];
  /** Set once a request failed: the reply of every command not sent yet. */
  stop: Buffer | undefined;
  /** The client's own token (pass-through, ACL users); undefined = the configured token. */
  readonly credential: Credential | undefined;
  /** true: the caller takes the answer as ranges (pipelineRanges); the SplitAnswer once the whole batch came as one. */
  ranges?: SplitAnswer | boolean;
}

/**
 * The replies of an answer as ranges (SplitAnswer): a 200 of RESP2 bytes in one piece, none an error,
 * and not a pooled large buffer (that one is given back once written: reply-queue.ts).
 */
function rangesOf(answer: Exchange, count: number): SplitAnswer | undefined {
  if (!answer.ok || answer.status !== 200 || answer.pieces.length > 1) return undefined;
  if (!answer.contentType.startsWith('application/octet-stream') || largeBuffers.owns(answer.body)) return undefined;
  return splitResp2Ranges(answer.body, count);
}

export class KvClient {
  private pool: Pool;
  private readonly origin: string;
  private readonly pipelinePath: string;
  private readonly multiExecPath: string;
  private readonly prefix: string;
  private jsonHeaders: Record<string, string>;
  private binaryHeaders: Record<string, string>;
  private readonly format: UpstreamFormat;
  /** True once /pipeline is asked for JSON (format json, or auto after a JSON answer). */
  private askJson = false;
  private readonly transactionHeaders: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly connections: number;
  private readonly maxRequestBytes: number;
  private readonly token: string;
  private readonly upstreamMaxRequestBytes: number;
  /** A batch whose JSON body is at most this large goes as one request, written in one pass (plainBody). */
  private readonly plainLimit: number;
  private readonly ca: string | Buffer | undefined;
  /** The script bodies passed on to this upstream, for the transactions that run them from a script. */
  private readonly scripts = new ScriptBodies();
  /** When an answer last arrived: requests waiting for a pooled connection wait while answers come (http-exchange.ts). */
  private readonly progress: PoolProgress = { at: -Infinity };
  private closed = false;

  constructor(options: KvClientOptions) {
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new Error('the upstream URL is not a valid URL: use http(s)://host[:port], e.g. https://xyz.upstash.io');
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new Error(`the upstream URL must start with http:// or https:// (got '${base.protocol}//')`);
    }
    this.origin = base.origin;
    this.prefix = base.pathname.replace(/\/+$/, '');
    this.pipelinePath = this.prefix + '/pipeline';
    this.multiExecPath = this.prefix + '/multi-exec';
    this.token = options.token;
    this.timeoutMs = positive(options.timeoutMs, PROXY_DEFAULTS.upstreamTimeoutMs);
    this.connections = positive(options.connections, PROXY_DEFAULTS.upstreamConnections);
    this.maxRequestBytes = positive(options.maxRequestBytes, PROXY_DEFAULTS.maxRequestBytes);
    this.upstreamMaxRequestBytes = positive(options.upstreamMaxRequestBytes ?? 0, PROXY_DEFAULTS.upstreamMaxRequestBytes);
    this.plainLimit = Math.min(this.maxRequestBytes, this.upstreamMaxRequestBytes);
    this.ca = options.ca;
    const authorization = `Bearer ${options.token}`;
    this.jsonHeaders = { authorization, 'content-type': 'application/json', 'upstash-response-format': 'resp2' };
    this.binaryHeaders = { authorization, 'content-type': 'application/octet-stream', 'upstash-response-format': 'resp2' };
    this.format = options.format ?? 'auto';
    if (this.format === 'json') this.switchToJson();
    this.transactionHeaders = { authorization, 'content-type': 'application/json', 'upstash-encoding': 'base64' };
    this.pool = this.newPool();
  }

  /** Runs commands in order; resolves with exactly one raw RESP2 reply per command, never rejects. */
  async pipeline(commands: Buffer[][], credential?: Credential): Promise<Buffer[]> {
    const replies = await this.pipelineReplies(commands, credential);
    for (let i = 0; i < replies.length; i++) replies[i] = joinReply(replies[i]);
    return replies as Buffer[];
  }

  /**
   * Like pipeline, but a large bulk reply (a 1 MiB GET) comes in the pieces it was read in
   * (resp/reply-pieces.ts), for a caller that writes it as it is.
   */
  async pipelineReplies(commands: Buffer[][], credential?: Credential): Promise<Reply[]> {
    return (await this.run(commands, credential, false)) as Reply[];
  }

  /**
   * Like pipelineReplies, but the common answer (one request of plain arguments, RESP2 in one piece, no
   * error reply) comes as the answer's bytes and its reply ends: no view per reply (issue 25).
   */
  pipelineRanges(commands: Buffer[][], credential?: Credential): Promise<Reply[] | SplitAnswer> {
    return this.run(commands, credential, true);
  }

  /** pipelineReplies, or with `ranges` pipelineRanges. */
  private async run(commands: Buffer[][], credential: Credential | undefined, ranges: boolean): Promise<Reply[] | SplitAnswer> {
    const n = commands.length;
    const replies = new Array<Reply>(n);
    if (n === 0) return replies;
    try {
      if (this.closed) {
        replies.fill(errorReply('ERR upstream client is closed; the command was not executed'));
        return replies;
      }
      for (let i = 0; i < n; i++) this.scripts.learn(commands[i]);
      const batch: Batch = { commands, sizes: undefined, escapes: undefined, replies, stop: undefined, credential, ranges };
      // The usual batch: plain arguments that fit one request, written in one pass over their bytes.
      const plain = plainBody(commands, this.plainLimit, LARGE_BODY_ARGUMENT);
      if (plain !== undefined) {
        await this.sendJson(batch, 0, n, plain);
        return typeof batch.ranges === 'object' ? batch.ranges : replies;
      }
      batch.ranges = false;
      // Size of each command as JSON (-1: JSON cannot carry it, path form).
      const sizes = measureBatch(batch);

      // Consecutive JSON commands share a request while it stays under maxRequestBytes; a command
      // JSON cannot carry goes alone. Each request waits for the previous one (order).
      let from = 0;
      let bytes = 2; // [ ]
      for (let i = 0; i < n; i++) {
        if (sizes[i] < 0) {
          if (from < i) await this.sendJson(batch, from, i);
          await this.sendBinary(batch, i);
          from = i + 1;
          bytes = 2;
          continue;
        }
        const add = sizes[i] + (i > from ? 1 : 0);
        if (i > from && bytes + add > this.maxRequestBytes) {
          await this.sendJson(batch, from, i);
          from = i;
          bytes = 2 + sizes[i];
        } else {
          bytes += add;
        }
      }
      if (from < n) await this.sendJson(batch, from, n);
    } catch (err) {
      const reply = errorReply(
        this.redact(
          `ERR internal error of the upstream client (${String((err as Error)?.message ?? err)}); the outcome of this command is unknown`,
        ),
      );
      for (let i = 0; i < n; i++) if (replies[i] === undefined) replies[i] = reply;
    }
    return replies;
  }

  /**
   * MULTI…EXEC as one /multi-exec call (JSON with `Upstash-Encoding: base64`), or, with watched keys or
   * an argument JSON cannot carry, as one EVAL (script-transaction.ts). Never rejects.
   */
  async transaction(commands: Buffer[][], watch?: WatchedKeys, credential?: Credential): Promise<TransactionOutcome> {
    try {
      if (this.closed) return { kind: 'failed', error: 'ERR upstream client is closed; the transaction was not executed' };
      if (watch && (watch.broken || watch.fingerprints.length < watch.keys.length || watch.fingerprints.includes(undefined)))
        return { kind: 'aborted' };
      const watching = watch !== undefined && watch.keys.length > 0;
      if (commands.length === 0 && !watching) return { kind: 'executed', items: [] };
      const sizes = new Array<number>(commands.length);
      const escapes: { map: Escapes } = { map: undefined };
      let binary = false;
      for (let i = 0; i < commands.length; i++) {
        sizes[i] = measureCommand(commands[i], escapes);
        if (sizes[i] < 0) {
          if (commands[i].length === 0) return { kind: 'failed', error: emptyCommandInTransaction(i) };
          binary = true;
        }
      }
      if (watching || binary) return await this.scriptTransaction(commands, watch, credential);
      for (const command of commands) this.scripts.learn(command);
      const body = writeCommands(commands, sizes, escapes.map, 0, commands.length);
      if (body.length > this.upstreamMaxRequestBytes)
        return { kind: 'failed', error: tooLargeText(body.length, this.upstreamMaxRequestBytes, 'transaction') };
      const answer = await this.send({ path: this.multiExecPath, headers: this.transactionHeaders, body }, credential);
      return this.readTransaction(answer, commands.length, credential !== undefined);
    } catch (err) {
      return {
        kind: 'failed',
        error: oneLine(
          `ERR internal error of the upstream client (${String((err as Error)?.message ?? err)}); the outcome of the transaction is unknown`,
        ),
      };
    }
  }

  /**
   * The transaction as one EVAL, sent like any command (JSON, or the path form when binary). Queued
   * scripts: the upstream is first asked which EVALSHA scripts it has (and sent the EVAL bodies to
   * cache), in one request (transaction-scripts.ts).
   */
  private async scriptTransaction(
    commands: Buffer[][],
    watch: WatchedKeys | undefined,
    credential: Credential | undefined,
  ): Promise<TransactionOutcome> {
    const plan = planScriptSlots(commands, this.scripts);
    if ('error' in plan) return { kind: 'discarded', error: plan.error };
    const slots = resolveScriptSlots(plan, plan.preflight.length > 0 ? await this.pipeline(plan.preflight, credential) : []);
    if ('error' in slots) return { kind: 'discarded', error: this.redact(slots.error) };
    const tooLarge = scriptLimitError(slots);
    if (tooLarge) return { kind: 'failed', error: tooLarge };
    const [reply] = await this.pipeline([transactionCommand(slots, watch)], credential);
    const outcome = readTransactionReply(reply, commands.length);
    switch (outcome.kind) {
      case 'replies':
        return { kind: 'executed-script', replies: outcome.replies };
      case 'aborted':
        return outcome;
      case 'discarded':
      case 'failed':
        return { kind: outcome.kind, error: this.redact(outcome.error) };
    }
  }

  /** From now on /pipeline and path-form requests ask for JSON with base64 strings. */
  private switchToJson(): void {
    const { authorization } = this.jsonHeaders;
    this.askJson = true;
    this.jsonHeaders = { authorization, 'content-type': 'application/json', 'upstash-encoding': 'base64' };
    this.binaryHeaders = { authorization, 'content-type': 'application/octet-stream', 'upstash-encoding': 'base64' };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.pool;
    // Requests in flight end within timeoutMs (their own deadline); don't wait longer than that.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      pool.close().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.timeoutMs + 100);
      }),
    ]);
    clearTimeout(timer);
    if (!pool.destroyed) await pool.destroy().catch(() => undefined);
  }

  /**
   * Commands [from, to) as one /pipeline request (`body`, when written already); a request the upstream
   * rejects whole is split in halves.
   */
  private async sendJson(batch: Batch, from: number, to: number, body?: Buffer): Promise<void> {
    const { replies } = batch;
    if (batch.stop) {
      replies.fill(batch.stop, from, to);
      return;
    }
    const count = to - from;
    if (body === undefined) {
      const sizes = batch.sizes ?? measureBatch(batch);
      if (count === 1 && sizes[from] + 2 > this.upstreamMaxRequestBytes) {
        // Refused here: the upstream would answer 413 after receiving all of it.
        replies[from] = errorReply(tooLargeText(sizes[from] + 2, this.upstreamMaxRequestBytes, 'command'));
        return;
      }
      body = writeCommands(batch.commands, sizes, batch.escapes, from, to);
    }
    const asked = this.askJson;
    const answer = await this.send({ path: this.pipelinePath, headers: this.jsonHeaders, body }, batch.credential);
    if (batch.ranges === true && from === 0 && to === batch.commands.length) {
      const split = rangesOf(answer, count);
      if (split !== undefined) return void (batch.ranges = split);
    }
    const verdict = this.readPipeline(answer, batch.commands.slice(from, to), asked, batch.credential !== undefined);
    switch (verdict.kind) {
      case 'replies':
        for (let i = 0; i < count; i++) replies[from + i] = verdict.replies[i];
        return;
      case 'refused':
        replies.fill(verdict.reply, from, to);
        return;
      case 'failed':
        replies.fill(verdict.reply, from, to);
        batch.stop = verdict.rest;
        return;
      case 'isolate': {
        // Nothing ran: find the command(s) the upstream objects to by sending each half on its own.
        const middle = from + (count >> 1);
        await this.sendJson(batch, from, middle);
        await this.sendJson(batch, middle, to);
        return;
      }
    }
  }

  /** One command JSON cannot carry, alone in the path form. */
  private async sendBinary(batch: Batch, index: number): Promise<void> {
    const command = batch.commands[index];
    if (batch.stop) {
      batch.replies[index] = batch.stop;
      return;
    }
    if (command.length === 0) {
      batch.replies[index] = errorReply('ERR empty command');
      return;
    }
    const { path, body } = pathForm(command);
    const size = path.length + (body?.length ?? 0);
    if (size > this.upstreamMaxRequestBytes) {
      batch.replies[index] = errorReply(tooLargeText(size, this.upstreamMaxRequestBytes, 'command'));
      return;
    }
    const asked = this.askJson;
    const answer = await this.send({ path: this.prefix + path, headers: this.binaryHeaders, body }, batch.credential);
    const verdict = this.readPipeline(answer, [command], asked, batch.credential !== undefined);
    switch (verdict.kind) {
      case 'replies':
        batch.replies[index] = verdict.replies[0];
        return;
      case 'failed':
        batch.stop = verdict.rest;
        batch.replies[index] = verdict.reply;
        return;
      case 'refused':
        batch.replies[index] = verdict.reply;
        return;
      case 'isolate': // never for one command
        batch.replies[index] = errorReply('ERR upstream rejected the command');
        return;
    }
  }

  /**
   * Reads the answer to a request of `commands` (a /pipeline or a single path-form command): resp2
   * bytes, or JSON (`base64`: whether this request asked for base64 strings) turned into RESP2.
   */
  private readPipeline(answer: Exchange, commands: Buffer[][], base64: boolean, clientToken = false): Verdict {
    const count = commands.length;
    if (!answer.ok)
      return this.failed(
        failureText(answer, 'command', this.timeoutMs),
        answer.notSent,
        answer.timedOut ? `timed out after ${this.timeoutMs} ms` : answer.problem,
      );
    const { status } = answer;
    const binary = answer.contentType.startsWith('application/octet-stream');
    if (status === 200 && binary && answer.pieces.length > 1) {
      // The replies as views of the pieces the answer arrived in, a large bulk (GET of 1 MiB) kept in
      // its pieces: the answer is not joined (a copy, and fresh memory as large as the answer).
      const replies = splitResp2Pieces(answer.pieces, count);
      if (replies) return { kind: 'replies', replies };
    }
    const body = answer.body;
    if (status === 200 && binary) {
      const replies = splitResp2Replies(body, count);
      // A large answer read straight into a pooled buffer (http1-pool.ts) that is one whole reply: the
      // reply is that very buffer, so the client's writer gives it back once written (reply-queue.ts).
      if (replies && count === 1 && replies[0].length === body.length && largeBuffers.owns(body)) replies[0] = body;
      if (replies) return { kind: 'replies', replies };
      if (splitReplies(body, count)) return this.failed(malformedText('a reply that is not RESP2', 'command'), false, 'malformed answer');
      return this.failed(malformedText(describeReplies(body, count), 'command'), false, 'malformed answer');
    }
    if (status === 401) return this.failed(clientToken ? CLIENT_TOKEN_REFUSED : AUTH_FAILED, true, 'HTTP 401');
    if (REJECTED_WHOLE.has(status)) {
      if (binary && body.length > 0) {
        // A command's own error reply (single command), or replies in place.
        const replies = splitReplies(body, count);
        if (replies) return { kind: 'replies', replies };
        if (count === 1) return this.failed(malformedText(describeReplies(body, 1), 'command'), false, 'malformed answer');
      }
      if (count > 1) return { kind: 'isolate' };
      const error = jsonErrorField(body);
      const text =
        error !== undefined
          ? this.redact(error) || 'ERR upstream rejected the command'
          : statusText(status, body, 'command', (s) => this.redact(s));
      return { kind: 'refused', reply: errorReply(text) };
    }
    if (status >= 200 && status < 300 && answer.contentType.includes('json') && this.format !== 'resp2') {
      // The upstream answers JSON (it does not offer resp2, or format json): convert by reply type.
      if (!this.askJson) this.switchToJson();
      const replies = jsonPipelineToResp(body, commands, base64);
      if (Array.isArray(replies)) return { kind: 'replies', replies };
      return this.failed(malformedText(replies.problem, 'command'), false, 'malformed answer');
    }
    if (status >= 200 && status < 300) {
      const problem = answer.contentType.includes('json')
        ? `HTTP ${status} with JSON instead of resp2 bytes: the upstream ignores Upstash-Response-Format: resp2 (start the proxy with --upstream-format auto or json to convert JSON answers)`
        : `HTTP ${status} with content-type '${answer.contentType || 'none'}'`;
      return this.failed(malformedText(problem, 'command'), false, 'malformed answer');
    }
    return this.failed(
      statusText(status, body, 'command', (s) => this.redact(s), answer.retryAfter),
      status < 500,
      `HTTP ${status}`,
    );
  }

  /**
   * A failed request. When it was not executed, the commands after it would meet the same fate and
   * get the same error; when its outcome is unknown, they are not sent (so nothing overtakes a
   * command that may still run) and say why.
   */
  private failed(text: string, notExecuted: boolean, cause: string): Verdict {
    const reply = errorReply(this.redact(text));
    const rest = notExecuted ? reply : errorReply(this.redact(skippedText(cause)));
    return { kind: 'failed', reply, rest };
  }

  private readTransaction(answer: Exchange, count: number, clientToken: boolean): TransactionOutcome {
    if (!answer.ok) return { kind: 'failed', error: this.redact(failureText(answer, 'transaction', this.timeoutMs)) };
    const { status, body } = answer;
    if (status === 401) return { kind: 'failed', error: clientToken ? CLIENT_TOKEN_REFUSED : AUTH_FAILED };
    if (status === 200) {
      let parsed: unknown;
      try {
        parsed = parseJsonExactIntegers(body.toString('utf8'));
      } catch {
        return { kind: 'failed', error: malformedText('HTTP 200 whose body is not JSON', 'transaction') };
      }
      if (!Array.isArray(parsed)) {
        return { kind: 'failed', error: malformedText('HTTP 200 whose body is not a JSON array', 'transaction') };
      }
      if (parsed.length !== count) {
        return { kind: 'failed', error: malformedText(`${parsed.length} items for ${count} commands`, 'transaction') };
      }
      for (const item of parsed) {
        if (!isJsonItem(item)) {
          return { kind: 'failed', error: malformedText('an item is neither {"result": …} nor {"error": "…"}', 'transaction') };
        }
      }
      return { kind: 'executed', items: parsed as JsonItem[] };
    }
    if (REJECTED_WHOLE.has(status)) {
      const error = jsonErrorField(body);
      if (error !== undefined)
        return { kind: 'discarded', error: oneLine(this.redact(error)) || 'ERR transaction discarded by the upstream' };
    }
    return { kind: 'failed', error: statusText(status, body, 'transaction', (s) => this.redact(s), answer.retryAfter) };
  }

  /** One HTTP request; a pool that was destroyed under us is replaced (the request had not been sent). */
  private async send(request: ExchangeRequest, credential?: Credential): Promise<Exchange> {
    if (credential) request = { ...request, headers: { ...request.headers, authorization: `Bearer ${credential.token}` } };
    const answer = await this.sendOnce(request);
    if (answer.ok && answer.status === 401 && credential?.refresh) {
      // A token made from credentials was revoked (password changed, token rotated): get a new one
      // and try once more; a 401 means the upstream ran nothing.
      const token = await credential.refresh().catch(() => undefined);
      if (token) return this.sendOnce({ ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } });
    }
    return answer;
  }

  private async sendOnce(request: ExchangeRequest): Promise<Exchange> {
    const answer = await exchange(this.pool, request, this.timeoutMs, this.progress);
    if (!answer.ok && answer.notSent && !this.closed && (answer.code === 'UND_ERR_DESTROYED' || answer.code === 'UND_ERR_CLOSED')) {
      const dead = this.pool;
      this.pool = this.newPool();
      dead.destroy().catch(() => undefined);
      return exchange(this.pool, request, this.timeoutMs, this.progress);
    }
    return answer;
  }

  private newPool(): Pool {
    return callPool(this.origin, {
      connections: this.connections,
      connectTimeoutMs: this.timeoutMs,
      ca: this.ca,
      // The exchange's own deadline is the one that counts; these are backstops (the largest request
      // has time for its bytes).
      headersTimeoutMs: Math.ceil(this.timeoutMs + transferAllowanceMs(this.upstreamMaxRequestBytes)) + 1000,
      bodyTimeoutMs: this.timeoutMs + 1000,
    });
  }

  /** Texts that came from outside (upstream bodies, system errors) never carry the token. */
  private redact(text: string): string {
    return redact(text, this.token);
  }
}

function tooLargeText(bytes: number, limit: number, subject: 'command' | 'transaction'): string {
  return `ERR ${subject === 'command' ? 'command' : 'transaction'} too large for the upstream: its request would be ${bytes} bytes and the upstream accepts at most ${limit} (--upstream-max-request-size); the ${subject} was not executed`;
}

function positive(value: number, fallback: number): number {
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function isJsonItem(item: unknown): item is JsonItem {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return false;
  return 'result' in item || typeof (item as { error?: unknown }).error === 'string';
}

/** A last argument from this size on travels as the raw body of the path form (SET k <value>). */
const LARGE_BODY_ARGUMENT = 128 * 1024;
/** … when the arguments before it, which go in the path, are this small. */
const SMALL_PATH = 1024;

/**
 * A command whose last argument is a large value (SET, APPEND, LPUSH … of a big value) goes alone in
 * the path form, the value as the raw request body: JSON would have the proxy check (and maybe
 * escape) every byte of it and the upstream parse it back, several milliseconds per MiB on both
 * sides (bench/README.md, large values, issue 25). Alone anyway: a 1 MiB command fills a /pipeline
 * request (maxRequestBytes) by itself.
 */
function largeLastArgument(command: readonly Buffer[]): boolean {
  const n = command.length;
  if (n < 2 || command[n - 1].length < LARGE_BODY_ARGUMENT) return false;
  let path = 0;
  for (let i = 0; i < n - 1; i++) path += command[i].length;
  return path <= SMALL_PATH;
}

/**
 * The size of each command of the batch as JSON (-1: JSON cannot carry it, or its large last argument
 * goes as the body of the path form), and the escaped arguments; kept on the batch.
 */
function measureBatch(batch: Batch): number[] {
  const { commands } = batch;
  const sizes = new Array<number>(commands.length);
  const escapes: { map: Escapes } = { map: undefined };
  for (let i = 0; i < commands.length; i++) sizes[i] = largeLastArgument(commands[i]) ? -1 : measureCommand(commands[i], escapes);
  batch.sizes = sizes;
  batch.escapes = escapes.map;
  return sizes;
}

function emptyCommandInTransaction(index: number): string {
  return `ERR command ${index + 1} of the transaction is empty; the transaction was not sent`;
}
