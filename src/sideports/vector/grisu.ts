// The digits Redis 8 prints for a double (its replies use the fpconv library: Grisu2, Florian Loitsch's
// "Printing Floating-Point Numbers Quickly and Accurately with Integers", 2010). Grisu2 is fast but not
// always shortest: for some doubles it gives 17 digits where 16 round-trip (-0.17538473010063171 where
// JavaScript prints -0.1753847301006317), so the side port computes the same digits, in 64-bit integer
// arithmetic (BigInt, wrapping as C's uint64_t does) with cached powers of ten computed here.

const MASK = (1n << 64n) - 1n;
const LO32 = 0xffffffffn;
const HIDDEN = 1n << 52n;

interface Fp {
  f: bigint;
  e: number;
}

const bitLength = (v: bigint): number => v.toString(2).length;

/** 10^k as a 64-bit mantissa with its top bit set (rounded to nearest) and a binary exponent. */
function power10(k: number): Fp {
  if (k >= 0) {
    const v = 10n ** BigInt(k);
    const len = bitLength(v);
    if (len <= 64) return { f: v << BigInt(64 - len), e: -(64 - len) };
    const shift = BigInt(len - 64);
    return { f: (v + (1n << (shift - 1n))) >> shift, e: len - 64 };
  }
  const d = 10n ** BigInt(-k);
  const s = 63 + bitLength(d);
  let f = ((1n << BigInt(s)) + d / 2n) / d;
  let e = -s;
  while (f >= 1n << 64n) [f, e] = [(f + 1n) >> 1n, e + 1];
  while (f < 1n << 63n) {
    const s2 = -e + 1;
    f = ((1n << BigInt(s2)) + d / 2n) / d;
    e = -s2;
  }
  return { f, e };
}

/** Cached powers 10^-348, 10^-340, … 10^340 (87 of them, a step of 8), as fpconv's table. */
const FIRST_POWER = -348;
const POWERS: Fp[] = Array.from({ length: 87 }, (_, i) => power10(FIRST_POWER + 8 * i));
const TENS: bigint[] = Array.from({ length: 20 }, (_, i) => 10n ** BigInt(19 - i));

function cachedPower(exp: number): { p: Fp; k: number } {
  const approx = Math.trunc(-(exp + 87) * 0.30102999566398114);
  let idx = Math.trunc((approx - FIRST_POWER) / 8);
  for (;;) {
    const current = exp + POWERS[idx].e + 64;
    if (current < -60) idx++;
    else if (current > -32) idx--;
    else return { p: POWERS[idx], k: FIRST_POWER + idx * 8 };
  }
}

function multiply(a: Fp, b: Fp): Fp {
  const [ah, al, bh, bl] = [a.f >> 32n, a.f & LO32, b.f >> 32n, b.f & LO32];
  const ahBl = ah * bl;
  const alBh = al * bh;
  const alBl = al * bl;
  const tmp = (ahBl & LO32) + (alBh & LO32) + (alBl >> 32n) + (1n << 31n);
  return { f: (ah * bh + (ahBl >> 32n) + (alBh >> 32n) + (tmp >> 32n)) & MASK, e: a.e + b.e + 64 };
}

function boundaries(w: Fp): { lower: Fp; upper: Fp } {
  const upper = { f: (w.f << 1n) + 1n, e: w.e - 1 };
  while ((upper.f & (HIDDEN << 1n)) === 0n) [upper.f, upper.e] = [upper.f << 1n, upper.e - 1];
  upper.f <<= 10n;
  upper.e -= 10;
  const l = w.f === HIDDEN ? 2 : 1;
  const lower = { f: (w.f << BigInt(l)) - 1n, e: w.e - l };
  lower.f = (lower.f << BigInt(lower.e - upper.e)) & MASK;
  lower.e = upper.e;
  return { lower, upper };
}

function roundDigit(digits: number[], delta: bigint, rem: bigint, kappa: bigint, frac: bigint): void {
  const n = digits.length;
  while (rem < frac && delta - rem >= kappa && (((rem + kappa) & MASK) < frac || frac - rem > ((rem + kappa - frac) & MASK))) {
    digits[n - 1]--;
    rem = (rem + kappa) & MASK;
  }
}

function generate(w: Fp, upper: Fp, lower: Fp, K: number): { digits: number[]; K: number } {
  const wfrac = upper.f - w.f;
  let delta = upper.f - lower.f;
  const shift = BigInt(-upper.e);
  const one = 1n << shift;
  let part1 = upper.f >> shift;
  let part2 = upper.f & (one - 1n);
  const digits: number[] = [];
  let kappa = 10;
  for (let i = 10; kappa > 0; i++) {
    const div = TENS[i];
    const digit = part1 / div;
    if (digit || digits.length) digits.push(Number(digit));
    part1 -= digit * div;
    kappa--;
    const tmp = (part1 << shift) + part2;
    if (tmp <= delta) {
      roundDigit(digits, delta, tmp, (div << shift) & MASK, wfrac);
      return { digits, K: K + kappa };
    }
  }
  for (let unit = 18; ; unit--) {
    part2 = (part2 * 10n) & MASK;
    delta = (delta * 10n) & MASK;
    kappa--;
    const digit = part2 >> shift;
    if (digit || digits.length) digits.push(Number(digit));
    part2 &= one - 1n;
    if (part2 < delta) {
      roundDigit(digits, delta, part2, one, (wfrac * TENS[unit]) & MASK);
      return { digits, K: K + kappa };
    }
  }
}

const view = new DataView(new ArrayBuffer(8));

/** Grisu2's digits of a finite non-zero |x| and K, so that |x| ≈ digits × 10^K. */
export function grisu2(x: number): { digits: string; K: number } {
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const frac = bits & (HIDDEN - 1n);
  const w: Fp = biased ? { f: frac + HIDDEN, e: biased - 1075 } : { f: frac, e: -1074 };
  const { lower, upper } = boundaries(w);
  while ((w.f & HIDDEN) === 0n) [w.f, w.e] = [w.f << 1n, w.e - 1];
  w.f <<= 11n;
  w.e -= 11;
  const { p, k } = cachedPower(upper.e);
  const wp = multiply(w, p);
  const up = multiply(upper, p);
  const lp = multiply(lower, p);
  lp.f += 1n;
  up.f -= 1n;
  const { digits, K } = generate(wp, up, lp, -k);
  return { digits: digits.join(''), K };
}
