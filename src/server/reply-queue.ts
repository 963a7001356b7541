// The writer step: a connection's replies in request order. A reply known now is appended; one
// known later (forwarded, SUBSCRIBE waiting for its stream) takes a position that is filled when it
// arrives. Replies are written as soon as nothing before them is missing.

// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import { largeBuffers } from '../resp/large-buffers.js';
import { ReplyPieces, writeReply, type Reply } from '../resp/reply-pieces.js';
import { rangeView } from '../resp/buffer-view.js';

const EMPTY = Buffer.alloc(0);

/**
 * Where a connection's replies go: the calls the queue makes on its socket, and no more. A net.Socket
 * (or tls.TLSSocket) is one as it is, so the connection passes its socket and the calls are the same;
 * the seam lets test/proxy/dispatch.unit.test.ts run dispatch in-process with a fake output.
 */
export interface ReplyOutput {
  /** `done` (when given) runs once the bytes are written, or with the error that stopped them. */
  write(data: Buffer, done?: (err?: Error | null) => void): boolean;
  /** Writes until uncork go out together (net.Socket's; a fake output may leave them out). */
  cork?(): void;
  uncork?(): void;
  /** Ends the writing side; `done` runs once everything written is flushed. */
  end(done: () => void): unknown;
  /** Reads (and drops) what the client still sends, so its FIN is seen. */
  resume(): unknown;
  destroy(): unknown;
}

export class ReplyQueue {
  /** Replies in request order; undefined = not answered yet. */
  private readonly slots: (Reply | undefined)[] = [];
  /**
   * Beside each slot: a reply that is a range of an upstream answer (fillRange) is its slot's bytes
   * [starts[i], ends[i]), no view of its own (issue 25); ends[i] = -1: the whole slot.
   */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Position in the connection's whole reply sequence of slots[0] (positions stay valid when the array is trimmed). */
  private base = 0;
  /** First reply not written yet. */
  private head = 0;
  private closingNow = false;
  private closed = false;

  constructor(
    private readonly socket: ReplyOutput,
    /** After the last reply of a closing connection, how long the client has to close its side. */
    private readonly closeGraceMs: number,
  ) {}

  /** Positions taken and silenced by CLIENT REPLY OFF/SKIP before their reply came (made at the first). */
  private silenced: Set<number> | undefined;

  /** The position the next reply will take. */
  get nextPosition(): number {
    return this.base + this.slots.length;
  }

  /** CLIENT REPLY OFF/SKIP: the replies from `from` on (answered or still to come) are not written. */
  silence(from: number): void {
    for (let p = Math.max(from, this.base + this.head); p < this.base + this.slots.length; p++) {
      if (this.slots[p - this.base] === undefined) (this.silenced ??= new Set()).add(p);
      else {
        this.slots[p - this.base] = EMPTY;
        this.ends[p - this.base] = -1;
      }
    }
  }

  /** A reply known now. */
  answer(reply: Buffer): void {
    this.slots.push(reply);
    this.starts.push(0);
    this.ends.push(-1);
  }

  /** Takes the next position for a reply known later; `fill` it then. */
  take(): number {
    const slot = this.base + this.slots.length;
    this.slots.push(undefined);
    this.starts.push(0);
    this.ends.push(-1);
    return slot;
  }

  fill(slot: number, reply: Reply): void {
    if (this.silenced !== undefined && this.silenced.size > 0 && this.silenced.delete(slot)) reply = EMPTY;
    this.slots[slot - this.base] = reply;
  }

  /** Fills a position with bytes [start, end) of `answer` (an upstream answer, batcher.ts SplitAnswer). */
  fillRange(slot: number, answer: Buffer, start: number, end: number): void {
    if (this.silenced !== undefined && this.silenced.size > 0 && this.silenced.delete(slot)) return this.fill(slot, EMPTY);
    const i = slot - this.base;
    this.slots[i] = answer;
    this.starts[i] = start;
    this.ends[i] = end;
  }

  /** Replies taken or answered and not yet written (backpressure counts these). */
  get owed(): number {
    return this.slots.length - this.head;
  }

  /** True once the connection is closing (QUIT, protocol error, client gone): nothing more is sent. */
  get closing(): boolean {
    return this.closingNow;
  }

  /** True once every reply is written and the socket ended, or the socket is gone. */
  get ended(): boolean {
    return this.closed;
  }

  /** Writes every reply that is ready and has no unanswered reply before it. */
  write(): void {
    if (this.closed) return;
    const { slots, starts, ends } = this;
    const start = this.head;
    // One pass finds the ready run, its bytes, whether a large reply (or one in pieces) is in it, and
    // whether it is one answer's adjacent ranges: a connection's commands go side by side in one upstream
    // call, so at -P 16 its replies usually are one piece of the answer, written as one view, not copied.
    let end = start;
    let bytes = 0;
    let large = false;
    const first = start < slots.length ? slots[start] : undefined;
    /** End of the adjacent ranges of `first` so far; -1 once the run is anything else. */
    let runEnd = first !== undefined && ends[start] >= 0 ? starts[start] : -1;
    for (; end < slots.length; end++) {
      const reply = slots[end];
      if (reply === undefined) break;
      const last = ends[end];
      let length: number;
      if (last < 0) {
        length = reply.length;
        if (reply instanceof ReplyPieces) large = true;
        runEnd = -1;
      } else {
        length = last - starts[end];
        runEnd = reply === first && starts[end] === runEnd ? last : -1;
      }
      bytes += length;
      if (length >= LARGE_REPLY_BYTES) large = true;
    }
    if (end > start) {
      this.head = end;
      if (end - start === 1) this.writeAt(start);
      else if (runEnd >= 0) this.socket.write(rangeView(first as Buffer, starts[start], runEnd, LARGE_REPLY_BYTES));
      else if (!large) this.socket.write(joined(slots as readonly (Buffer | undefined)[], starts, ends, start, end, bytes));
      else {
        // Large replies (1 MiB GETs of a pipelining client) go out as they are, in one writev, not
        // copied; a reply in pieces (resp/reply-pieces.ts) from the pieces it was read in.
        this.socket.cork?.();
        for (let i = start; i < end; i++) this.writeAt(i);
        this.socket.uncork?.();
      }
      if (end === slots.length) {
        this.base += end;
        emptyKeepingRoom(slots);
        emptyKeepingRoom(starts);
        emptyKeepingRoom(ends);
        this.head = 0;
      } else if (end > 1024) {
        this.base += end;
        slots.splice(0, end);
        starts.splice(0, end);
        ends.splice(0, end);
        this.head = 0;
      }
    }
    if (this.closingNow && this.head === this.slots.length) {
      this.closed = true;
      // Once every reply is handed to the kernel: read (and ignore) what the client still sends, so
      // its FIN is seen and the socket destroyed; a client that never closes its side is cut off
      // after a grace period (the kernel still delivers what it holds).
      this.socket.end(() => {
        this.socket.resume();
        setTimeout(() => this.socket.destroy(), this.closeGraceMs).unref();
      });
    }
  }

  /** Writes the reply of slots[i] alone: a range as a view of its answer. */
  private writeAt(i: number): void {
    const reply = this.slots[i]!;
    const last = this.ends[i];
    if (last < 0) writeOne(this.socket, reply);
    else this.socket.write(rangeView(reply as Buffer, this.starts[i], last, LARGE_REPLY_BYTES));
  }

  /** QUIT, protocol errors, the client's end: write what is owed, then close. */
  closeAfterReplies(): void {
    this.closingNow = true;
    this.write();
  }

  /** The socket is gone: nothing is written any more. */
  closedByPeer(): void {
    this.closed = true;
    this.closingNow = true;
  }
}

/**
 * Writes one reply. A reply that is a buffer of the large-value pool (a 1 MiB GET that the upstream
 * client read straight into it, kv-client.ts) goes back to the pool once the socket has written it,
 * for the next large answer: no fresh 1 MiB per GET (issue 25). After a failed write it is left to the
 * garbage collector.
 */
function writeOne(socket: ReplyOutput, reply: Reply): void {
  if (reply instanceof ReplyPieces || !largeBuffers.writeGivingBack(socket, reply)) writeReply(socket, reply);
}

/** Arrays of up to this many entries keep their room when emptied (emptyKeepingRoom). */
const KEPT_ROOM = 64;

/**
 * Empties an array; a short one keeps its room for the next entries. `length = 0` hands V8's backing
 * store back, so the next push made a new one: ~150 bytes of garbage per command at -P 1 (one
 * command per read), for the reply positions here and the batcher's pending items. pop() keeps it.
 * A long one (a burst of a deep pipeline) lets it go, so an idle connection holds no large array.
 */
export function emptyKeepingRoom(array: unknown[]): void {
  if (array.length > KEPT_ROOM) array.length = 0;
  else while (array.length > 0) array.pop();
}

/** From this size on, a reply is written as its own Buffer rather than copied into a joined write. */
const LARGE_REPLY_BYTES = 64 * 1024;

/**
 * Replies [start, end) in one Buffer of `bytes` bytes: what Buffer.concat(slots.slice(start, end))
 * makes, without the array copy and the second pass over the lengths. Only plain Buffers reach it. A
 * range (ends[i] >= 0) is copied straight from its answer: byte by byte when short (no view, no call).
 */
function joined(
  slots: readonly (Buffer | undefined)[],
  starts: readonly number[],
  ends: readonly number[],
  start: number,
  end: number,
  bytes: number,
): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = start; i < end; i++) {
    const reply = slots[i]!;
    const last = ends[i];
    if (last < 0) {
      out.set(reply, at);
      at += reply.length;
    } else if (last - starts[i] <= SHORT_RANGE) {
      for (let j = starts[i]; j < last; j++) out[at++] = reply[j];
    } else {
      out.set(rangeView(reply, starts[i], last, LARGE_REPLY_BYTES), at);
      at += last - starts[i];
    }
  }
  return out;
}

/** Ranges up to this many bytes are copied by a loop rather than through a view and TypedArray#set. */
const SHORT_RANGE = 64;
