// The word-at-a-time JSON text check must say exactly what a byte loop says, wherever the special
// byte sits (before the first aligned word, inside one at any of its four places, in the tail) and
// whatever the alignment of the view.
import { describe, expect, it } from 'vitest';
import { HIGH_BYTES, jsonTextFlags, NEEDS_ESCAPE } from '../../src/resp/json-text-scan.js';

function reference(b: Uint8Array, from: number, to: number): number {
  let flags = 0;
  for (let i = from; i < to; i++) {
    const c = b[i];
    if (c < 0x20 || c === 0x22 || c === 0x5c) return flags | NEEDS_ESCAPE;
    if (c > 0x7f) flags |= HIGH_BYTES;
  }
  return flags;
}

/** What the check answers reliably: escape or not, and high bytes when there is no escape. */
function verdict(flags: number): string {
  return flags & NEEDS_ESCAPE ? 'escape' : flags & HIGH_BYTES ? 'high' : 'plain';
}

describe('jsonTextFlags', () => {
  it('agrees with a byte loop for every special byte at every place and alignment', () => {
    const specials = [0x00, 0x01, 0x0a, 0x1f, 0x22, 0x5c, 0x80, 0xc3, 0xff];
    const near = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x41];
    const backing = Buffer.alloc(400, 0x78);
    for (let offset = 0; offset < 4; offset++) {
      for (const length of [0, 1, 3, 63, 64, 65, 67, 200]) {
        const view = backing.subarray(offset, offset + length);
        view.fill(0x78);
        expect(jsonTextFlags(view, 0, length)).toBe(0);
        for (const c of [...specials, ...near]) {
          for (let at = 0; at < length; at += at < 8 || at > length - 8 ? 1 : 13) {
            view.fill(0x78);
            view[at] = c;
            const got = jsonTextFlags(view, 0, length);
            if (verdict(got) !== verdict(reference(view, 0, length)))
              expect.fail(`byte 0x${c.toString(16)} at ${at} of ${length} (offset ${offset}): ${got}`);
          }
        }
      }
    }
  });

  it('checks only [from, to), and finds an escape after high bytes and high bytes in any word', () => {
    const b = Buffer.alloc(300, 0x61);
    b[10] = 0x22;
    b[290] = 0x5c;
    expect(jsonTextFlags(b, 11, 290)).toBe(0);
    expect(jsonTextFlags(b, 11, 291) & NEEDS_ESCAPE).toBe(NEEDS_ESCAPE);
    b.fill(0xc3, 100, 104); // UTF-8 lead bytes, a whole word of them
    expect(jsonTextFlags(b, 11, 290)).toBe(HIGH_BYTES);
    expect(jsonTextFlags(b, 11, 291) & NEEDS_ESCAPE).toBe(NEEDS_ESCAPE);
  });

  it('agrees with a byte loop on random bytes', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 2000; round++) {
      const length = Math.floor(rand() * 300);
      const b = Buffer.alloc(length + 3);
      for (let i = 0; i < b.length; i++) b[i] = rand() < 0.995 ? 0x20 + Math.floor(rand() * 0x5f) : Math.floor(rand() * 256);
      const from = Math.floor(rand() * 3);
      const view = b.subarray(from);
      const to = Math.min(view.length, length);
      expect(verdict(jsonTextFlags(view, 0, to))).toBe(verdict(reference(view, 0, to)));
    }
  });
});
