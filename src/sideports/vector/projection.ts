// VADD … REDUCE dim: Redis 8 projects each vector of such a set to `dim` dimensions with a fixed
// ±1/√input matrix (a Hadamard sign pattern, deterministic, so only the input dimension needs keeping),
// in float32 arithmetic as vset.c does. The set's input dimension is recorded with each element
// (PROJ_KEY in its metadata), as the quantization is: VINFO reports it, VSIM projects its queries.

/** The metadata field that holds the input dimension of the set's projection (absent: none). */
export const PROJ_KEY = '__vset_proj';

const f32 = Math.fround;

/** Bits set in a 32-bit number. */
function bitCount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v; v &= v - 1) n++;
  return n;
}

/** The projection of `input` (its length is the input dimension) to `output` dimensions. */
export function project(input: number[], output: number): number[] {
  const n = input.length;
  const scale = f32(1 / Math.sqrt(n));
  const x = input.map(f32);
  const out: number[] = new Array(output);
  for (let i = 0; i < output; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) {
      // Row i, column j: +scale when i & j has an even number of bits, else -scale.
      const w = bitCount(i & j) % 2 === 0 ? scale : -scale;
      sum = f32(sum + f32(w * x[j]));
    }
    out[i] = sum;
  }
  return out;
}

/** The input dimension recorded in a record's metadata (0: the set has no projection). */
export function projectionOf(m: Record<string, unknown> | undefined): number {
  const p = m?.[PROJ_KEY];
  return typeof p === 'number' && Number.isInteger(p) && p > 0 ? p : 0;
}
