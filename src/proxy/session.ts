// One client connection: socket events, the receive loop, backpressure and the end of the
// connection. The steps of a request live in their own modules; one GET goes:
//
//   socket 'data' → Session.receive → RequestReader.read (resp/request-reader.ts)
//     → dispatch (dispatch.ts: check, gates, route) → a position in ReplyQueue + a CommandItem on `pending`
//     → Batcher.enqueue … setImmediate … Batcher.flush → KvClient.pipeline (upstream/)
//     → Session.deliver (RESP3 conversion) → Session.afterBatch → ReplyQueue.write → socket.write
//
// Replies are written strictly in request order, in the connection's protocol (RESP2, or RESP3 after
// HELLO 3: upstream replies are converted by reply type).
import type net from 'node:net';
import type { Protocol } from '../resp/protocol.js';
import { RequestReader } from '../resp/request-reader.js';
import { toResp3 } from '../resp/resp3-converter.js';
import type { TransactionOutcome } from '../upstream/kv-client.js';
import type { BatchSource } from './batcher.js';
import type { BlockingRun } from './blocking.js';
import type { Connection, ProxyContext, PushState, ReplyMode, ReplyPort } from './context.js';
import { dispatch, type DispatchTarget } from './dispatch.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from './forward-item.js';
import type { LocalContext } from './local/index.js';
import { createPushState } from './pubsub.js';
import { errorReply, NULL3, NULL_ARRAY, NULL_BULK } from './replies.js';
import { ReplyQueue } from './reply-queue.js';
import { Transaction, transactionReply } from './transaction.js';

const UNBLOCKED = errorReply('UNBLOCKED client unblocked via CLIENT UNBLOCK');

export class Session implements Connection, ReplyPort, BatchSource, DispatchTarget {
  readonly createdAt = Date.now();
  lastCommandAt = Date.now();
  replyMode: ReplyMode = 'on';
  lastCommand = 'NULL';
  name = '';
  protocol: Protocol = 2;
  authenticated: boolean;
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

  get blocked(): boolean {
    return this.blocking !== undefined;
  }
  /** The client closed its side (half-close or gone). */
  private peerEnded = false;

  constructor(
    readonly socket: net.Socket,
    readonly id: number,
    private readonly ctx: ProxyContext,
    private readonly onClosed: (session: Session) => void,
  ) {
    const { config } = ctx;
    this.fd = socketFd(socket);
    this.authenticated = config.requirepass === undefined;
    this.reader = new RequestReader({ maxBulkLength: config.maxBulkLength });
    this.reader.authenticated = this.authenticated;
    this.replies = new ReplyQueue(socket, config.closeGraceMs);
    this.pushes = createPushState(this, ctx.pushUpstream);
    this.local = { conn: this, server: ctx.server };
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
      if (this.blocking) return void this.socket.destroy();
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
    for (;;) {
      const request = this.reader.read();
      if (!request) break;
      if (request.kind === 'protocol-error') {
        // Like Redis: the error reply, then the connection closes; later commands are not run.
        this.replies.answer(request.reply);
        this.closeAfterReplies();
        break;
      }
      dispatch(this, request.args);
      if (this.replies.closing) break;
    }
    if (this.pending.length > 0 && !this.inFlight) this.ctx.batcher.enqueue(this);
    this.replies.write();
    if (this.replies.owed >= this.ctx.config.maxPendingReplies && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  // ---- Connection (what command handlers see) ----

  setAuthenticated(value: boolean): void {
    this.authenticated = value;
    this.reader.authenticated = value;
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
    const limitBytes = this.ctx.config.outputLimitBytes;
    if (this.socket.writableLength > limitBytes) {
      this.ctx.log.warn({ conn: this.id, client: this.address, limitBytes }, 'client output buffer limit reached (it reads slower than messages arrive): closing the connection');
      this.socket.destroy();
    }
  }

  get open(): boolean {
    return !this.socket.destroyed && !this.socket.writableEnded && !this.replies.closing;
  }

  destroy(): void {
    this.socket.destroy();
  }

  // ---- BatchSource (the way back from the upstream) ----

  deliver(item: CommandItem, reply: Buffer): void {
    let out = item.shape === undefined ? reply : toResp3(reply, item.shape);
    if (item.transform) out = item.transform(out);
    this.replies.fill(item.slot, out);
  }

  deliverTransaction(item: TransactionItem, outcome: TransactionOutcome): void {
    this.replies.fill(item.slot, transactionReply(item.parts, outcome, item.protocol ?? 2));
  }

  afterBatch(): void {
    this.writeAndResume();
  }

  runBlocking(item: BlockingItem, release: () => void): void {
    if (this.replies.ended) return void setImmediate(release);
    if (this.peerEnded) {
      // The client is gone or half-closed before its blocking command started: like Redis at EOF.
      this.socket.destroy();
      return void setImmediate(release);
    }
    this.blocking = this.ctx.batcher.blocking.wait(item.plan, this.ctx.config.blockPollIntervalMs, (reply) => {
      this.blocking = undefined;
      // A RESP3 connection times out with RESP3's null.
      const isNull = item.shape !== undefined && (reply.equals(NULL_ARRAY) || reply.equals(NULL_BULK));
      this.replies.fill(item.slot, isNull ? NULL3 : item.shape === undefined ? reply : toResp3(reply, item.shape));
      release();
    });
  }

  // ---- the end of the connection ----

  /** QUIT, protocol errors, the client's end: stop reading, write what is owed, then close. */
  closeAfterReplies(): void {
    this.socket.pause();
    this.replies.closeAfterReplies();
  }

  private writeAndResume(): void {
    this.replies.write();
    this.maybeResume();
  }

  private maybeResume(): void {
    if (this.paused && !this.replies.closing && this.replies.owed < this.ctx.config.maxPendingReplies / 2 && !this.socket.writableNeedDrain) {
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
