// Buffers for large values (128 KiB and more), handed back and used again (issue 25).
//
// Every new Buffer is an ArrayBuffer that V8 counts as external memory, and each few tens of MiB of
// it start a full garbage collection (mark-compact), whatever the heap's size. A proxy taking 1 MiB
// SETs allocated 1 MiB per SET for the value and ran a full collection every ~20 SETs: a third of its
// CPU per SET was V8's marking threads (perf, bench/README.md). A value buffer that comes back here
// once its command is answered is used for the next value instead: no new external memory, no full
// collections driven by it.
//
// Ownership is explicit and one-way: `take` hands out a view; only its last holder calls `give`, once,
// when nothing can read the bytes any more. A buffer never given back is an ordinary Buffer the
// garbage collector frees. Views are recognised by identity (a WeakMap), so giving back anything
// else (a small argument, a view of a read buffer) does nothing.
import { largeValuesSeen } from '../large-value-heap.js';

/** From this size on a value buffer is pooled; smaller ones are plain Buffers. */
export const POOLED_MIN_BYTES = 128 * 1024;
/** Larger values are not pooled: rare, and holding them would weigh on idle memory. */
const POOLED_MAX_BYTES = 16 * 1024 * 1024;
/** Free memory the pool keeps at most, over all sizes (what an idle process holds after large values). */
const FREE_BYTES_LIMIT = 16 * 1024 * 1024;

export class LargeBuffers {
  /** Free buffers by capacity (capacityFor), most recently given back last. */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  /** Views handed out and not yet given back, with the buffer each one views. */
  private readonly out = new WeakMap<Buffer, Buffer>();

  constructor(private readonly freeLimit = FREE_BYTES_LIMIT) {}

  /** A Buffer of exactly `bytes` bytes, uninitialised (Buffer.allocUnsafe's contract). */
  take(bytes: number): Buffer {
    if (bytes < POOLED_MIN_BYTES) return Buffer.allocUnsafe(bytes);
    largeValuesSeen();
    if (bytes > POOLED_MAX_BYTES) return Buffer.allocUnsafe(bytes);
    const capacity = capacityFor(bytes);
    const list = this.free.get(capacity);
    let whole = list?.pop();
    if (whole) this.freeBytes -= capacity;
    else whole = Buffer.allocUnsafeSlow(capacity);
    const view = whole.subarray(0, bytes);
    this.out.set(view, whole);
    return view;
  }

  /** Hands back a view from take() that nothing reads any more; anything else is ignored. */
  give(view: Buffer): void {
    const whole = this.out.get(view);
    if (whole === undefined) return;
    this.out.delete(view);
    if (this.freeBytes + whole.length > this.freeLimit) return; // over the limit: left to the GC
    let list = this.free.get(whole.length);
    if (!list) this.free.set(whole.length, (list = []));
    list.push(whole);
    this.freeBytes += whole.length;
  }

  /** Whether `view` is a view from take() not given back yet (its holder may give it back). */
  owns(view: Buffer): boolean {
    return this.out.has(view);
  }

  /** Gives back every pooled view among `args` (a command's arguments after it was answered). */
  giveAll(args: readonly Buffer[]): void {
    for (let i = 0; i < args.length; i++) if (args[i].length >= POOLED_MIN_BYTES) this.give(args[i]);
  }

  /**
   * Writes `data` to `out`; a pooled view goes back to the pool once written (after a failed write it is
   * left to the garbage collector). False when `data` is not a pooled view: the caller writes it its own way.
   */
  writeGivingBack(out: { write(data: Buffer, done: (err?: Error | null) => void): unknown }, data: Buffer): boolean {
    if (data.length < POOLED_MIN_BYTES || !this.owns(data)) return false;
    out.write(data, (err) => {
      if (!err) this.give(data);
    });
    return true;
  }

  /** Bytes held free (tests, metrics). */
  get freeByteCount(): number {
    return this.freeBytes;
  }
}

/** Size classes of eight steps per power of two: a value's buffer is at most 1/8 larger than the value. */
export function capacityFor(bytes: number): number {
  const step = 2 ** (Math.floor(Math.log2(bytes)) - 3);
  return Math.ceil(bytes / step) * step;
}

/** The proxy's pool (one thread: a value's buffer is taken and given back on it). */
export const largeBuffers = new LargeBuffers();
