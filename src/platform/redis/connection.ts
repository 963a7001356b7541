// One RESP connection from the platform to redis-server. Commands are pipelined: every call
// writes its commands at once and gets back the raw reply bytes of each, in order. The platform
// passes those bytes through (resp2 format) or transcodes them (JSON) without a decoded tree.
import net from 'node:net';
import { encodeCommands, encodePieces, type Arg } from '../../resp/request-writer.js';
import { scanReply } from '../../resp/reply-scanner.js';
import { largeBuffers, POOLED_MIN_BYTES } from '../../resp/large-buffers.js';
import { ReadLanding } from '../../resp/read-landing.js';

export interface RedisEndpoint {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
}

interface Pending {
  remaining: number;
  /** One Buffer per reply, or (joined) the pieces of the replies' bytes as they arrived. */
  replies: Buffer[];
  /** Whether the caller wants the replies' bytes back to back, without a Buffer per reply. */
  joined: boolean;
  /**
   * Joined, handed over piece by piece as the bytes arrive (sendEncodedStreamed): whole replies, or
   * the parts of a large bulk reply as they are read (PASS_THROUGH_BYTES).
   */
  onPiece?: (piece: Buffer) => void;
  resolve: (replies: Buffer[]) => void;
  reject: (err: Error) => void;
}

/**
 * A bulk reply from this size on goes to a joined caller as its bytes arrive, in the pieces the socket
 * read, instead of being gathered and joined first: a 1 MiB GET answered over HTTP in resp2 is then
 * written from the very Buffers it was read into (bench/README.md, large values).
 */
export const PASS_THROUGH_BYTES = 64 * 1024;

const EMPTY = Buffer.alloc(0);

/**
 * A bulk reply for a joined caller of this size (up to the pool's largest) is read straight into one
 * buffer of its size from the large-value pool, which the HTTP answer gives back once written
 * (handler.ts): a 1 MiB GET arrives in a few large reads, with no 64 KiB Buffer per read (issue 25).
 * Only the last reply of its call: a large GET (the proxy gives it a call of its own). A burst of many
 * (600 pipelined 1 MiB GETs, streamed) keeps the pieces as read, whose memory fits their bytes (a pooled
 * buffer is of its size class, up to 1/8 more) and goes as soon as each is written. Larger bulks too
 * are passed on in the pieces they are read in (PASS_THROUGH_BYTES).
 */
const DIRECT_MIN_BYTES = POOLED_MIN_BYTES;
const DIRECT_MAX_BYTES = 16 * 1024 * 1024;

/** Raised when a connection drops with commands in flight: their outcome is unknown. */
export class ConnectionLostError extends Error {}

export class RedisConnection {
  private readonly socket: net.Socket;
  private readonly queue: Pending[] = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  private needed = 0;
  /** Bytes of a large bulk reply still to come that go to the joined head as they arrive (PASS_THROUGH_BYTES). */
  private passing = 0;
  private closedError: Error | undefined;
  /** Commands of this event-loop turn not written yet: they go out in one write (one system call). */
  private outgoing: Buffer[] = [];
  private outgoingBytes = 0;
  /** Whether `outgoing` holds a large argument: then its pieces are written as they are (writev), not joined. */
  private outgoingLarge = false;
  private flushScheduled = false;
  /** Called once when the connection ends, for whatever reason. */
  onClose: ((err: Error) => void) | undefined;
  /** Receives replies nobody asked for (pub/sub messages, MONITOR lines) once `push` mode is set. */
  onPush: ((reply: Buffer) => void) | undefined;
  /** Where reads land: a slab, or a large bulk's own buffer. */
  private readonly landing = new ReadLanding();

  private constructor(endpoint: RedisEndpoint) {
    this.socket = net.connect({
      host: endpoint.host,
      port: endpoint.port,
      onread: {
        buffer: () => this.landing.next(),
        callback: (bytes) => {
          this.onRead(bytes);
          return true;
        },
      },
    });
    this.socket.setNoDelay(true);
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new ConnectionLostError('connection to redis-server closed')));
  }

  /** Connects, authenticates and selects the database; rejects with Redis' own error text. */
  static async open(endpoint: RedisEndpoint, timeoutMs = 5000): Promise<RedisConnection> {
    const conn = new RedisConnection(endpoint);
    const socket = conn.socket;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`redis-server at ${endpoint.host}:${endpoint.port} did not accept a connection within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to redis-server at ${endpoint.host}:${endpoint.port}: ${err.message}`));
      });
    });
    const setup: Arg[][] = [];
    if (endpoint.password !== undefined) {
      setup.push(endpoint.username ? ['AUTH', endpoint.username, endpoint.password] : ['AUTH', endpoint.password]);
    }
    if (endpoint.db) setup.push(['SELECT', String(endpoint.db)]);
    if (setup.length > 0) {
      const replies = await conn.send(setup);
      for (const reply of replies) {
        if (reply[0] === 0x2d) {
          conn.close();
          throw new Error(reply.subarray(1, reply.length - 2).toString());
        }
      }
    }
    return conn;
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  /** Sends commands in one write; resolves with one raw reply per command. */
  send(commands: readonly (readonly Arg[])[]): Promise<Buffer[]> {
    // A large argument (a 1 MiB SET value) is written as it is, not copied into the request.
    const pieces = encodePieces(commands);
    if (pieces === undefined) return this.sendEncoded(encodeCommands(commands), commands.length);
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      this.queue.push({ remaining: commands.length, replies: [], joined: false, resolve, reject });
      for (const piece of pieces) this.enqueueWrite(piece);
      this.outgoingLarge = true;
    });
  }

  /** Sends already encoded bytes that hold `count` commands. */
  sendEncoded(bytes: Buffer, count: number): Promise<Buffer[]> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      if (count === 0) return resolve([]);
      this.queue.push({ remaining: count, replies: [], joined: false, resolve, reject });
      this.enqueueWrite(bytes);
    });
  }

  /**
   * Like sendEncoded, but resolves with the `count` replies' bytes back to back in one Buffer: what an
   * HTTP resp2 answer sends as it is, with no Buffer per reply and no copy when they arrived in one read.
   * `bytes` may be pieces (a large value among them): they are written as they are, in one writev.
   */
  sendEncodedJoined(bytes: Buffer | readonly Buffer[], count: number): Promise<Buffer> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      if (count === 0) return resolve(Buffer.alloc(0));
      const done = (pieces: Buffer[]) => resolve(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
      this.queue.push({ remaining: count, replies: [], joined: true, resolve: done, reject });
      this.enqueueRequest(bytes);
    });
  }

  /**
   * Like sendEncodedJoined, but the replies' bytes go to `onPiece` in order as they arrive (whole
   * replies, or the parts of a large bulk reply as read), for an answer too large to hold back whole
   * (600 pipelined 1 MiB GETs) or to be joined; resolves once all `count` replies came.
   */
  sendEncodedStreamed(bytes: Buffer | readonly Buffer[], count: number, onPiece: (piece: Buffer) => void): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      if (count === 0) return resolve();
      this.queue.push({ remaining: count, replies: [], joined: true, onPiece, resolve: () => resolve(), reject });
      this.enqueueRequest(bytes);
    });
  }

  /** Writes commands whose replies arrive through `onPush` (SUBSCRIBE, MONITOR). */
  writeRaw(bytes: Buffer): void {
    if (!this.closedError) this.enqueueWrite(bytes);
  }

  /** Encoded commands, one Buffer or pieces written as they are (not joined). */
  private enqueueRequest(bytes: Buffer | readonly Buffer[]): void {
    if (Buffer.isBuffer(bytes)) return this.enqueueWrite(bytes);
    for (const piece of bytes) this.enqueueWrite(piece);
    this.outgoingLarge = true;
  }

  /**
   * The HTTP requests read in one event-loop turn each send their commands; they reach redis-server
   * in one write after the turn's I/O (setImmediate), in call order (bench/cpu-per-command.ts).
   */
  private enqueueWrite(bytes: Buffer): void {
    this.outgoing.push(bytes);
    this.outgoingBytes += bytes.length;
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flushWrites);
  }

  private readonly flushWrites = (): void => {
    this.flushScheduled = false;
    const out = this.outgoing;
    const size = this.outgoingBytes;
    const large = this.outgoingLarge;
    this.outgoing = [];
    this.outgoingBytes = 0;
    this.outgoingLarge = false;
    if (this.closedError || out.length === 0) return;
    if (!large) return void this.socket.write(out.length === 1 ? out[0] : Buffer.concat(out, size));
    this.socket.cork();
    for (const piece of out) this.socket.write(piece);
    this.socket.uncork();
  };

  close(): void {
    this.socket.destroy();
  }

  /** A read of `bytes` bytes, where the landing said. */
  private onRead(bytes: number): void {
    if (!this.landing.filling) return this.receive(this.landing.took(bytes));
    const bulk = this.landing.filled(bytes);
    if (bulk) this.directDone(bulk);
  }

  /** A large bulk begins at buf[pos] and ends at `end`, past buf: its bytes so far go to its own buffer, the rest is read there. */
  private readDirect(buf: Buffer, pos: number, end: number): void {
    const bulk = largeBuffers.take(end - pos);
    buf.copy(bulk, 0, pos);
    // Of this read's bytes, those copied are free again (earlier reads' parts stay as they are).
    this.landing.fill(bulk, buf.length - pos);
  }

  /** The last bytes of a large bulk arrived in its own buffer: it goes to the caller whole. */
  private directDone(bulk: Buffer): void {
    const head = this.queue[0];
    if (!head) return; // failed meanwhile: the connection is closed
    this.hand(head, bulk);
    if (--head.remaining === 0) {
      this.queue.shift();
      head.resolve(head.replies);
    }
  }

  private receive(chunk: Buffer): void {
    if (this.passing > 0) {
      chunk = this.passOn(chunk);
      if (chunk.length === 0) return;
    }
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered < this.needed) return; // a large reply is still arriving: don't rescan yet
    let buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    let pos = 0;
    for (;;) {
      if (pos >= buf.length) {
        this.chunks = [];
        this.buffered = 0;
        this.needed = 0;
        return;
      }
      const head = this.queue[0];
      if (head?.joined) {
        const next = this.deliverJoined(head, buf, pos);
        if (next < 0) return; // a partial reply waits in this.chunks for more bytes
        pos = next;
        continue;
      }
      const end = replyEnd(buf, pos);
      if (end < 0) {
        buf = buf.subarray(pos);
        this.chunks = [buf];
        this.buffered = buf.length;
        this.needed = -end - pos;
        return;
      }
      this.deliver(buf.subarray(pos, end));
      pos = end;
    }
  }

  /**
   * The complete replies from `start` that belong to `head` (a joined send) go to it as one piece; returns
   * where they end, or -1 when none is complete: the rest is kept for more bytes like any partial reply.
   */
  private deliverJoined(head: Pending, buf: Buffer, start: number): number {
    let pos = start;
    while (head.remaining > 0 && pos < buf.length) {
      const end = replyEnd(buf, pos);
      if (end < 0) {
        const bulkEnd = largeBulkEnd(buf, pos);
        if (bulkEnd > 0) {
          // A large bulk reply has begun: what came so far goes on now, the rest as it is read.
          if (pos > start) this.hand(head, buf.subarray(start, pos));
          if (head.remaining === 1 && bulkEnd - pos >= DIRECT_MIN_BYTES && bulkEnd - pos <= DIRECT_MAX_BYTES)
            this.readDirect(buf, pos, bulkEnd);
          else {
            this.hand(head, buf.subarray(pos));
            this.passing = bulkEnd - buf.length;
          }
          this.chunks = [];
          this.buffered = 0;
          this.needed = 0;
          return -1;
        }
        if (pos > start) break;
        const rest = buf.subarray(pos);
        this.chunks = [rest];
        this.buffered = rest.length;
        this.needed = -end - pos;
        return -1;
      }
      pos = end;
      head.remaining--;
    }
    this.hand(head, buf.subarray(start, pos));
    if (head.remaining === 0) {
      this.queue.shift();
      head.resolve(head.replies);
    }
    return pos;
  }

  /** The next bytes of a large bulk reply being passed through go to the head; returns what follows the reply. */
  private passOn(chunk: Buffer): Buffer {
    const head = this.queue[0];
    const n = Math.min(chunk.length, this.passing);
    this.passing -= n;
    if (!head) return EMPTY; // failed meanwhile: the connection is closed
    this.hand(head, n === chunk.length ? chunk : chunk.subarray(0, n));
    if (this.passing === 0 && --head.remaining === 0) {
      this.queue.shift();
      head.resolve(head.replies);
    }
    return n === chunk.length ? EMPTY : chunk.subarray(n);
  }

  private hand(head: Pending, piece: Buffer): void {
    if (head.onPiece) head.onPiece(piece);
    else head.replies.push(piece);
  }

  private deliver(reply: Buffer): void {
    const head = this.queue[0];
    if (!head) {
      this.onPush?.(reply);
      return;
    }
    head.replies.push(reply);
    if (--head.remaining === 0) {
      this.queue.shift();
      head.resolve(head.replies);
    }
  }

  private fail(err: Error): void {
    if (this.closedError) return;
    this.closedError =
      err instanceof ConnectionLostError ? err : new ConnectionLostError(`connection to redis-server failed: ${err.message}`);
    this.socket.destroy();
    for (const p of this.queue.splice(0)) p.reject(this.closedError);
    this.onClose?.(this.closedError);
  }
}

/**
 * Where the reply at `pos` ends, as scanReply says (negative: not complete). Bulk strings and one-line
 * replies, all the replies of a GET/SET/INCR pipeline, are read here a byte at a time: scanReply looks
 * for each line's end with a native indexOf, whose call cost more than the few bytes it searches
 * (bench/README.md, branch plat16). Anything else, or anything not complete, is scanReply's.
 */
export function replyEnd(buf: Buffer, pos: number): number {
  const end = buf.length;
  const type = buf[pos];
  if (type === 0x24) {
    // `$<digits>\r\n<bytes>\r\n`, or a nil `$-1\r\n`; a length of more than 12 digits goes to scanReply.
    if (buf[pos + 1] === 0x2d && buf[pos + 2] === 0x31 && buf[pos + 3] === 13 && pos + 4 < end) return pos + 5;
    let i = pos + 1;
    let length = 0;
    const last = i + 12 < end ? i + 12 : end;
    for (; i < last; i++) {
      const d = buf[i] - 0x30;
      if (d < 0 || d > 9) break;
      length = length * 10 + d;
    }
    if (i > pos + 1 && buf[i] === 13 && i + 1 < end) {
      const next = i + 4 + length;
      if (next <= end) return next;
    }
  } else if (type === 0x2b || type === 0x3a || type === 0x2d) {
    // `+OK\r\n`, `:1\r\n`, a short `-ERR …\r\n`: up to the first CR.
    const last = pos + 64 < end ? pos + 64 : end;
    for (let i = pos + 1; i < last; i++) {
      if (buf[i] === 13) {
        if (i + 1 < end) return i + 2;
        break;
      }
    }
  }
  return scanReply(buf, pos);
}

/**
 * Where the bulk reply at `pos` ends when it is PASS_THROUGH_BYTES or more and its header line is
 * complete (`$1048576\r\n`); -1 otherwise.
 */
function largeBulkEnd(buf: Buffer, pos: number): number {
  if (buf[pos] !== 0x24) return -1;
  const cr = buf.indexOf(13, pos + 1);
  if (cr < 0 || cr + 1 >= buf.length || cr - pos > 20) return -1;
  const len = Number(buf.toString('latin1', pos + 1, cr));
  return Number.isSafeInteger(len) && len >= PASS_THROUGH_BYTES ? cr + 2 + len + 2 : -1;
}

/** Text of an error reply (`-ERR ...\r\n` → `ERR ...`), or undefined when the reply is not an error. */
export function errorText(reply: Buffer): string | undefined {
  return reply[0] === 0x2d ? reply.toString('utf8', 1, reply.length - 2) : undefined;
}

/** Parses a redis:// or rediss:// URL into an endpoint. */
export function parseRedisUrl(url: string): RedisEndpoint {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`unsupported Redis URL scheme '${u.protocol}' (use redis://[user:password@]host:port[/db])`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`invalid database number in Redis URL path '${u.pathname}'`);
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db,
  };
}
