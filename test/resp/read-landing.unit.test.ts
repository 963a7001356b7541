import { describe, expect, it } from 'vitest';
import { ReadLanding } from '../../src/resp/read-landing.js';

describe('ReadLanding', () => {
  it('lands each read after the last in one slab, and starts a new slab when little room is left', () => {
    const landing = new ReadLanding();
    const first = landing.next();
    expect(first.length).toBe(64 * 1024);
    first.write('hello');
    expect(landing.took(5).toString()).toBe('hello');
    const second = landing.next();
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteOffset).toBe(first.byteOffset + 5);
    landing.took(60 * 1024 - 5);
    const third = landing.next(); // 4 KiB left: under the 8 KiB floor
    expect(third.buffer).not.toBe(first.buffer);
    expect(third.length).toBe(64 * 1024);
  });

  it('fills a buffer of its own, frees the part of the read copied into it, then lands in the slab again', () => {
    const landing = new ReadLanding();
    const first = landing.next();
    first.write('head:body');
    const read = landing.took(9);
    const own = Buffer.alloc(10);
    read.copy(own, 0, 5); // 'body' goes on past this read
    landing.fill(own, 4);
    expect(landing.filling).toBe(true);
    const rest = landing.next();
    expect(rest.buffer).toBe(own.buffer);
    expect(rest.length).toBe(6);
    rest.write('-more-');
    expect(landing.filled(2)).toBeUndefined();
    expect(landing.filled(4)?.toString()).toBe('body-more-');
    expect(landing.filling).toBe(false);
    // The slab again, from where the copied bytes began: 'head:' stays.
    expect(landing.next().byteOffset).toBe(first.byteOffset + 5);
    expect(first.subarray(0, 5).toString()).toBe('head:');
  });

  it('frees nothing of the read when the buffer also holds bytes of earlier reads', () => {
    const landing = new ReadLanding();
    const first = landing.next();
    landing.took(100);
    landing.fill(Buffer.alloc(1000), 300); // 300 bytes there: 200 of earlier reads, all 100 of this one
    landing.filled(700);
    expect(landing.next().byteOffset).toBe(first.byteOffset);
  });
});
