import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonExactIntegers } from '../../src/upstream/json-parse.js';

describe('parseJsonExactIntegers', () => {
  it('keeps 64-bit integers exact and leaves everything else as JSON.parse does', () => {
    expect(parseJsonExactIntegers('[{"result":9223372036854775807},{"result":-9223372036854775808}]')).toEqual([
      { result: 9223372036854775807n },
      { result: -9223372036854775808n },
    ]);
    expect(
      parseJsonExactIntegers('[{"result":"OTIyMzM3MjAzNjg1NDc3NTgwNw=="},{"result":1.5e300},{"error":"ERR 12345678901234567890"}]'),
    ).toEqual([{ result: 'OTIyMzM3MjAzNjg1NDc3NTgwNw==' }, { result: 1.5e300 }, { error: 'ERR 12345678901234567890' }]);
    expect(parseJsonExactIntegers('"a\\"12345678901234567890"')).toBe('a"12345678901234567890');
  });

  it('equals JSON.parse for any JSON value without big integers', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        const hasBig = /(?<![\d.eE"])-?\d{16,}(?![\d.eE])/.test(text);
        fc.pre(!hasBig);
        expect(parseJsonExactIntegers(text)).toEqual(JSON.parse(text));
      }),
    );
  });
});
