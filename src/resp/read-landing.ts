// Where a socket's reads land when its owner chooses the memory (net's `onread` option), for the
// proxy's upstream HTTP client (upstream/http1-pool.ts) and the platform's redis-server connection
// (platform/redis/connection.ts), issue 25:
// - slabs of 64 KiB, each read after the last, so a small reply or answer is a view of a slab shared
//   with the ones before it: one allocation per ~64 KiB of reads, where node's default gives every read
//   an ArrayBuffer of its own (64 KiB, shrunk after);
// - a buffer of its own for a large value that goes on past the read it starts in (fill): the rest of it
//   is read straight into that buffer, in a few large reads, with no copy and no join.
import { Buffer } from 'node:buffer';

const SLAB_BYTES = 64 * 1024;
/** A slab with less room than this left is replaced by a new one (the old one lives on in its views). */
const SLAB_MIN_ROOM = 8 * 1024;

export class ReadLanding {
  private slab: Buffer | undefined;
  private at = 0;
  /** The last read into the slab: where it begins and its size. */
  private readStart = 0;
  private readBytes = 0;
  /** The buffer being filled (fill), and how much of it is there. */
  private own: Buffer | undefined;
  private ownAt = 0;

  /** Where the next read lands: the rest of the buffer being filled, else the free end of the slab. */
  next(): Buffer {
    if (this.own) return this.own.subarray(this.ownAt);
    if (!this.slab || this.slab.length - this.at < SLAB_MIN_ROOM) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.at = 0;
    }
    return this.slab.subarray(this.at);
  }

  /** True while reads land in a buffer of their own (fill). */
  get filling(): boolean {
    return this.own !== undefined;
  }

  /** A read of `bytes` landed in the slab, where next() said: those bytes, a view of the slab. */
  took(bytes: number): Buffer {
    this.readStart = this.at;
    this.readBytes = bytes;
    this.at += bytes;
    return this.slab!.subarray(this.readStart, this.at);
  }

  /**
   * `target`'s first `have` bytes are there, the last of them copied from the end of the read took()
   * gave: that part of the slab is free again, and the next reads land in `target` until it is full.
   */
  fill(target: Buffer, have: number): void {
    this.own = target;
    this.ownAt = have;
    this.at = this.readStart + Math.max(0, this.readBytes - have);
  }

  /** A read of `bytes` landed in the buffer being filled: the buffer once full (reads go to the slab again), else undefined. */
  filled(bytes: number): Buffer | undefined {
    const own = this.own!;
    this.ownAt += bytes;
    if (this.ownAt < own.length) return undefined;
    this.own = undefined;
    return own;
  }
}
