// Scores as the real service gives them (Upstash docs `similarityfunctions.mdx`, `sparseindexes.mdx`,
// `hybridindexes.mdx`; fusion and IDF constants checked against the expected scores in vector-js's tests).

import type { Metric } from '../../config.js';

export type { Metric };
export type Fusion = 'RRF' | 'DBSF';

export interface SparseVector {
  indices: number[];
  values: number[];
}

const F = Math.fround;

/** Sum of squares with float32 products and sums, as the service computes (COSINE's denominators). */
export function squares(a: ArrayLike<number>, offset = 0, length = a.length): number {
  let s = 0;
  for (let i = offset; i < offset + length; i++) s = F(s + F(a[i] * a[i]));
  return s;
}

/**
 * Dense score in 0..1, 1 = most similar: COSINE (1+cos)/2, EUCLIDEAN 1/(1+squared distance), DOT_PRODUCT
 * (1+dot)/2. Every step in float32 like the service's: vector-js's expected DBSF score 0.617851 comes out
 * only so (small differences between near scores are magnified by the fusion). COSINE divides by
 * sqrt(|q|² · |v|²) taken in float64 from the float32 sums, so a vector scores exactly 1 against itself
 * as with the service (the float32 norms' rounding made it 0.99999994).
 */
export function denseScore(
  metric: Metric,
  q: Float32Array,
  data: Float32Array,
  offset: number,
  qSquares: number,
  vSquares: number,
): number {
  const d = q.length;
  let s = 0;
  if (metric === 'EUCLIDEAN') {
    for (let i = 0; i < d; i++) {
      const x = F(q[i] - data[offset + i]);
      s = F(s + F(x * x));
    }
    return F(1 / F(1 + s));
  }
  for (let i = 0; i < d; i++) s = F(s + F(q[i] * data[offset + i]));
  if (metric === 'DOT_PRODUCT') return F(F(1 + s) / 2);
  const denom = Math.sqrt(qSquares * vSquares);
  return denom === 0 ? 0.5 : F(F(1 + F(s / denom)) / 2);
}

/** BM25-style inverse document frequency, ln(1 + (N − n + 0.5)/(n + 0.5)), that scales the query's weights. */
export function idf(totalDocs: number, docsWithTerm: number): number {
  return Math.log(1 + (totalDocs - docsWithTerm + 0.5) / (docsWithTerm + 0.5));
}

export interface Scored {
  key: number;
  score: number;
}

/** Reciprocal rank fusion, k = 60, ranks from 0: each list adds 1/(60 + rank). Lists are sorted best first. */
export function fuseRrf(lists: Scored[][]): Map<number, number> {
  const out = new Map<number, number>();
  for (const list of lists) list.forEach((s, rank) => out.set(s.key, F((out.get(s.key) ?? 0) + F(1 / (60 + rank)))));
  return out;
}

/**
 * Distribution-based score fusion: each list's scores are scaled by (s − (μ − 3σ)) / ((μ + 3σ) − (μ − 3σ)),
 * σ the sample standard deviation (n − 1), and summed; float32 steps. A list of one score, or of equal ones,
 * gives 0.5. Sample σ and float32 reproduce vector-js's expected hybrid DBSF scores (0.617851, 0.5, 0.5).
 */
export function fuseDbsf(lists: Scored[][]): Map<number, number> {
  const out = new Map<number, number>();
  for (const list of lists) {
    if (list.length === 0) continue;
    let sum = 0;
    for (const s of list) sum = F(sum + s.score);
    const mean = F(sum / list.length);
    let squares = 0;
    for (const s of list) squares = F(squares + F(F(s.score - mean) * F(s.score - mean)));
    const sigma = list.length > 1 ? F(Math.sqrt(F(squares / (list.length - 1)))) : 0;
    const lo = F(mean - F(3 * sigma));
    const hi = F(mean + F(3 * sigma));
    for (const s of list) {
      const scaled = sigma === 0 ? 0.5 : F(F(s.score - lo) / F(hi - lo));
      out.set(s.key, F((out.get(s.key) ?? 0) + scaled));
    }
  }
  return out;
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i); // exact doubles up to 1e22

/**
 * The shortest decimal that reads back as the same float32, like the service's JSON (0.1f → 0.1).
 * Rounding to p significant digits by arithmetic (m / 10^k is correctly rounded, so it equals the decimal
 * m·10^-k) instead of toPrecision, which is ten times slower on a 384-value vector.
 */
export function f32(x: number): number {
  const f = Math.fround(x);
  if (!Number.isFinite(f) || f === 0) return f;
  const e = Math.floor(Math.log10(Math.abs(f)));
  for (let p = 1; p <= 9; p++) {
    const k = p - 1 - e;
    const n =
      k >= 0 && k <= 22
        ? Math.round(f * POW10[k]) / POW10[k]
        : k < 0 && k >= -22
          ? Math.round(f / POW10[-k]) * POW10[-k]
          : Number(f.toPrecision(p));
    if (Math.fround(n) === f) return n;
  }
  return f;
}
