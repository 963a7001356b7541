import { describe, expect, it } from 'vitest';
import { ReadSlab } from '../../src/resp/read-slab.js';

describe('ReadSlab', () => {
  it('lands each read after the last in one slab, and starts a new slab when little room is left', () => {
    const slab = new ReadSlab();
    const first = slab.next();
    expect(first.length).toBe(64 * 1024);
    expect(slab.took(1000)).toBe(0);
    const second = slab.next();
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteOffset).toBe(first.byteOffset + 1000);
    expect(slab.took(60 * 1024 - 1000)).toBe(1000);
    const third = slab.next(); // 4 KiB left: under the 8 KiB floor
    expect(third.buffer).not.toBe(first.buffer);
    expect(third.length).toBe(64 * 1024);
  });

  it('reuses the part of a read whose bytes were copied away', () => {
    const slab = new ReadSlab();
    const first = slab.next();
    const start = slab.took(5000);
    slab.freeFrom(start + 200); // bytes 200.. of the read went elsewhere
    expect(slab.next().byteOffset).toBe(first.byteOffset + 200);
  });
});
