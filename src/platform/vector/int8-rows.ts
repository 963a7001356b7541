// An int8 copy of a namespace's dense vectors, for COSINE: each row scaled on its own so its largest
// component is ±127 (cosine ignores a vector's scale, so nothing but rounding is lost). usearch's
// native brute force scans it four times faster than the float32 matrix (a quarter of the memory
// traffic, int8 SIMD), which then only re-scores the few candidates it returns.

/** Writes `v` into `out` at `offset`, scaled so its largest absolute component is 127. */
export function quantizeInto(out: Int8Array, offset: number, v: ArrayLike<number>): void {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]));
  const scale = max === 0 ? 0 : 127 / max;
  for (let i = 0; i < v.length; i++) out[offset + i] = Math.round(v[i] * scale);
}

/** One vector quantized alone (a query). */
export function quantized(v: ArrayLike<number>): Int8Array {
  const out = new Int8Array(v.length);
  quantizeInto(out, 0, v);
  return out;
}

/**
 * How many candidates an approximate pass brings for `k` results, re-scored exactly: on 10 000 random
 * 384-dimension vectors, 40 int8 candidates hold the exact top 10 every time (bench/README.md).
 */
export const candidatesFor = (k: number): number => Math.max(4 * k, k + 32);
