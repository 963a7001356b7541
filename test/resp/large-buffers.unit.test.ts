import { describe, expect, it } from 'vitest';
import { capacityFor, LargeBuffers, POOLED_MIN_BYTES } from '../../src/resp/large-buffers.js';

describe('LargeBuffers', () => {
  it('hands out exact-size buffers and uses a given-back one again', () => {
    const pool = new LargeBuffers();
    const a = pool.take(1024 * 1024);
    expect(a.length).toBe(1024 * 1024);
    a.fill(1);
    pool.give(a);
    expect(pool.freeByteCount).toBe(1024 * 1024);
    const b = pool.take(1000 * 1024); // the same size class
    expect(b.length).toBe(1000 * 1024);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.freeByteCount).toBe(0);
  });

  it('size classes: eight per power of two, never more than 1/8 above the size', () => {
    expect(capacityFor(1024 * 1024)).toBe(1024 * 1024);
    expect(capacityFor(5 * 1024 * 1024)).toBe(5 * 1024 * 1024);
    expect(capacityFor(5 * 1024 * 1024 + 1)).toBe(5.5 * 1024 * 1024);
    for (const n of [POOLED_MIN_BYTES, 200_001, 1_048_577, 3_000_000, 9_999_999]) {
      expect(capacityFor(n)).toBeGreaterThanOrEqual(n);
      expect(capacityFor(n)).toBeLessThanOrEqual(n * 1.125);
    }
  });

  it('never hands out a buffer that is still out', () => {
    const pool = new LargeBuffers();
    const views = [pool.take(POOLED_MIN_BYTES), pool.take(POOLED_MIN_BYTES), pool.take(POOLED_MIN_BYTES)];
    expect(new Set(views.map((v) => v.buffer)).size).toBe(3);
  });

  it('ignores what it did not hand out, and a second give of the same view', () => {
    const pool = new LargeBuffers();
    pool.give(Buffer.alloc(POOLED_MIN_BYTES));
    expect(pool.freeByteCount).toBe(0);
    const a = pool.take(POOLED_MIN_BYTES);
    pool.give(a);
    pool.give(a);
    expect(pool.freeByteCount).toBe(POOLED_MIN_BYTES);
    const b = pool.take(POOLED_MIN_BYTES);
    const c = pool.take(POOLED_MIN_BYTES);
    expect(b.buffer).not.toBe(c.buffer);
  });

  it('small and huge sizes are plain Buffers, never kept', () => {
    const pool = new LargeBuffers();
    const small = pool.take(POOLED_MIN_BYTES - 1);
    pool.give(small);
    const huge = pool.take(17 * 1024 * 1024);
    pool.give(huge);
    expect(pool.freeByteCount).toBe(0);
  });

  it('keeps at most its limit of free bytes; giveAll gives back only pooled views', () => {
    const pool = new LargeBuffers(2 * 1024 * 1024);
    const views = [pool.take(1024 * 1024), pool.take(1024 * 1024), pool.take(1024 * 1024)];
    pool.giveAll([Buffer.from('SET'), Buffer.from('k'), ...views]);
    expect(pool.freeByteCount).toBe(2 * 1024 * 1024);
  });

  it('owns a view it handed out until it is given back, and nothing else (not a view of that view, not a plain Buffer)', () => {
    const pool = new LargeBuffers();
    const view = pool.take(1024 * 1024);
    expect(pool.owns(view)).toBe(true);
    expect(pool.owns(view.subarray(0, 10))).toBe(false);
    expect(pool.owns(Buffer.alloc(1024 * 1024))).toBe(false);
    expect(pool.owns(pool.take(100))).toBe(false);
    pool.give(view);
    expect(pool.owns(view)).toBe(false);
  });

  it('writeGivingBack: a pooled view goes back once written, not after a failed write; anything else is left to the caller', () => {
    const pool = new LargeBuffers();
    const done: Array<(err?: Error | null) => void> = [];
    const out = { write: (_data: Buffer, cb: (err?: Error | null) => void) => done.push(cb) };
    const small = Buffer.alloc(10);
    expect(pool.writeGivingBack(out, small)).toBe(false);
    expect(pool.writeGivingBack(out, Buffer.alloc(POOLED_MIN_BYTES))).toBe(false); // large, but not the pool's
    const ok = pool.take(POOLED_MIN_BYTES);
    const failed = pool.take(POOLED_MIN_BYTES);
    expect(pool.writeGivingBack(out, ok)).toBe(true);
    expect(pool.writeGivingBack(out, failed)).toBe(true);
    expect(done).toHaveLength(2);
    expect(pool.freeByteCount).toBe(0); // nothing back before the writes finish
    done[0]();
    done[1](new Error('EPIPE'));
    expect(pool.freeByteCount).toBe(POOLED_MIN_BYTES);
    expect(pool.owns(ok)).toBe(false);
    expect(pool.owns(failed)).toBe(true);
  });
});
