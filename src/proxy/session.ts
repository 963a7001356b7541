// One client connection: socket events, the receive loop, backpressure and the end of the
// connection. The steps of a request live in their own modules; one GET goes:
//
//   socket read (socket-input.ts) → Session.receive → RequestReader.read (resp/request-reader.ts)
//     → dispatch (dispatch.ts: check, gates, route) → a position in ReplyQueue + a CommandItem on `pending`
//     → Batcher.enqueue … setImmediate … Batcher.flush → KvClient.pipeline (upstream/)
//     → Session.deliver (RESP3 conversion) → Session.afterBatch → ReplyQueue.write → socket.write
//
// Replies are written strictly in request order, in the connection's protocol (RESP2, or RESP3 after
// HELLO 3: upstream replies are converted by reply type).
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Protocol } from '../resp/protocol.js';
import { RequestReader } from '../resp/request-reader.js';
import { toResp3 } from '../resp/resp3-converter.js';
import type { Credential, TransactionOutcome } from '../upstream/kv-client.js';
import type { BatchSource } from './batcher.js';
import type { BlockingRun } from './blocking.js';
import { runBlocking } from './blocking-hub.js';
import type { Connection, ProxyContext, PushState, ReplyMode, ReplyPort } from './context.js';
import { dispatch, type DispatchTarget } from './dispatch.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from './forward-item.js';
import type { LocalContext } from './local/index.js';
import { createPushState } from './pubsub.js';
import { errorReply, NULL3, NULL_ARRAY, NULL_BULK } from './replies.js';
import { ReplyQueue } from './reply-queue.js';
import { readSocket } from './socket-input.js';
import { Transaction, transactionReply } from './transaction.js';

const EMPTY = Buffer.alloc(0);
const UNBLOCKED = errorReply('UNBLOCKED client unblocked via CLIENT UNBLOCK');

export class Session implements Connection, ReplyPort, BatchSource, DispatchTarget {
  readonly createdAt = Date.now();
  lastInteractionAt = Date.now();
  replyMode: ReplyMode = 'on';
  lastCommand = 'NULL';
  name = '';
  /** CLIENT SETINFO lib-name / lib-ver. */
  libName = '';
  libVersion = '';
  protocol: Protocol = 2;
  authenticated: boolean;
  /** The client's own upstream token (pass-through, ACL users); undefined = the configured one. */
  credential: Credential | undefined;
  readonly fd: number;

  // BatchSource
  readonly pending: ForwardItem[] = [];
  inFlight = false;
  queued = false;

  readonly replies: ReplyQueue;
  readonly transaction = new Transaction();
  /** Pub/sub subscriptions and MONITOR of this connection (upstream event streams). */
  readonly pushes: PushState;
  readonly local: LocalContext;
  private readonly reader: RequestReader;
  /** Reading stopped: too many replies owed (backpressure). */
  private paused = false;
  /** The blocking command polling now, if any. */
  private blocking: BlockingRun | undefined;

  /** The client closed its side (half-close or gone). */
  private peerEnded = false;
  /** An AUTH waits for the upstream: later requests stay in the reader until it is answered. */
  private deferring = false;

  constructor(
    readonly socket: net.Socket,
    readonly id: number,
    private readonly ctx: ProxyContext,
    private readonly onClosed: (session: Session) => void,
  ) {
    const { config } = ctx;
    this.fd = socketFd(socket);
    this.authenticated = !ctx.server.auth.required;
    this.reader = new RequestReader({ maxBulkLength: config.maxBulkLength });
    this.reader.authenticated = this.authenticated;
    this.replies = new ReplyQueue(socket, config.closeGraceMs);
    this.pushes = createPushState(this, ctx.pushUpstream);
    this.local = { conn: this, server: ctx.server };
    socket.setNoDelay(true);
    readSocket(socket, ctx.readBuffer, (chunk) => this.receive(chunk));
    socket.on('drain', () => this.maybeResume());
    // The client half-closed (sent everything, e.g. `printf … | nc -N`): like Redis, the commands it
    // sent before are still answered, then the connection closes. The server is created with
    // allowHalfOpen, or Node would end our side at once and drop those replies.
    socket.on('end', () => {
      this.peerEnded = true;
      // A blocking command waits for data the client can no longer ask for: Redis frees a client
      // whose connection reads EOF, so the polling stops and the connection closes.
      if (this.blocking) return void this.destroy();
      if (!this.replies.closing) this.closeAfterReplies();
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
  get localPort(): number {
    return this.socket.localPort ?? 0;
  }

  private receive(chunk: Buffer): void {
    if (this.replies.closing) return;
    this.reader.push(chunk);
    if (this.reader.bufferedBytes > this.ctx.config.maxQueryBufferBytes) {
      // Redis client-query-buffer-limit: the client is closed without a reply.
      this.ctx.log.warn(
        { conn: this.id, client: this.address, limitBytes: this.ctx.config.maxQueryBufferBytes },
        'client query buffer limit reached: closing the connection',
      );
      return void this.destroy();
    }
    // One clock reading per socket read: the commands of one read were read at the same moment. Like
    // Redis' lastinteraction, any read counts as activity (CLIENT LIST idle=, the idle timeout).
    const readAt = performance.now();
    this.lastInteractionAt = performance.timeOrigin + readAt;
    for (;;) {
      if (this.deferring) break;
      const request = this.reader.read();
      if (!request) break;
      if (request.kind === 'protocol-error') {
        // Like Redis: the error reply, then the connection closes; later commands are not run.
        this.replies.answer(request.reply);
        this.closeAfterReplies();
        break;
      }
      dispatch(this, request.args, readAt);
      if (this.replies.closing) break;
    }
    if (this.pending.length > 0 && !this.inFlight) this.ctx.batcher.enqueue(this);
    this.writeReplies();
    // Backpressure: too many replies owed, or written replies the client does not read.
    if ((this.replies.owed >= this.ctx.config.maxPendingReplies || this.socket.writableNeedDrain || this.deferring) && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** AUTH that needs the upstream: its reply position is taken now; later requests wait for it. */
  defer(reply: Promise<Buffer>, then?: () => void): void {
    const fill = this.reserve();
    this.deferring = true;
    void reply
      .catch((err: unknown) => errorReply(`ERR respgate internal error: ${String((err as Error)?.message ?? err)}`))
      .then((out) => {
        this.deferring = false;
        fill(out);
        // A command held back (CLIENT PAUSE) runs here, before the requests read after it.
        then?.();
        if (!this.socket.destroyed) this.receive(EMPTY);
      });
  }

  /** Writes what is ready; a client that lets more than the output limit pile up unread is closed. */
  private writeReplies(): void {
    this.replies.write();
    const limitBytes = this.ctx.config.outputLimitBytes;
    if (this.socket.writableLength > limitBytes) {
      this.ctx.log.warn(
        { conn: this.id, client: this.address, limitBytes },
        'client output buffer limit reached (it reads slower than replies arrive): closing the connection',
      );
      this.destroy();
    }
  }

  // ---- Connection (what command handlers see) ----

  setAuthenticated(value: boolean): void {
    this.authenticated = value;
    this.reader.authenticated = value;
  }

  get isBlocked(): boolean {
    return this.blocking !== undefined;
  }

  get queuedCommands(): number {
    return this.transaction.queuedCount;
  }

  discardTransaction(): void {
    this.transaction.discard();
  }

  /**
   * CLIENT UNBLOCK of this connection: a blocking command in progress ends with its timeout reply
   * (TIMEOUT) or Redis' UNBLOCKED error (ERROR). False when nothing is blocked.
   */
  unblock(reason: 'timeout' | 'error'): boolean {
    if (!this.blocking) return false;
    this.blocking.unblock(reason === 'error' ? UNBLOCKED : undefined);
    return true;
  }

  // ---- ReplyPort (replies that come later, and unsolicited ones) ----

  answer(reply: Buffer): void {
    this.replies.answer(reply);
  }

  reserve(): (reply: Buffer) => void {
    const slot = this.replies.take();
    let filled = false;
    return (reply) => {
      if (filled) return;
      filled = true;
      this.replies.fill(slot, reply);
      this.writeAndResume();
    };
  }

  push(reply: Buffer): void {
    if (!this.open) return;
    this.replies.answer(reply);
    this.writeAndResume();
  }

  get open(): boolean {
    return !this.socket.destroyed && !this.socket.writableEnded && !this.replies.closing;
  }

  /**
   * Closes the connection now. A blocking command stops first, at once: 'close' comes only a turn
   * later, and what a poll takes meanwhile must be put back, not written to a closed socket.
   */
  destroy(): void {
    this.blocking?.cancel();
    this.blocking = undefined;
    this.socket.destroy();
  }

  // ---- BatchSource (the way back from the upstream) ----

  deliver(item: CommandItem, reply: Buffer, answeredAt: number): void {
    let out = item.shape === undefined ? reply : toResp3(reply, item.shape);
    if (item.transform) out = item.transform(out);
    this.replies.fill(item.slot, out);
    if (item.readAt !== undefined) {
      const ms = answeredAt - item.readAt;
      this.ctx.ops.commandDone(this, item.args, ms);
      if (item.name) this.ctx.server.commandStats.ran(item.name, ms * 1000, out);
    }
  }

  deliverTransaction(item: TransactionItem, outcome: TransactionOutcome): void {
    const stats = this.ctx.server.commandStats;
    const reply = transactionReply(item.parts, outcome, item.protocol ?? 2, (name, r) => stats.ran(name, 0, r));
    if (item.readAt !== undefined) stats.ran('exec', (performance.now() - item.readAt) * 1000, reply);
    this.replies.fill(item.slot, reply);
  }

  afterBatch(): void {
    this.writeAndResume();
  }

  runBlocking(item: BlockingItem, release: () => void): void {
    if (this.replies.ended) return void setImmediate(release);
    if (this.peerEnded) {
      // The client is gone or half-closed before its blocking command started: like Redis at EOF.
      this.destroy();
      return void setImmediate(release);
    }
    // The shared pollers use the proxy's own token; a client with a token of its own (pass-through, ACL
    // users) polls on its own, so a token never polls for another.
    const credential = this.credential;
    const blocking = credential
      ? {
          wait: (plan: typeof item.plan, ms: number, done: (reply: Buffer) => void) =>
            runBlocking(plan, (commands) => this.ctx.batcher.poll(commands, credential), ms, done),
        }
      : this.ctx.batcher.blocking;
    this.blocking = blocking.wait(item.plan, this.ctx.config.blockPollIntervalMs, (reply) => {
      this.blocking = undefined;
      // A RESP3 connection times out with RESP3's null.
      const isNull = item.shape !== undefined && (reply.equals(NULL_ARRAY) || reply.equals(NULL_BULK));
      if (item.name && item.readAt !== undefined)
        this.ctx.server.commandStats.ran(item.name, (performance.now() - item.readAt) * 1000, reply);
      this.replies.fill(item.slot, isNull ? NULL3 : item.shape === undefined ? reply : toResp3(reply, item.shape));
      release();
    });
  }

  // ---- the end of the connection ----

  /** Redis `timeout` applies: no subscription, MONITOR, blocking command or reply owed. */
  get idle(): boolean {
    return (
      !this.blocking &&
      !this.inFlight &&
      this.pending.length === 0 &&
      this.replies.owed === 0 &&
      this.pushes.subscriptionCount === 0 &&
      !this.pushes.monitoring
    );
  }

  /** Shutdown: nothing more is read; the replies owed are written, then the connection closes. */
  drain(): void {
    if (!this.replies.closing) this.closeAfterReplies();
  }

  /** QUIT, protocol errors, the client's end: stop reading, write what is owed, then close. */
  closeAfterReplies(): void {
    this.socket.pause();
    this.replies.closeAfterReplies();
  }

  private writeAndResume(): void {
    this.writeReplies();
    if (this.socket.writableNeedDrain && !this.paused && !this.socket.destroyed) {
      // The client does not read its replies: stop reading its requests until it does ('drain').
      this.paused = true;
      this.socket.pause();
      return;
    }
    this.maybeResume();
  }

  private maybeResume(): void {
    if (
      this.paused &&
      !this.deferring &&
      !this.replies.closing &&
      this.replies.owed < this.ctx.config.maxPendingReplies / 2 &&
      !this.socket.writableNeedDrain
    ) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private onClose(): void {
    this.replies.closedByPeer();
    this.pending.length = 0; // not yet sent: never sent
    this.blocking?.cancel(); // a blocking command stops polling
    this.blocking = undefined;
    this.transaction.discard();
    this.pushes.reset(); // no upstream event stream outlives its client
    this.onClosed(this);
  }
}

/** CLIENT LIST's `fd=`: Node keeps the descriptor on the socket's internal handle (-1 when it has none). */
function socketFd(socket: net.Socket): number {
  return (socket as unknown as { _handle?: { fd?: number } })._handle?.fd ?? -1;
}
