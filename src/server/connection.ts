// One client connection of any RESP port (the proxy's, a side port's): socket events, the receive
// loop, the limits, backpressure and the end of the connection. What a request does is the port's
// (`handle`); this class only guarantees that replies are written strictly in request order, that a
// client cannot make the port hold more than the limits allow, and that a closing connection still
// gets the replies it is owed (QUIT, the client's half-close, SIGTERM). twemproxy's one nc_connection
// plays this part for its client, server and proxy sockets alike.
//
//   socket read (socket-input.ts) → receive → RequestReader.read (resp/request-reader.ts)
//     → handle (the port's dispatch: a reply now, a position filled later, or a deferred one)
//     → afterRead → ReplyQueue.write (reply-queue.ts) → SocketOutput.write (socket-output.ts: the
//       socket's handle when nothing is queued, else socket.write)
// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { Protocol } from '../resp/protocol.js';
import { RequestReader } from '../resp/request-reader.js';
import type { Credential } from '../upstream/kv-client.js';
import type { ReplyMode, ReplyPort } from './context.js';
import { outputLimitReached, type OutputBufferLimits, type OutputClass } from './output-limits.js';
import { errorReply } from './replies.js';
import { ReplyQueue } from './reply-queue.js';
import { readSocket } from './socket-input.js';
import { SocketOutput, type OutputOwner } from './socket-output.js';

/** performance.timeOrigin, read once: its getter made a number object per socket read (~16 bytes per command at -P 1). */
const TIME_ORIGIN = performance.timeOrigin;

const EMPTY = Buffer.alloc(0);

/** Where a client socket keeps its connection, for the listeners every connection shares. */
const CONNECTION = Symbol('respgate.connection');
type OwnedSocket = net.Socket & { [CONNECTION]: RespConnection };
const ignoreError = (): void => undefined;

/** The per-connection limits every port applies (Redis' names in docs/security.md). */
export interface ConnectionLimits {
  /** proto-max-bulk-len: the largest argument (a larger bulk header is a protocol error). */
  maxBulkLength: number;
  /** client-query-buffer-limit: bytes of a request not yet complete. */
  maxQueryBufferBytes: number;
  /**
   * client-output-buffer-limit per class: written replies the client has not read. Read live (CONFIG
   * SET changes the object's classes).
   */
  outputBufferLimits: OutputBufferLimits;
  /** Replies owed before the connection stops reading (backpressure). */
  maxPendingReplies: number;
  /** After the last reply of a closing connection, how long the client has to close its side. */
  closeGraceMs: number;
}

/** What a connection needs from the port that accepted it. */
export interface ConnectionHost {
  readonly limits: ConnectionLimits;
  readonly log: Logger;
  /** Where client sockets are read into (socket-input.ts), one per port. */
  readonly readBuffer: Buffer;
  /** Clients must authenticate before running commands. */
  readonly authRequired: boolean;
}

export abstract class RespConnection implements ReplyPort, OutputOwner {
  readonly createdAt = Date.now();
  lastInteractionAt = Date.now();
  replyMode: ReplyMode = 'on';
  lastCommand = 'NULL';
  name = '';
  /** CLIENT SETINFO lib-name / lib-ver. */
  libName = '';
  libVersion = '';
  protocol: Protocol = 2;
  /** SELECT; a port with one database leaves it 0. */
  db = 0;
  authenticated: boolean;
  /** The client's own upstream token (pass-through, ACL users); undefined = the configured one. */
  credential: Credential | undefined;
  readonly fd: number;
  readonly replies: ReplyQueue;
  /** Where the replies are written: the socket, or its handle below the Writable (socket-output.ts). */
  private readonly output: SocketOutput;
  private readonly reader: RequestReader;
  /** Reading stopped: too many replies owed (backpressure). */
  private paused = false;
  /** The client closed its side (half-close or gone). */
  protected peerEnded = false;
  /** A reply waits for something slow (AUTH with the upstream): later requests stay in the reader until it is answered. */
  private deferring = false;
  /** The soft output limit: since when it is exceeded (0 = it is not; the connection is its own SoftLimitState). */
  softSince = 0;

  constructor(
    readonly socket: net.Socket,
    readonly id: number,
    private readonly host: ConnectionHost,
    private readonly onClosed: (connection: RespConnection) => void,
  ) {
    this.fd = socketFd(socket);
    this.authenticated = !host.authRequired;
    this.reader = new RequestReader({ maxBulkLength: host.limits.maxBulkLength });
    this.reader.authenticated = this.authenticated;
    this.output = new SocketOutput(socket, this);
    this.replies = new ReplyQueue(this.output, host.limits.closeGraceMs);
    socket.setNoDelay(true);
    readSocket(socket, host.readBuffer, (chunk, shared) => this.receive(chunk, shared));
    // The socket's listeners are shared by every connection (no closures of its own per connection:
    // ~250 bytes each, issue 25); each finds its connection on the socket.
    (socket as OwnedSocket)[CONNECTION] = this;
    socket.on('drain', RespConnection.onDrain);
    socket.on('end', RespConnection.onEnd);
    socket.on('error', ignoreError); // 'close' follows
    socket.on('close', RespConnection.onClose);
  }

  private static onDrain(this: OwnedSocket): void {
    this[CONNECTION].maybeResume();
  }

  /** The writes that waited in libuv (a client that read slowly) are written: the Writable's 'drain' for them. */
  outputDrained(): void {
    this.maybeResume();
  }

  /**
   * The client half-closed (sent everything, e.g. `printf … | nc -N`): like Redis, the commands it
   * sent before are still answered, then the connection closes. The listener is created with
   * allowHalfOpen, or Node would end our side at once and drop those replies.
   */
  private static onEnd(this: OwnedSocket): void {
    const connection = this[CONNECTION];
    connection.peerEnded = true;
    connection.peerEnd();
  }

  private static onClose(this: OwnedSocket): void {
    const connection = this[CONNECTION];
    connection.replies.closedByPeer();
    connection.closed();
    connection.onClosed(connection);
  }

  // ---- what a port adds ----

  /** Runs one request: answers it now, takes a reply position filled later, or defers. */
  protected abstract handle(args: Buffer[], readAt: number): void;
  /** After the requests of one read are handled (the proxy hands its pending commands to the batcher). */
  protected afterRead(): void {}
  /** The client ended its side: by default the replies owed are written, then the connection closes. */
  protected peerEnd(): void {
    if (!this.replies.closing) this.closeAfterReplies();
  }
  /** The socket is gone: what the port must stop or release. */
  protected closed(): void {}
  /** The client-output-buffer-limit class: a port with subscriptions says when it is not `normal`. */
  protected get outputClass(): OutputClass {
    return 'normal';
  }
  /** Work of the port still owed that the reply queue does not show (commands not yet sent). */
  protected get busy(): boolean {
    return false;
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

  /** `shared`: the chunk is only lent for this call (socket-input.ts). */
  private receive(chunk: Buffer, shared = false): void {
    if (this.replies.closing) return;
    if (shared) this.reader.pushShared(chunk);
    else this.reader.push(chunk);
    const limits = this.host.limits;
    if (this.reader.bufferedBytes > limits.maxQueryBufferBytes) {
      // Redis client-query-buffer-limit: the client is closed without a reply.
      this.host.log.warn(
        { conn: this.id, client: this.address, limitBytes: limits.maxQueryBufferBytes },
        'client query buffer limit reached: closing the connection',
      );
      return void this.destroy();
    }
    // One clock reading per socket read: the commands of one read were read at the same moment. Like
    // Redis' lastinteraction, any read counts as activity (CLIENT LIST idle=, the idle timeout).
    const readAt = performance.now();
    this.lastInteractionAt = TIME_ORIGIN + readAt;
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
      this.handle(request.args, readAt);
      if (this.replies.closing) break;
    }
    this.afterRead();
    this.writeReplies();
    // Backpressure: too many replies owed, or written replies the client does not read.
    if ((this.replies.owed >= limits.maxPendingReplies || this.output.needsDrain || this.deferring) && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** A reply that needs something slow first (AUTH with the upstream): its position is taken now; later requests wait for it. */
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

  /**
   * Writes what is ready; a client that lets more than its class' output limit pile up unread is
   * closed, as Redis checks on every reply (normal clients have none by default: backpressure).
   */
  protected writeReplies(): void {
    this.replies.write();
    const used = this.output.pendingBytes;
    // The usual case, checked first: the kernel took every byte, so no limit can be reached.
    if (used === 0) {
      this.softSince = 0;
      return;
    }
    const cls = this.outputClass;
    const limit = this.host.limits.outputBufferLimits[cls];
    if (outputLimitReached(limit, used, this, Date.now())) {
      this.host.log.warn(
        {
          conn: this.id,
          client: this.address,
          class: cls,
          hard: String(limit.hard),
          soft: String(limit.soft),
          softSeconds: limit.softSeconds,
        },
        'client output buffer limit reached (it reads slower than replies arrive): closing the connection',
      );
      this.destroy();
    }
  }

  setAuthenticated(value: boolean): void {
    this.authenticated = value;
    this.reader.authenticated = value;
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

  /** Closes the connection now (CLIENT KILL, limits, the end of a port): replies owed are dropped. */
  destroy(): void {
    this.socket.destroy();
  }

  // ---- the end of the connection ----

  /** Redis `timeout` applies: nothing owed (a port adds its own conditions: subscriptions, blocking). */
  get idle(): boolean {
    return !this.deferring && !this.busy && this.replies.owed === 0;
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

  /** After replies came in: writes them and reads again once the client has caught up. */
  protected writeAndResume(): void {
    this.writeReplies();
    if (this.output.needsDrain && !this.paused && !this.socket.destroyed) {
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
      this.replies.owed < this.host.limits.maxPendingReplies / 2 &&
      !this.output.needsDrain
    ) {
      this.paused = false;
      this.socket.resume();
    }
  }
}

/** CLIENT LIST's `fd=`: Node keeps the descriptor on the socket's internal handle (-1 when it has none). */
function socketFd(socket: net.Socket): number {
  return (socket as unknown as { _handle?: { fd?: number } })._handle?.fd ?? -1;
}
