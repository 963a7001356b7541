// Redis 8's distance between two stored vectors (vector sets' hnsw.c), so that VSIM WITHSCORES and VLINKS
// WITHSCORES print the very numbers Redis prints: the service compares the float32 vectors as sent,
// Redis the normalized and quantized ones (int8 codes, sign bits or float32), in float32 arithmetic with
// its own order of additions. Distance is 1 - cosine in [0, 2]; VSIM's score is 1 - distance / 2.
import type { ScoredRecord } from '../../upstream/vector-client.js';
import { QUANT_KEY, quantOf } from './attributes.js';
import { dequantize, quantize, type Stored } from './quantization.js';

const f = Math.fround;

/** float32 fused multiply-add (a * b is exact in a double for float32 a and b). */
const fma = (a: number, b: number, c: number): number => f(a * b + c);

function floats(s: Stored, dim: number): Float32Array {
  return new Float32Array(s.bytes.buffer.slice(s.bytes.byteOffset, s.bytes.byteOffset + dim * 4));
}

/**
 * The float32 dot product as Redis computes it: below 16 dimensions its scalar loop (two accumulators
 * over groups of four products); from 16 on its AVX-512 loop (16 lanes of fused multiply-adds, then
 * GCC's _mm512_reduce_add_ps halving order), as Redis runs on an AVX-512 machine.
 */
function dot(x: Float32Array, y: Float32Array, dim: number): number {
  let i = 0;
  if (dim >= 16) {
    const lanes = new Array<number>(16).fill(0);
    for (; i + 15 < dim; i += 16) for (let l = 0; l < 16; l++) lanes[l] = fma(x[i + l], y[i + l], lanes[l]);
    const t3 = Array.from({ length: 8 }, (_, l) => f(lanes[l + 8] + lanes[l]));
    const t6 = Array.from({ length: 4 }, (_, k) => f(t3[k + 4] + t3[k]));
    let d = f(f(t6[0] + t6[2]) + f(t6[1] + t6[3]));
    for (; i < dim; i++) d = f(d + f(x[i] * y[i]));
    return d;
  }
  let dot0 = 0;
  let dot1 = 0;
  const four = (k: number) => f(f(f(f(x[k] * y[k]) + f(x[k + 1] * y[k + 1])) + f(x[k + 2] * y[k + 2])) + f(x[k + 3] * y[k + 3]));
  for (; i + 7 < dim; i += 8) {
    dot0 = f(dot0 + four(i));
    dot1 = f(dot1 + four(i + 4));
  }
  for (; i < dim; i++) dot0 = f(dot0 + f(x[i] * y[i]));
  return f(dot0 + dot1);
}

function q8Distance(a: Stored, b: Stored, dim: number): number {
  if (a.range === 0 || b.range === 0) return 1;
  const scale = f(f(a.range / 127) * f(b.range / 127));
  let sum = 0;
  for (let i = 0; i < dim; i++) sum += a.bytes.readInt8(i) * b.bytes.readInt8(i);
  const d = f(1 - f(sum * scale));
  return d < 0 ? 0 : d > 2 ? 2 : d;
}

function binDistance(a: Stored, b: Stored, dim: number): number {
  let opposite = 0;
  for (let i = 0; i < a.bytes.length; i++) {
    let x = a.bytes[i] ^ b.bytes[i];
    for (; x; x &= x - 1) opposite++;
  }
  return f(f(opposite * 2) / dim);
}

/** Redis' distance (float32) between two vectors stored with the same quantization. */
export function distance(a: Stored, b: Stored, dim: number): number {
  if (a.quant === 'int8') return q8Distance(a, b, dim);
  if (a.quant === 'bin') return binDistance(a, b, dim);
  return f(1 - dot(floats(a, dim), floats(b, dim), dim));
}

/** VSIM's score for a distance: 1 - d/2 in double precision (VLINKS rounds it to float32). */
export const similarity = (d: number): number => 1 - d / 2;

/**
 * The results of a query with the scores Redis gives them, best first (a stable sort, so ties keep the
 * service's order): each record's vector (the service must have sent them) stored as the set stores
 * it, against the query stored likewise. An ELE query is the element's vector as Redis holds it
 * (VEMB's), quantized again. Records without a dense vector keep the service's score.
 */
export function rescore<T extends ScoredRecord>(results: T[], query: number[], fromElement: boolean): T[] {
  // Only sets made through the side port (their elements record a quantization) are Redis' vector sets:
  // records other clients wrote keep the score of the index's own similarity function.
  const first = results.find((r) => r.vector);
  if (!first || first.metadata?.[QUANT_KEY] === undefined) return results;
  const quant = quantOf(first.metadata);
  const dim = query.length;
  const q = quantize(fromElement ? dequantize(quantize(query, quant), dim) : query, quant);
  for (const r of results) if (r.vector?.length === dim) r.score = similarity(distance(q, quantize(r.vector, quant), dim));
  return results.sort((a, b) => b.score - a.score);
}
