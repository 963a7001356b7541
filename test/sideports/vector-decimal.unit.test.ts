// The side port's decimal reader (VALUES): the same double as Number(text) whenever it answers, and no
// answer (the caller parses the text) for what its exact fast path does not cover.
import { describe, expect, it } from 'vitest';
import { fastDecimal } from '../../src/sideports/vector/decimal.js';

const read = (s: string) => fastDecimal(Buffer.from(s, 'latin1'));

describe('fastDecimal', () => {
  it('reads the numbers clients send as Number() reads them', () => {
    for (const s of ['0', '1', '-1', '+1', '0.5', '-0.041523', '.5', '1.', '007', '1e5', '1E+05', '2.5e-3', '-3.25E2', '123456789012345'])
      expect(read(s)).toBe(Number(s));
  });

  it('keeps the sign of zero', () => {
    expect(Object.is(read('-0'), -0)).toBe(true);
    expect(Object.is(read('-0.000'), -0)).toBe(true);
    expect(Object.is(read('0e10'), 0)).toBe(true);
  });

  it('agrees with Number() on random values in the shapes clients print', () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      return seed / 2 ** 32;
    };
    for (let n = 0; n < 20_000; n++) {
      const x = (rand() * 2 - 1) * 10 ** Math.floor(rand() * 12 - 6);
      for (const s of [String(x), x.toFixed(6), x.toPrecision(15), x.toExponential(8), String(Math.fround(x))]) {
        const got = read(s);
        if (got !== undefined) expect(got).toBe(Number(s));
      }
    }
  });

  it('answers nothing where the exact fast path ends (the caller parses the text)', () => {
    for (const s of [
      '1234567890123456', // 16 significant digits
      '0.12345678901234567',
      '1e23',
      '1e-23',
      '1e400',
      '',
      '.',
      '-',
      'e5',
      '1e',
      '1e+',
      ' 1',
      '1 ',
      '0x10',
      'inf',
      'nan',
      '1,5',
      '1_0',
    ])
      expect(read(s), s).toBeUndefined();
  });

  it('reads leading zeros without counting them as digits', () => {
    expect(read('0.0000000000000000000001')).toBe(1e-22);
    expect(read('000000000000000000001')).toBe(1);
  });
});
