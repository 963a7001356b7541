// Scores of each metric and each fusion against values computed by hand (docs similarityfunctions.mdx,
// hybridindexes.mdx), through the REST API of the local platform.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import fc from 'fast-check';
import { f32, fuseDbsf, fuseRrf } from '../../src/platform/vector/scores.js';
import { kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform({
    vectorIndexes: [
      { name: 'cos', type: 'DENSE', dimension: 2, similarityFunction: 'COSINE' },
      { name: 'l2', type: 'DENSE', dimension: 2, similarityFunction: 'EUCLIDEAN' },
      { name: 'dot', type: 'DENSE', dimension: 2, similarityFunction: 'DOT_PRODUCT' },
      { name: 'hyb', type: 'HYBRID', dimension: 2, similarityFunction: 'DOT_PRODUCT' },
    ],
  });
  for (const name of ['cos', 'l2', 'dot']) {
    await call(name, 'upsert', [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0.6, 0.8] },
      { id: 'c', vector: [-1, 0] },
    ]);
  }
});
afterAll(async () => {
  await p?.stop();
});

async function call(index: string, op: string, body: unknown): Promise<any> {
  const r = await kv(p, `/vector/${index}/${op}`, { method: 'POST', body: JSON.stringify(body) });
  expect(r.status, r.text).toBe(200);
  return r.json.result;
}

const scores = async (index: string, body: unknown) =>
  Object.fromEntries((await call(index, 'query', body)).map((r: { id: string; score: number }) => [r.id, r.score]));

describe('dense metrics, normalised to 0..1', () => {
  it('COSINE: (1 + cos) / 2', async () => {
    // query [2, 0]: cos with a = 1, with b = 0.6, with c = -1
    const s = await scores('cos', { vector: [2, 0], topK: 3 });
    expect(s).toEqual({ a: 1, b: 0.8, c: 0 });
  });
  it('EUCLIDEAN: 1 / (1 + squared distance)', async () => {
    // query [1, 0]: squared distances 0, 0.16 + 0.64 = 0.8, 4
    const s = await scores('l2', { vector: [1, 0], topK: 3 });
    expect(s.a).toBe(1);
    expect(s.b).toBeCloseTo(1 / 1.8, 6);
    expect(s.c).toBeCloseTo(0.2, 6);
  });
  it('DOT_PRODUCT: (1 + dot) / 2', async () => {
    // query [0.5, 0.5]: dots 0.5, 0.7, -0.5
    const s = await scores('dot', { vector: [0.5, 0.5], topK: 3 });
    expect(s.a).toBeCloseTo(0.75, 6);
    expect(s.b).toBeCloseTo(0.85, 6);
    expect(s.c).toBeCloseTo(0.25, 6);
  });
});

describe('fusion of dense and sparse lists', () => {
  it('RRF: sum of 1 / (60 + rank), ranks from 0 (float32)', () => {
    const fused = fuseRrf([
      [
        { key: 1, score: 0.9 },
        { key: 2, score: 0.5 },
      ],
      [
        { key: 2, score: 3 },
        { key: 3, score: 1 },
      ],
    ]);
    expect(fused.get(1)).toBeCloseTo(1 / 60, 7);
    expect(fused.get(2)).toBeCloseTo(1 / 61 + 1 / 60, 7);
    expect(fused.get(3)).toBeCloseTo(1 / 61, 7);
  });
  it('DBSF: (s − (μ − 3σ)) / 6σ per list with the sample σ, summed; a single score gives 0.5', () => {
    // list 1: scores 3, 2, 1 → μ 2, sample σ 1 → (s + 1) / 6; list 2: a single score → 0.5
    const fused = fuseDbsf([
      [
        { key: 1, score: 3 },
        { key: 2, score: 2 },
        { key: 3, score: 1 },
      ],
      [{ key: 2, score: 7 }],
    ]);
    expect(fused.get(1)).toBeCloseTo(4 / 6, 6);
    expect(fused.get(2)).toBeCloseTo(3 / 6 + 0.5, 6);
    expect(fused.get(3)).toBeCloseTo(2 / 6, 6);
  });
  it('a hybrid index fuses its dense and sparse results over REST', async () => {
    await call('hyb', 'upsert', [
      { id: 'x', vector: [1, 0], sparseVector: { indices: [1], values: [1] } },
      { id: 'y', vector: [0, 1], sparseVector: { indices: [1, 2], values: [2, 1] } },
      { id: 'z', vector: [0.6, 0.8], sparseVector: { indices: [3], values: [1] } },
    ]);
    // dense [1, 0]: x 1, z 0.8, y 0.5 (ranks 0, 1, 2); sparse {1: 1}: y 2, x 1 (ranks 0, 1)
    const rrf = await scores('hyb', { vector: [1, 0], sparseVector: { indices: [1], values: [1] }, topK: 3 });
    expect(rrf.x).toBeCloseTo(1 / 60 + 1 / 61, 6);
    expect(rrf.y).toBeCloseTo(1 / 62 + 1 / 60, 6);
    expect(rrf.z).toBeCloseTo(1 / 61, 6);
    const dbsf = await scores('hyb', { vector: [1, 0], sparseVector: { indices: [1], values: [1] }, topK: 3, fusionAlgorithm: 'DBSF' });
    const scale = (list: number[]) => {
      const mu = list.reduce((a, s) => a + s, 0) / list.length;
      const sd = Math.sqrt(list.reduce((a, s) => a + (s - mu) ** 2, 0) / (list.length - 1));
      return (s: number) => (s - (mu - 3 * sd)) / (6 * sd);
    };
    const dense = scale([1, 0.8, 0.5]);
    const sparse = scale([2, 1]); // μ 1.5, sample σ √0.5
    expect(dbsf.x).toBeCloseTo(dense(1) + sparse(1), 5);
    expect(dbsf.y).toBeCloseTo(dense(0.5) + sparse(2), 5);
    expect(dbsf.z).toBeCloseTo(dense(0.8), 5);
    // a dense-only query of a hybrid index is scored by the dense side alone
    expect(await scores('hyb', { vector: [1, 0], topK: 1 })).toEqual({ x: 1 });
  });
});

describe('float32 output', () => {
  it('values are the shortest decimal of their float32, as the service prints them', () => {
    expect([0.1, 0.2, 0.028608438, 1 / 3, 0.1 + 0.2, 1e-30, -2.5].map(f32)).toEqual([0.1, 0.2, 0.028608438, 0.33333334, 0.3, 1e-30, -2.5]);
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const out = f32(x);
        expect(Math.fround(out)).toBe(Math.fround(x)); // reads back as the same float32
        let shortest = 9;
        for (let p = 1; p <= 9; p++)
          if (Math.fround(Number(Math.fround(x).toPrecision(p))) === Math.fround(x)) {
            shortest = p;
            break;
          }
        expect(out === 0 ? 1 : Number(out).toExponential().split('e')[0].replace(/[-.]/g, '').length).toBeLessThanOrEqual(shortest);
      }),
      { numRuns: 2000 },
    );
  });
});
