// The values of Redis' FILTER expressions (vector sets, expr.c): numbers, byte strings, null and
// tuples, with Redis' conversions between them. Strings are latin1 JS strings, one char per byte, so
// comparisons and substrings are byte-exact as in Redis.
import { strtodWhole } from './c-number.js';

export type FilterValue = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'null' } | { t: 'tuple'; v: FilterValue[] };

export const num = (v: number): FilterValue => ({ t: 'num', v });

/** A value as a number: strings that are one whole number (under 256 bytes) are that number, all else 0. */
export function toNum(x: FilterValue): number {
  if (x.t === 'num') return x.v;
  if (x.t === 'str' && x.v.length < 256) return strtodWhole(x.v) ?? 0;
  return 0;
}

/** Truthiness: 0 and the empty string and null are false; NaN, other strings and tuples true. */
export function toBool(x: FilterValue): boolean {
  if (x.t === 'num') return x.v !== 0;
  if (x.t === 'str') return x.v.length !== 0;
  return x.t !== 'null';
}

/** `==`: strings by bytes, numbers by value, null only equals null, mixed types as numbers. */
export function equal(a: FilterValue, b: FilterValue): boolean {
  if (a.t === 'str' && b.t === 'str') return a.v === b.v;
  if (a.t === 'num' && b.t === 'num') return a.v === b.v;
  if (a.t === 'null' || b.t === 'null') return a.t === b.t;
  return toNum(a) === toNum(b);
}

/** `in`: membership when the right side is a tuple, substring when both are strings, else false. */
export function contains(a: FilterValue, b: FilterValue): boolean {
  if (b.t === 'tuple') return b.v.some((e) => equal(a, e));
  if (a.t === 'str' && b.t === 'str') return b.v.includes(a.v);
  return false;
}

/** C's pow where it differs from JS's: 1 to any power and -1 to an infinite power are 1. */
export function cPow(base: number, exp: number): number {
  if (base === 1) return 1;
  if (base === -1 && !Number.isFinite(exp) && !Number.isNaN(exp)) return 1;
  return base ** exp;
}
