// Scores as the real service gives them (Upstash docs `similarityfunctions.mdx`, `sparseindexes.mdx`,
// `hybridindexes.mdx`; fusion and IDF constants checked against the expected scores in vector-js's tests).

export type Metric = 'COSINE' | 'EUCLIDEAN' | 'DOT_PRODUCT';
export type Fusion = 'RRF' | 'DBSF';

export interface SparseVector {
  indices: number[];
  values: number[];
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>, bOffset = 0): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[bOffset + i];
  return s;
}

export function norm(a: ArrayLike<number>, offset = 0, length = a.length): number {
  let s = 0;
  for (let i = offset; i < offset + length; i++) s += a[i] * a[i];
  return Math.sqrt(s);
}

/** Dense score in 0..1, 1 = most similar: COSINE (1+cos)/2, EUCLIDEAN 1/(1+squared distance), DOT_PRODUCT (1+dot)/2. */
export function denseScore(metric: Metric, q: Float32Array, data: Float32Array, offset: number, qNorm: number, vNorm: number): number {
  const d = q.length;
  if (metric === 'EUCLIDEAN') {
    let s = 0;
    for (let i = 0; i < d; i++) {
      const x = q[i] - data[offset + i];
      s += x * x;
    }
    return 1 / (1 + s);
  }
  const p = dot(q, data, offset);
  if (metric === 'DOT_PRODUCT') return (1 + p) / 2;
  const denom = qNorm * vNorm;
  return denom === 0 ? 0.5 : (1 + p / denom) / 2;
}

/** The service's score from a usearch distance (cos: 1-cos, ip: 1-dot, l2sq: squared distance). */
export function scoreFromDistance(metric: Metric, distance: number): number {
  if (metric === 'EUCLIDEAN') return 1 / (1 + distance);
  return (1 + (1 - distance)) / 2;
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
  for (const list of lists) list.forEach((s, rank) => out.set(s.key, (out.get(s.key) ?? 0) + 1 / (60 + rank)));
  return out;
}

/** Distribution-based score fusion: each list's scores are scaled by (s − (μ − 3σ)) / (6σ) and summed. */
export function fuseDbsf(lists: Scored[][]): Map<number, number> {
  const out = new Map<number, number>();
  for (const list of lists) {
    if (list.length === 0) continue;
    const mean = list.reduce((a, s) => a + s.score, 0) / list.length;
    const sigma = Math.sqrt(list.reduce((a, s) => a + (s.score - mean) ** 2, 0) / list.length);
    for (const s of list) {
      // One score (or all equal): nothing to spread; the middle of the range.
      const scaled = sigma === 0 ? 0.5 : (s.score - (mean - 3 * sigma)) / (6 * sigma);
      out.set(s.key, (out.get(s.key) ?? 0) + scaled);
    }
  }
  return out;
}

/** The shortest decimal that reads back as the same float32, like the service's JSON (0.1f → 0.1). */
export function f32(x: number): number {
  const f = Math.fround(x);
  if (!Number.isFinite(f) || f === 0) return f;
  for (let p = 6; p < 10; p++) {
    const n = Number(f.toPrecision(p));
    if (Math.fround(n) === f) {
      if (p > 6) return n;
      // try fewer digits too (0.5, 0.1)
      for (let q = 1; q < 6; q++) {
        const m = Number(f.toPrecision(q));
        if (Math.fround(m) === f) return m;
      }
      return n;
    }
  }
  return f;
}
