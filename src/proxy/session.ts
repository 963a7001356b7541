// One client connection: reads requests, decides per command where it goes (local answer,
// upstream, refusal), and writes the replies back strictly in request order.
import type net from 'node:net';
import { checkCommand, routeOf, type CommandSpec } from '../commands/table.js';
import { RequestReader } from '../resp/request-reader.js';
import type { Batcher, BatchSource, ForwardItem } from './batcher.js';
import { runLocalCommand, type LocalContext } from './local-commands.js';
import { createStreamState, type StreamState } from './pubsub.js';
import { errorReply } from './replies.js';

export interface SessionOptions {
  /** Password clients must give with AUTH; undefined = no authentication. */
  requirepass?: string;
  maxBulkLength: number;
  /** Commands accepted but not yet answered before the connection stops reading (backpressure). */
  maxPendingReplies: number;
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
  private readonly reader: RequestReader;
  /** Replies in request order; undefined = not answered yet. */
  private readonly replies: (Buffer | undefined)[] = [];
  /** Position in the connection's whole reply sequence of replies[0] (slots stay valid when the array is trimmed). */
  private base = 0;
  private head = 0;
  private closing = false;
  private paused = false;
  private closed = false;

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
      // Like Redis: existence and arity are checked before authentication.
      return this.answerNow(Buffer.concat([Buffer.from('-'), check.errorBytes, Buffer.from('\r\n')]));
    }
    const spec = check.spec;
    this.lastCommand = spec.name;
    if (!this.authenticated && !spec.flags.has('no_auth')) return this.answerNow(NOAUTH);
    if (this.protocol === 2 && this.streams.subscriptionCount > 0) {
      const name = spec.container ?? spec.name;
      if (!SUBSCRIBED_MODE_COMMANDS.has(name)) {
        return this.answerNow(errorReply(`ERR Can't execute '${spec.name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`));
      }
      if (name === 'ping') return this.answerNow(this.streams.subscribedPing(args));
    }
    switch (routeOf(spec, args)) {
      case 'forward':
        return this.forward(args);
      case 'local':
        return this.local(spec, args);
      case 'refused':
        return this.answerNow(errorReply(spec.refusal ?? `ERR command '${spec.name}' is not supported by respgate`));
      case 'blocking':
        return this.answerNow(errorReply(`ERR blocking command '${spec.name}' is not supported yet by respgate: the upstream has no blocking commands and polling emulation is not available in this version`));
      case 'stream':
        return this.streams.handle(spec, args);
      case 'transaction':
        return this.answerNow(errorReply(`ERR '${spec.name}' is not supported yet by respgate: transactions are not available in this version`));
    }
  }

  /** Queues a command for the upstream; its reply fills the slot taken now. */
  forward(args: Buffer[], transform?: (reply: Buffer) => Buffer): void {
    // An absolute position: writeReady trims answered replies off the front of the array while
    // this one is still in flight.
    const slot = this.base + this.replies.length;
    this.replies.push(undefined);
    this.pending.push({ args, slot, transform });
  }

  deliver(item: ForwardItem, reply: Buffer): void {
    this.replies[item.slot - this.base] = item.transform ? item.transform(reply) : reply;
  }

  private local(spec: CommandSpec, args: Buffer[]): void {
    const ctx: LocalContext = { session: this, registry: this.registry, options: this.options };
    const result = runLocalCommand(ctx, spec, args);
    if (result !== undefined) this.answerNow(result);
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
    this.writeReady();
    this.maybeResume();
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
    this.streams.reset(); // no upstream event stream outlives its client
    this.registry.remove(this);
  }
}
