// One client connection: reads requests, decides per command where it goes (local answer,
// upstream, refusal, transaction queue), and writes the replies back strictly in request order, in the
// connection's protocol (RESP2, or RESP3 after HELLO 3: upstream replies are converted by reply type).
import type net from 'node:net';
import { replyShape } from '../commands/reply-types.js';
import { checkCommand, routeOf, type CommandSpec } from '../commands/table.js';
import { RequestReader } from '../resp/request-reader.js';
import type { ReplyShape } from '../resp/reply-shape.js';
import { toResp3 } from '../resp/resp3-converter.js';
import { jsonItemToResp } from '../upstream/json-to-resp.js';
import type { TransactionOutcome } from '../upstream/kv-client.js';
import type { Batcher, BatchSource, ForwardItem } from './batcher.js';
import { planBlocking, runBlocking, type BlockingRun } from './blocking.js';
import { runLocalCommand, type LocalContext } from './local-commands.js';
import { createStreamState, type StreamState } from './pubsub.js';
import { errorReply, OK } from './replies.js';

export interface SessionOptions {
  /** Password clients must give with AUTH; undefined = no authentication. */
  requirepass?: string;
  maxBulkLength: number;
  /** Commands accepted but not yet answered before the connection stops reading (backpressure). */
  maxPendingReplies: number;
  /** Blocking commands: the longest wait between two polls (ms); polls start 10 ms apart and double. */
  blockPollIntervalMs?: number;
}

/** Called by the server for connection-wide state (CLIENT LIST, INFO clients). */
export interface SessionRegistry {
  sessions(): Iterable<Session>;
  remove(session: Session): void;
  nextId(): number;
  /** Connections accepted so far. */
  nextIdPeek(): number;
  readonly batcher: Batcher;
  readonly startedAt: number;
}

const NOAUTH = errorReply('NOAUTH Authentication required.');
const QUEUED = Buffer.from('+QUEUED\r\n');
const EMPTY_EXEC = Buffer.from('*0\r\n');
const EXECABORT = errorReply('EXECABORT Transaction discarded because of previous errors.');
/** WATCH and UNWATCH outside MULTI: the REST upstream has no optimistic locking, and a silent OK would lie. */
const NO_WATCH = (name: string) =>
  errorReply(`ERR ${name.toUpperCase()} is not supported by respgate: the REST upstream has no optimistic locking (no WATCH), so a transaction cannot depend on watched keys; MULTI/EXEC still run atomically`);

/** A command queued between MULTI and EXEC. */
interface Queued {
  spec: CommandSpec;
  args: Buffer[];
  /** Answered by the proxy at EXEC (PING, ECHO, CLIENT …), not sent upstream. */
  local: boolean;
}

/** One reply of an EXEC array: known at EXEC (local commands), or item `index` of the /multi-exec answer. */
type ExecPart =
  | { reply: Buffer }
  | { index: number; shape: ReplyShape; protocol: 2 | 3; transform: ((reply: Buffer) => Buffer) | undefined };

interface TransactionItem extends ForwardItem {
  parts: ExecPart[];
}

/** A forward() made by a local command while EXEC runs it: it joins the transaction instead. */
interface Captured {
  args: Buffer[];
  transform: ((reply: Buffer) => Buffer) | undefined;
}
/** What a RESP2 connection with subscriptions may still run (Redis 7.0 processCommand). */
const SUBSCRIBED_MODE_COMMANDS = new Set(['subscribe', 'ssubscribe', 'unsubscribe', 'sunsubscribe', 'psubscribe', 'punsubscribe', 'ping', 'quit', 'reset']);
/** After the last reply of a closing connection, how long the client has to close its side. */
const CLOSE_GRACE_MS = 5000;

export class Session implements BatchSource {
  readonly id: number;
  readonly createdAt = Date.now();
  lastCommandAt = Date.now();
  lastCommand = 'NULL';
  name = '';
  libName = '';
  libVersion = '';
  authenticated: boolean;
  protocol: 2 | 3 = 2;

  // BatchSource
  readonly pending: ForwardItem[] = [];
  inFlight = false;
  queued = false;

  /** Pub/sub subscriptions and MONITOR of this connection (upstream event streams). */
  readonly streams: StreamState;
  /** Between MULTI and EXEC/DISCARD: the queued commands, and whether one was rejected (EXEC then aborts). */
  private multi: { queue: Queued[]; failed: boolean } | undefined;
  /** While EXEC runs the proxy's own commands: their forward() calls (INFO's keyspace line). */
  private captured: Captured[] | undefined;
  /** True while EXEC runs the proxy's own queued commands. */
  executing = false;
  private readonly reader: RequestReader;
  /** Replies in request order; undefined = not answered yet. */
  private readonly replies: (Buffer | undefined)[] = [];
  /** Position in the connection's whole reply sequence of replies[0] (slots stay valid when the array is trimmed). */
  private base = 0;
  private head = 0;
  private closing = false;
  private paused = false;
  private closed = false;
  /** The blocking command polling now, if any. */
  private blocked: BlockingRun | undefined;
  /** The client closed its side (half-close or gone). */
  private peerEnded = false;

  constructor(
    readonly socket: net.Socket,
    private readonly registry: SessionRegistry,
    private readonly options: SessionOptions,
  ) {
    this.id = registry.nextId();
    this.authenticated = options.requirepass === undefined;
    this.reader = new RequestReader({ maxBulkLength: options.maxBulkLength });
    this.reader.authenticated = this.authenticated;
    this.streams = createStreamState(this);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => this.maybeResume());
    // The client half-closed (sent everything, e.g. `printf … | nc -N`): like Redis, the commands it
    // sent before are still answered, then the connection closes. The server is created with
    // allowHalfOpen, or Node would end our side at once and drop those replies.
    socket.on('end', () => {
      this.peerEnded = true;
      // A blocking command waits for data the client can no longer ask for: Redis frees a client
      // whose connection reads EOF, so the polling stops and the connection closes.
      if (this.blocked) return void this.socket.destroy();
      if (!this.closing) this.closeAfterReplies();
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => this.onClose());
  }

  get address(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }
  get localAddress(): string {
    return `${this.socket.localAddress}:${this.socket.localPort}`;
  }

  private receive(chunk: Buffer): void {
    if (this.closing) return;
    this.reader.push(chunk);
    for (;;) {
      const request = this.reader.read();
      if (!request) break;
      if (request.kind === 'protocol-error') {
        // Like Redis: the error reply, then the connection closes; later commands are not run.
        this.answerNow(request.reply);
        this.closeAfterReplies();
        break;
      }
      this.execute(request.args);
      if (this.closing) break;
    }
    if (this.pending.length > 0 && !this.inFlight) this.registry.batcher.enqueue(this);
    this.writeReady();
    if (this.replies.length - this.head >= this.options.maxPendingReplies && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private execute(args: Buffer[]): void {
    this.lastCommandAt = Date.now();
    const check = checkCommand(args);
    if (!check.ok) {
      // Like Redis: existence and arity are checked before authentication. Inside MULTI a rejected
      // command flags the transaction, and a rejected EXEC discards it (its error says so).
      if (this.multi) {
        if (check.error.startsWith('EXECABORT')) this.multi = undefined;
        else this.multi.failed = true;
      }
      return this.answerNow(Buffer.concat([Buffer.from('-'), check.errorBytes, Buffer.from('\r\n')]));
    }
    const spec = check.spec;
    this.lastCommand = spec.name;
    if (!this.authenticated && !spec.flags.has('no_auth')) return this.reject(NOAUTH);
    // A MONITOR connection is a replica to Redis (networking flags CLIENT_SLAVE|CLIENT_MONITOR).
    if (this.streams.monitoring && (spec.flags.has('readonly') || spec.flags.has('write') || spec.flags.has('may_replicate'))) {
      return this.reject(errorReply("ERR Replica can't interact with the keyspace"));
    }
    if (this.protocol === 2 && this.streams.subscriptionCount > 0) {
      const name = spec.container ?? spec.name;
      if (!SUBSCRIBED_MODE_COMMANDS.has(name)) {
        return this.reject(errorReply(`ERR Can't execute '${spec.name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`));
      }
      if (name === 'ping') return this.answerNow(this.streams.subscribedPing(args));
    }
    if (this.multi) return this.queue(spec, args);
    switch (routeOf(spec, args)) {
      case 'forward':
        return this.forward(args, undefined, this.protocol === 3 ? replyShape(spec, args) : undefined);
      case 'local':
        return this.local(spec, args);
      case 'refused':
        return this.answerNow(errorReply(spec.refusal ?? `ERR command '${spec.name}' is not supported by respgate`));
      case 'blocking':
        return this.blocking(spec, args);
      case 'stream':
        return this.streams.handle(spec, args);
      case 'transaction':
        return this.transactionCommand(spec);
    }
  }

  /**
   * A blocking command (BLPOP, BZPOPMIN, XREAD BLOCK …): emulated by polling (blocking.ts). It waits
   * behind the connection's earlier commands and holds back its later ones until it is answered.
   */
  private blocking(spec: CommandSpec, args: Buffer[]): void {
    const plan = planBlocking(spec, args);
    if (Buffer.isBuffer(plan)) return this.answerNow(plan);
    const slot = this.base + this.replies.length;
    this.replies.push(undefined);
    const item: ForwardItem = { args, slot, transform: undefined, blocking: plan };
    if (this.protocol === 3) item.shape = replyShape(spec, args);
    this.pending.push(item);
  }

  runBlocking(item: ForwardItem, release: () => void): void {
    if (this.closed) return void setImmediate(release);
    if (this.peerEnded) {
      // The client is gone or half-closed before its blocking command started: like Redis at EOF.
      this.socket.destroy();
      return void setImmediate(release);
    }
    this.blocked = runBlocking(item.blocking!, (commands) => this.registry.batcher.poll(commands), this.options.blockPollIntervalMs ?? 100, (reply) => {
      this.blocked = undefined;
      if (item.shape !== undefined && /^(\*-1|\$-1)\r\n$/.test(reply.toString('latin1', 0, 8))) {
        this.replies[item.slot - this.base] = Buffer.from('_\r\n');
      } else {
        this.deliver(item, reply);
      }
      release();
    });
  }

  /**
   * CLIENT UNBLOCK of this connection: a blocking command in progress ends with its timeout reply
   * (TIMEOUT) or Redis' UNBLOCKED error (ERROR). False when nothing is blocked.
   */
  unblock(reason: 'timeout' | 'error'): boolean {
    if (!this.blocked) return false;
    this.blocked.unblock(reason === 'error' ? errorReply('UNBLOCKED client unblocked via CLIENT UNBLOCK') : undefined);
    return true;
  }

  /** MULTI, EXEC, DISCARD, WATCH, UNWATCH outside a transaction. */
  private transactionCommand(spec: CommandSpec): void {
    switch (spec.name) {
      case 'multi':
        this.multi = { queue: [], failed: false };
        return this.answerNow(OK);
      case 'exec':
        return this.answerNow(errorReply('ERR EXEC without MULTI'));
      case 'discard':
        return this.answerNow(errorReply('ERR DISCARD without MULTI'));
      default: // watch, unwatch
        return this.answerNow(NO_WATCH(spec.name));
    }
  }

  /**
   * A command between MULTI and EXEC (multi.c and processCommand of Redis 7.0): EXEC, DISCARD, MULTI,
   * WATCH, QUIT and RESET act at once; a command that cannot be queued answers its error and flags the
   * transaction; the others answer +QUEUED.
   */
  private queue(spec: CommandSpec, args: Buffer[]): void {
    const multi = this.multi!;
    switch (spec.name) {
      case 'exec':
        return this.exec();
      case 'discard':
        this.multi = undefined;
        return this.answerNow(OK);
      case 'multi':
        return this.answerNow(errorReply('ERR MULTI calls can not be nested'));
      case 'watch':
        return this.answerNow(errorReply('ERR WATCH inside MULTI is not allowed'));
      case 'quit':
      case 'reset':
        return this.local(spec, args);
    }
    if (spec.flags.has('no_multi')) return this.reject(errorReply('ERR Command not allowed inside a transaction'));
    switch (routeOf(spec, args)) {
      case 'forward':
        multi.queue.push({ spec, args, local: false });
        return this.answerNow(QUEUED);
      case 'local':
        multi.queue.push({ spec, args, local: true });
        return this.answerNow(QUEUED);
      case 'refused':
        return this.reject(errorReply(spec.refusal ?? `ERR command '${spec.name}' is not supported by respgate`));
      case 'blocking':
        return this.reject(errorReply(`ERR blocking command '${spec.name}' cannot be queued in a transaction by respgate: the upstream's /multi-exec has no blocking commands (use the non-blocking form inside MULTI)`));
      case 'stream':
        return this.reject(errorReply(`ERR '${spec.name}' cannot be queued in a transaction by respgate: pub/sub and MONITOR streams are upstream event streams, which /multi-exec cannot open`));
      case 'transaction': // unwatch
        return this.reject(NO_WATCH(spec.name));
    }
  }

  /** An error for a command Redis rejects before running it: inside MULTI it also flags the transaction. */
  private reject(reply: Buffer): void {
    if (this.multi) this.multi.failed = true;
    this.answerNow(reply);
  }

  /**
   * EXEC: the proxy's own commands run now, in order; all the others go upstream as one /multi-exec
   * call, after this connection's earlier commands. The EXEC array is assembled when it returns.
   */
  private exec(): void {
    const multi = this.multi!;
    if (multi.failed || multi.queue.length === 0) {
      this.multi = undefined;
      return this.answerNow(multi.failed ? EXECABORT : EMPTY_EXEC);
    }
    // While the queued commands run, the connection is still in MULTI (CLIENT INFO says flags=x, cmd=exec).
    this.executing = true;
    const parts: ExecPart[] = [];
    const commands: Buffer[][] = [];
    for (const q of multi.queue) {
      if (!q.local) {
        parts.push({ index: commands.length, shape: replyShape(q.spec, q.args), protocol: this.protocol, transform: undefined });
        commands.push(q.args);
        continue;
      }
      this.captured = [];
      const reply = runLocalCommand(this.localContext(), q.spec, q.args);
      const captured = this.captured;
      this.captured = undefined;
      if (reply !== undefined) {
        parts.push({ reply });
      } else if (captured.length === 1) {
        // The command needs an upstream answer (INFO's keyspace line): it joins the transaction.
        parts.push({ index: commands.length, shape: 'bulk', protocol: 2, transform: captured[0].transform });
        commands.push(captured[0].args);
      } else {
        parts.push({ reply: errorReply(`ERR respgate internal error: '${q.spec.name}' cannot run inside a transaction`) });
      }
    }
    this.executing = false;
    if (this.multi === multi) this.multi = undefined;
    if (commands.length === 0) return this.answerNow(execArray(parts, []));
    const slot = this.base + this.replies.length;
    this.replies.push(undefined);
    const item: TransactionItem = { args: [], slot, transform: undefined, transaction: commands, parts };
    this.pending.push(item);
  }

  /** The outcome of a transaction's /multi-exec call: the EXEC array, or the error that replaces it. */
  deliverTransaction(item: ForwardItem, outcome: TransactionOutcome): void {
    let reply: Buffer;
    switch (outcome.kind) {
      case 'executed':
        reply = execArray((item as TransactionItem).parts, outcome.items);
        break;
      case 'discarded':
        // The upstream discarded the whole transaction before running it (a command it refuses, or
        // that failed to queue): Redis' wording for a transaction rejected at EXEC, with the reason.
        reply = errorReply(outcome.error.startsWith('EXECABORT') ? outcome.error : `EXECABORT Transaction discarded because of: ${outcome.error}`);
        break;
      case 'failed':
        reply = errorReply(outcome.error);
        break;
    }
    this.replies[item.slot - this.base] = reply;
  }

  /** RESET (and the end of the connection): leaves MULTI, dropping the queue. */
  discardTransaction(): void {
    this.multi = undefined;
  }

  /** Commands queued in the open transaction, or -1 outside MULTI (CLIENT LIST's `multi=` field). */
  get queuedCommands(): number {
    return this.multi ? this.multi.queue.length : -1;
  }

  /**
   * Queues a command for the upstream; its reply fills the slot taken now. On a RESP3 connection,
   * `shape` converts the upstream's RESP2 reply (commands/reply-types.ts); `transform` rewrites the
   * reply after that (INFO's keyspace line).
   */
  forward(args: Buffer[], transform?: (reply: Buffer) => Buffer, shape?: ReplyShape): void {
    if (this.captured) {
      this.captured.push({ args, transform });
      return;
    }
    // An absolute position: writeReady trims answered replies off the front of the array while
    // this one is still in flight.
    const slot = this.base + this.replies.length;
    this.replies.push(undefined);
    this.pending.push(shape === undefined ? { args, slot, transform } : { args, slot, transform, shape });
  }

  deliver(item: ForwardItem, reply: Buffer): void {
    let out = item.shape === undefined ? reply : toResp3(reply, item.shape);
    if (item.transform) out = item.transform(out);
    this.replies[item.slot - this.base] = out;
  }

  private local(spec: CommandSpec, args: Buffer[]): void {
    const result = runLocalCommand(this.localContext(), spec, args);
    if (result !== undefined) this.answerNow(result);
  }

  private localContext(): LocalContext {
    return { session: this, registry: this.registry, options: this.options };
  }

  /** A reply known now (it still waits for earlier replies before it is written). */
  answerNow(reply: Buffer): void {
    this.replies.push(reply);
  }

  /** QUIT, protocol errors: stop reading, write what is owed, then close. */
  closeAfterReplies(): void {
    this.closing = true;
    this.socket.pause();
    this.writeReady();
  }

  /** Authentication state changed (AUTH, HELLO AUTH, RESET). */
  setAuthenticated(value: boolean): void {
    this.authenticated = value;
    this.reader.authenticated = value;
  }

  afterBatch(): void {
    this.flush();
  }

  /** Takes the next reply position for a reply that is known later (a SUBSCRIBE waiting for its stream). */
  reserveReply(): number {
    const slot = this.base + this.replies.length;
    this.replies.push(undefined);
    return slot;
  }

  /** Fills a position taken with reserveReply and writes what is ready. */
  fillReply(slot: number, reply: Buffer): void {
    this.replies[slot - this.base] = reply;
    this.flush();
  }

  /** Writes every reply that is ready (also for replies no command asked for: messages, MONITOR lines). */
  flush(): void {
    this.writeReady();
    this.maybeResume();
  }

  /** True once the connection is closing (QUIT, protocol error, client gone): nothing more is sent. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** Writes every reply that is ready and has no unanswered reply before it. */
  private writeReady(): void {
    if (this.closed) return;
    const start = this.head;
    while (this.head < this.replies.length && this.replies[this.head] !== undefined) this.head++;
    if (this.head > start) {
      const ready = this.replies.slice(start, this.head) as Buffer[];
      this.socket.write(ready.length === 1 ? ready[0] : Buffer.concat(ready));
      if (this.head === this.replies.length) {
        this.base += this.head;
        this.replies.length = 0;
        this.head = 0;
      } else if (this.head > 1024) {
        this.base += this.head;
        this.replies.splice(0, this.head);
        this.head = 0;
      }
    }
    if (this.closing && this.head === this.replies.length) {
      this.closed = true;
      // Once every reply is handed to the kernel: read (and ignore) what the client still sends, so
      // its FIN is seen and the socket destroyed; a client that never closes its side is cut off
      // after a grace period (the kernel still delivers what it holds).
      this.socket.end(() => {
        this.socket.resume();
        setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
      });
    }
  }

  private maybeResume(): void {
    if (this.paused && !this.closing && this.replies.length - this.head < this.options.maxPendingReplies / 2 && !this.socket.writableNeedDrain) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private onClose(): void {
    this.closed = true;
    this.closing = true;
    this.pending.length = 0; // not yet sent: never sent
    this.blocked?.cancel(); // a blocking command stops polling
    this.blocked = undefined;
    this.multi = undefined;
    this.streams.reset(); // no upstream event stream outlives its client
    this.registry.remove(this);
  }
}

/** The EXEC array: each part's reply, from the proxy or from item `index` of the /multi-exec answer. */
function execArray(parts: ExecPart[], items: TransactionOutcomeItems): Buffer {
  const out: Buffer[] = [Buffer.from(`*${parts.length}\r\n`)];
  for (const part of parts) {
    if ('reply' in part) {
      out.push(part.reply);
      continue;
    }
    const item = items[part.index];
    let reply = item === undefined ? errorReply('ERR upstream sent no reply for this command') : jsonItemToResp(item, part.shape, part.protocol);
    if (part.transform) reply = part.transform(reply);
    out.push(reply);
  }
  return Buffer.concat(out);
}

type TransactionOutcomeItems = Extract<TransactionOutcome, { kind: 'executed' }>['items'];
