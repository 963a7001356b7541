import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestReader } from '../../src/resp/request-reader.js';
import { encodeCommands, encodePieces, LARGE_ARG_BYTES, type Arg } from '../../src/resp/request-writer.js';

/** Reads back every command of an encoded buffer with the server-side reader. */
function readBack(bytes: Buffer): Buffer[][] {
  const reader = new RequestReader();
  reader.push(bytes);
  const out: Buffer[][] = [];
  for (let r = reader.read(); r; r = reader.read()) {
    if (r.kind !== 'command') throw new Error(r.message);
    out.push(r.args);
  }
  return out;
}

describe('encodeCommands', () => {
  it('writes Redis multibulk requests byte for byte', () => {
    expect(
      encodeCommands([
        ['SET', 'k', 'v'],
        ['GET', Buffer.from('k')],
      ]).toString(),
    ).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n');
    expect(encodeCommands([['SET', 'clé', 'ünïcödé 🎉']]).toString()).toBe('*3\r\n$3\r\nSET\r\n$4\r\nclé\r\n$16\r\nünïcödé 🎉\r\n');
    expect(encodeCommands([])).toEqual(Buffer.alloc(0));
  });

  it('round-trips any text or binary arguments, all-string batches and mixed ones alike', () => {
    const arg: fc.Arbitrary<Arg> = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.uint8Array().map((a) => Buffer.from(a)),
    );
    fc.assert(
      fc.property(fc.array(fc.array(arg, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), (commands) => {
        const expected = commands.map((c) => c.map((a) => (typeof a === 'string' ? Buffer.from(a) : a)));
        expect(readBack(encodeCommands(commands))).toEqual(expected);
        const strings = commands.map((c) => c.map((a) => (typeof a === 'string' ? a : a.toString('latin1'))));
        expect(readBack(encodeCommands(strings))).toEqual(strings.map((c) => c.map((a) => Buffer.from(a))));
      }),
    );
  });
});

describe('encodePieces', () => {
  it('is undefined without a large argument', () => {
    expect(encodePieces([['SET', 'k', Buffer.alloc(LARGE_ARG_BYTES - 1)]])).toBeUndefined();
  });

  it('gives the same bytes as encodeCommands, each large argument being its own piece, not copied', () => {
    const large = fc.integer({ min: LARGE_ARG_BYTES, max: LARGE_ARG_BYTES + 3 }).map((n) => Buffer.alloc(n, n & 255));
    const arg: fc.Arbitrary<Arg> = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
      large,
    );
    fc.assert(
      fc.property(fc.array(fc.array(arg, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (commands) => {
        const pieces = encodePieces(commands);
        const largeArgs = commands.flat().filter((a): a is Buffer => typeof a !== 'string' && a.length >= LARGE_ARG_BYTES);
        if (largeArgs.length === 0) {
          expect(pieces).toBeUndefined();
        } else {
          expect(Buffer.concat(pieces!).equals(encodeCommands(commands))).toBe(true);
          for (const a of largeArgs) expect(pieces!.includes(a)).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });
});
