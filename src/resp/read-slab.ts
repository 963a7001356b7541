// Where a socket's reads land when its owner chooses the memory (net's `onread` option): slabs of
// 64 KiB, each read after the last, so a small reply or answer is a view of a slab shared with the ones
// before it: one allocation per ~64 KiB of reads, where node's default gives every read an ArrayBuffer
// of its own (64 KiB, shrunk after). Used by the proxy's upstream HTTP client (upstream/http1-pool.ts)
// and the platform's redis-server connection (platform/redis/connection.ts), issue 25.
import { Buffer } from 'node:buffer';

const SLAB_BYTES = 64 * 1024;
/** A slab with less room than this left is replaced by a new one (the old one lives on in its views). */
const SLAB_MIN_ROOM = 8 * 1024;

export class ReadSlab {
  private slab: Buffer | undefined;
  private at = 0;

  /** The free end of the slab, where the next read lands. */
  next(): Buffer {
    if (!this.slab || this.slab.length - this.at < SLAB_MIN_ROOM) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.at = 0;
    }
    return this.slab.subarray(this.at);
  }

  /** A read of `bytes` landed where next() said: those bytes are in use. Returns where they begin. */
  took(bytes: number): number {
    const start = this.at;
    this.at += bytes;
    return start;
  }

  /** The slab from `offset` on is free again (what was read there was copied away). */
  freeFrom(offset: number): void {
    this.at = offset;
  }
}
