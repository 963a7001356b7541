// The side port's reader of a whole VALUES list at once (one JSON.parse): exactly Number(text) for
// every value when it answers, and no answer (the caller reads each value) for anything outside JSON's
// number grammar or out of range, whatever the arguments hold.
import { describe, expect, it } from 'vitest';
import { ArgCursor, CommandError } from '../../src/sideports/args.js';
import { readDecimals } from '../../src/sideports/vector/decimal-batch.js';
import { readVectorInput } from '../../src/sideports/vector/input.js';

const args = (...texts: string[]) => texts.map((t) => Buffer.from(t, 'latin1'));
const read = (...texts: string[]) => readDecimals(args(...texts), 0, texts.length);

describe('readDecimals', () => {
  it('reads the values as Number() reads them, sign of zero included', () => {
    const texts = ['0', '-0', '1', '-1', '0.5', '-0.041523', '1e5', '1E+05', '2.5e-3', '-3.25E2', '0.01842300035059452', '1e-320'];
    const got = read(...texts)!;
    expect(got).toHaveLength(texts.length);
    texts.forEach((t, k) => expect(Object.is(got[k], Number(t)), t).toBe(true));
  });

  it('agrees with Number() on float32 values printed as doubles (17 digits), as clients send them', () => {
    let seed = 11;
    const rand = () => {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      return seed / 2 ** 32;
    };
    for (let round = 0; round < 200; round++) {
      const texts = Array.from({ length: 384 }, () => {
        const x = (rand() * 2 - 1) * 10 ** Math.floor(rand() * 10 - 5);
        return String(rand() < 0.5 ? Math.fround(x) : x);
      });
      expect(read(...texts)).toEqual(texts.map(Number));
    }
  });

  it('reads only the arguments asked for', () => {
    const list = args('VSIM', 'key', 'VALUES', '2', '0.25', '-1.5e-7', 'COUNT', '10');
    expect(readDecimals(list, 4, 2)).toEqual([0.25, -1.5e-7]);
  });

  it('answers nothing for what JSON does not read as one finite number (the caller reads it)', () => {
    for (const bad of [
      '+1',
      '.5',
      '1.',
      '007',
      '-',
      '',
      ' ',
      '0x10',
      'inf',
      'nan',
      'NaN',
      'Infinity',
      '1e',
      '1e+',
      '1e400',
      '-1e400',
      'true',
      'null',
      '"1"',
      '[1]',
      '{}',
    ])
      expect(read('0.5', bad, '2'), JSON.stringify(bad)).toBeUndefined();
  });

  it('answers nothing when arguments hold separators or brackets, even when the count of numbers could match', () => {
    expect(read('1,2', '3')).toBeUndefined(); // 3 numbers for 2 arguments
    expect(read('1,2')).toBeUndefined();
    expect(read('1,2', '')).toBeUndefined(); // an empty slot is a syntax error
    expect(read('1]', '[2')).toBeUndefined();
    expect(read('1],[2')).toBeUndefined();
    expect(read('[1', '2]')).toBeUndefined(); // a nested array
    expect(read('1', '2]')).toBeUndefined();
  });

  it('takes the whitespace around a number that Number() also takes, with the same value', () => {
    for (const t of [' 1', '1 ', '\t-2.5\n', '\r3e2']) expect(read(t), JSON.stringify(t)).toEqual([Number(t)]);
  });

  it('reads a list larger than its kept buffer, and the next small one after it', () => {
    const long = Array.from({ length: 20_000 }, (_, k) => String(Math.fround(Math.sin(k)))); // ~360 KB of text
    expect(read(...long)).toEqual(long.map(Number));
    expect(read('0.125', '-0.5')).toEqual([0.125, -0.5]);
  });
});

describe('VALUES through readVectorInput', () => {
  const values = (...texts: string[]) =>
    readVectorInput(new ArgCursor(args('VSIM', 'key', 'VALUES', String(texts.length), ...texts, 'COUNT', '10'), 2), true).dense;

  it('reads short values, 17-digit ones and what only strtod takes, each as Number() reads it', () => {
    for (const texts of [
      ['0.5', '-0.041523', '1e-3'], // all short: read one by one from the bytes
      ['0.5', '0.01842300035059452', '-0.009421999566257'], // a long one: all at once
      ['0.01842300035059452', '+1', '.5', '1.', '007'], // a long one and JSON refuses some: one by one
    ])
      expect(values(...texts), texts.join(' ')).toEqual(texts.map(Number));
  });

  it("answers Redis' error for a value nobody reads, after a long value as before one", () => {
    for (const texts of [
      ['0.01842300035059452', 'abc'],
      ['abc', '0.01842300035059452'],
      ['0.01842300035059452', '1e400'],
      ['0.01842300035059452', ''],
    ]) {
      expect(() => values(...texts)).toThrow(CommandError);
      expect(() => values(...texts)).toThrow(/^ERR invalid vector specification$/);
    }
  });
});
