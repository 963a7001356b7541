// The native scans of COSINE namespaces read an int8 copy of the vectors, then re-score their candidates
// exactly: the answers must be exact search's (the same ids and the float32 scores of the service's formula).
import { describe, expect, it } from 'vitest';
import { candidatesFor, quantized } from '../../src/platform/vector/int8-rows.js';
import { DEFAULT_TUNING } from '../../src/platform/vector/index.js';
import { Namespace } from '../../src/platform/vector/namespace.js';
import { parseFilter } from '../../src/platform/vector/filter.js';
import { denseScore, squares } from '../../src/platform/vector/scores.js';

const D = 384;
const N = 4000;

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('int8 rows', () => {
  it('scales each vector so its largest component is ±127', () => {
    expect(Array.from(quantized([0.5, -0.25, 0.001]))).toEqual([127, -63, 0]);
    expect(Array.from(quantized([-2, 1]))).toEqual([-127, 64]);
    expect(Array.from(quantized([0, 0]))).toEqual([0, 0]);
  });

  it('asks for at least 32 more candidates than results', () => {
    expect(candidatesFor(10)).toBe(42);
    expect(candidatesFor(100)).toBe(400);
  });
});

describe('native COSINE scans on int8 rows, re-scored', () => {
  const rand = rng(7);
  const vectors = Array.from({ length: N }, () => Float32Array.from({ length: D }, () => rand() * 2 - 1));
  const ns = new Namespace('', D, 'COSINE', { ...DEFAULT_TUNING, hnswThreshold: 1_000_000 });
  vectors.forEach((v, i) => ns.put(`v${i}`, v, undefined, { even: i % 2 === 0 }, undefined));
  // a few deleted rows: free slots are scanned too and must be dropped
  for (let i = 0; i < 50; i++) ns.remove(`v${i * 7}`);

  /** Every live record scored in JavaScript, best first. */
  function bruteForce(q: Float32Array, k: number, keep: (i: number) => boolean = () => true) {
    const qn = squares(q);
    const all: { key: number; score: number }[] = [];
    vectors.forEach((v, i) => {
      const rec = ns.records.get(`v${i}`);
      if (rec && keep(i)) all.push({ key: rec.slot, score: denseScore('COSINE', q, v, 0, qn, squares(v)) });
    });
    return all.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, k);
  }

  it('returns the exact top 10 with exact scores (30 random queries)', () => {
    for (let t = 0; t < 30; t++) {
      const q = Float32Array.from({ length: D }, () => rand() * 2 - 1);
      expect(ns.searchDense(q, 10, undefined)).toEqual(bruteForce(q, 10));
    }
  });

  it('the same with a filter (rows gathered, then scanned)', () => {
    const even = parseFilter('even = true');
    for (let t = 0; t < 10; t++) {
      const q = Float32Array.from({ length: D }, () => rand() * 2 - 1);
      expect(ns.searchDense(q, 10, even)).toEqual(bruteForce(q, 10, (i) => i % 2 === 0));
    }
  });

  it('an exact match comes first', () => {
    const hit = ns.searchDense(vectors[3], 1, undefined)[0];
    expect(ns.record(hit.key)!.id).toBe('v3');
  });
});
