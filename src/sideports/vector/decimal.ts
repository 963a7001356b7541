// Reading a decimal number straight from a request argument's bytes, without making a string of it:
// a `VSIM … VALUES 384 …` carries 384 of them, and a string plus a regular-expression test per value
// was most of the garbage a VSIM made (bench/README.md, "Vector side port vs REST vs Redis 8").
//
// Exactness: a value of at most 15 significant digits is an integer m < 2^53, and 10^k is exact for
// k <= 22, so m / 10^k (or m * 10^k) is one correctly rounded IEEE operation: the same double as
// Number(text) (Clinger's fast path, as strtod and V8 take it). Anything else (more digits, larger
// exponents, spaces, hexadecimal, inf/nan) returns undefined, and the caller parses the text itself.

const MAX_DIGITS = 15;
const MAX_POW10 = 22;
const POW10: number[] = Array.from({ length: MAX_POW10 + 1 }, (_, k) => 10 ** k);

const PLUS = 0x2b;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const E_LOWER = 0x65;
const E_UPPER = 0x45;

/** `[+-]digits[.digits][(e|E)[+-]digits]` with at least one digit before the exponent, else undefined. */
export function fastDecimal(b: Uint8Array): number | undefined {
  const end = b.length;
  let i = 0;
  let negative = false;
  if (i < end && (b[i] === PLUS || b[i] === MINUS)) negative = b[i++] === MINUS;
  let mantissa = 0;
  let digits = 0; // significant digits taken into the mantissa (leading zeros skipped)
  let seen = 0; // digits of any kind before the exponent
  let scale = 0; // power of ten the mantissa is to be multiplied by
  for (; i < end && b[i] >= ZERO && b[i] <= NINE; i++, seen++) {
    if (mantissa === 0 && b[i] === ZERO) continue;
    if (++digits > MAX_DIGITS) return undefined;
    mantissa = mantissa * 10 + (b[i] - ZERO);
  }
  if (i < end && b[i] === DOT) {
    for (i++; i < end && b[i] >= ZERO && b[i] <= NINE; i++, seen++) {
      scale--;
      if (mantissa === 0 && b[i] === ZERO) continue;
      if (++digits > MAX_DIGITS) return undefined;
      mantissa = mantissa * 10 + (b[i] - ZERO);
    }
  }
  if (seen === 0) return undefined;
  if (i < end && (b[i] === E_LOWER || b[i] === E_UPPER)) {
    i++;
    let expNegative = false;
    if (i < end && (b[i] === PLUS || b[i] === MINUS)) expNegative = b[i++] === MINUS;
    const from = i;
    let exp = 0;
    for (; i < end && b[i] >= ZERO && b[i] <= NINE; i++) {
      exp = exp * 10 + (b[i] - ZERO);
      if (exp > 1000) return undefined;
    }
    if (i === from) return undefined;
    scale += expNegative ? -exp : exp;
  }
  if (i !== end) return undefined;
  let value: number;
  if (mantissa === 0) value = 0;
  else if (scale === 0) value = mantissa;
  else if (scale < 0 && scale >= -MAX_POW10) value = mantissa / POW10[-scale];
  else if (scale > 0 && scale <= MAX_POW10) value = mantissa * POW10[scale];
  else return undefined;
  return negative ? -value : value;
}
