// The HNSW path against exact search: recall@10 on 20 000 random vectors (32 dimensions to stay fast),
// with and without a filter, and exactness for vectors not yet in the graph.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseFilter } from '../../src/platform/vector/filter.js';
import { DEFAULT_TUNING } from '../../src/platform/vector/index.js';
import { Namespace } from '../../src/platform/vector/namespace.js';
import type { Metric } from '../../src/platform/vector/scores.js';

const N = 20_000;
const D = 32;

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function build(metric: Metric, seed: number): Namespace {
  const rand = rng(seed);
  const ns = new Namespace('', D, metric, { ...DEFAULT_TUNING, hnswThreshold: 1000 });
  for (let i = 0; i < N; i++) {
    const v = Float32Array.from({ length: D }, () => rand() * 2 - 1);
    // DOT_PRODUCT expects unit vectors, as the service documents
    if (metric === 'DOT_PRODUCT') unit(v);
    ns.put(`v${i}`, v, undefined, { bucket: i % 10 }, undefined);
  }
  return ns;
}

function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v);
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

function recallAt10(ns: Namespace, seed: number, filter?: string): number {
  const rand = rng(seed);
  const predicate = filter ? parseFilter(filter) : undefined;
  let hits = 0;
  const queries = 50;
  for (let q = 0; q < queries; q++) {
    const v = Float32Array.from({ length: D }, () => rand() * 2 - 1); // drawn like the records
    if (ns.metric === 'DOT_PRODUCT') unit(v);
    const approx = new Set(ns.searchDense(v, 10, predicate).map((s) => s.key));
    const exact = ns.exactDense(v, 10, predicate, undefined);
    expect(exact).toHaveLength(10);
    hits += exact.filter((s) => approx.has(s.key)).length;
  }
  return hits / (queries * 10);
}

describe('HNSW search', () => {
  let cos: Namespace;
  beforeAll(async () => {
    cos = build('COSINE', 1);
    expect(cos.usesGraph).toBe(true);
    await cos.indexed();
    expect(cos.pendingCount).toBe(0);
  }, 60_000);

  it('COSINE recall@10 ≥ 0.95 against exact search', () => {
    expect(recallAt10(cos, 100)).toBeGreaterThanOrEqual(0.95);
  });

  it('with a filter (10 % of the records pass) recall@10 ≥ 0.95, every result passing the filter', () => {
    expect(recallAt10(cos, 200, 'bucket = 3')).toBeGreaterThanOrEqual(0.95);
    const hits = cos.searchDense(new Float32Array(D).fill(0.1), 10, parseFilter('bucket = 3'));
    expect(hits.every((h) => cos.record(h.key)!.metadata!.bucket === 3)).toBe(true);
  });

  it('a very selective filter falls back to exact search and still finds every match', () => {
    const hits = cos.searchDense(
      new Float32Array(D).fill(0.1),
      10,
      parseFilter('bucket = 3 AND HAS FIELD nothing OR bucket = 7 AND bucket != 7'),
    );
    expect(hits).toEqual([]);
    const one = cos.searchDense(new Float32Array(D).fill(0.1), 10, parseFilter('bucket = 4'));
    expect(one).toHaveLength(10);
  });

  it('vectors not yet in the graph are found exactly; deleted ones disappear', async () => {
    const v = new Float32Array(D).fill(0.5);
    cos.put('fresh', v, undefined, undefined, undefined);
    expect(cos.pendingCount).toBe(1);
    const [top] = cos.searchDense(v, 1, undefined);
    expect(cos.record(top.key)!.id).toBe('fresh');
    await cos.indexed();
    expect(cos.record(cos.searchDense(v, 1, undefined)[0].key)!.id).toBe('fresh');
    cos.remove('fresh');
    expect(cos.searchDense(v, 5, undefined).map((s) => cos.record(s.key)!.id)).not.toContain('fresh');
  });

  it('while thousands of vectors wait for the graph, queries still find them (native scan of the pending ones)', () => {
    const ns = new Namespace('', D, 'COSINE', { ...DEFAULT_TUNING, hnswThreshold: 100 });
    const rand = rng(11);
    for (let i = 0; i < 3000; i++)
      ns.put(
        `p${i}`,
        Float32Array.from({ length: D }, () => rand() - 0.5),
        undefined,
        { i },
        undefined,
      );
    expect(ns.pendingCount).toBeGreaterThan(2000); // nothing has run the event loop yet
    const target = ns.dense(ns.records.get('p2999')!)!;
    const [best] = ns.searchDense(target, 1, undefined);
    expect(ns.record(best.key)!.id).toBe('p2999');
    expect(best.score).toBeCloseTo(1, 5);
    const [filtered] = ns.searchDense(target, 1, parseFilter('i < 2999'));
    expect(ns.record(filtered.key)!.id).not.toBe('p2999');
    ns.close();
  });

  it('a reset drops the graph; the namespace grows a new one past the threshold', async () => {
    const ns = new Namespace('', D, 'COSINE', { ...DEFAULT_TUNING, hnswThreshold: 100 });
    const rand = rng(5);
    const fill = (n: number) => {
      for (let i = 0; i < n; i++)
        ns.put(
          `r${i}`,
          Float32Array.from({ length: D }, () => rand() - 0.5),
          undefined,
          undefined,
          undefined,
        );
    };
    fill(150);
    expect(ns.usesGraph).toBe(true);
    ns.clear();
    expect([ns.size, ns.usesGraph, ns.pendingCount]).toEqual([0, false, 0]);
    expect(ns.searchDense(new Float32Array(D).fill(0.1), 3, undefined)).toEqual([]);
    fill(150);
    await ns.indexed();
    expect([ns.size, ns.usesGraph, ns.pendingCount]).toEqual([150, true, 0]);
    expect(ns.searchDense(new Float32Array(D).fill(0.1), 3, undefined)).toHaveLength(3);
  });

  it.each(['EUCLIDEAN', 'DOT_PRODUCT'] as const)(
    '%s recall@10 ≥ 0.95 and the same scores as exact search',
    async (metric) => {
      const ns = build(metric, 7);
      await ns.indexed();
      expect(recallAt10(ns, 300)).toBeGreaterThanOrEqual(0.95);
      const q = new Float32Array(D).fill(0.2);
      const [a] = ns.searchDense(q, 1, undefined);
      const [e] = ns.exactDense(q, 1, undefined, undefined);
      expect(a.key).toBe(e.key);
      expect(a.score).toBeCloseTo(e.score, 4);
    },
    60_000,
  );
});
