// Details where the vector area answers as the service does (issue 24): an exact COSINE match scores 1,
// repeated sparse indices, the sparse size limit, range order, rename-namespace, hybrid updates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform({
    vectorIndexes: [
      { name: 'dense', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE' },
      { name: 'wide', type: 'DENSE', dimension: 384, similarityFunction: 'COSINE' },
      { name: 'sparse', type: 'SPARSE' },
      { name: 'hybrid', type: 'HYBRID', dimension: 2, similarityFunction: 'COSINE' },
    ],
  });
});
afterAll(async () => {
  await p?.stop();
});

/** One vector API call; resolves with the status and the parsed answer. */
async function call(path: string, body: unknown): Promise<{ status: number; result: any; error?: string }> {
  const r = await kv(p, `/vector${path}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, result: r.json.result, error: r.json.error };
}

describe('COSINE: an exact match scores 1', () => {
  it('in a small namespace (scored in JavaScript)', async () => {
    await call('/dense/upsert/exact', [{ id: 'a', vector: [0.1, 0.2, 0.3] }]);
    const { result } = await call('/dense/query/exact', { vector: [0.1, 0.2, 0.3], topK: 1 });
    expect(result).toEqual([{ id: 'a', score: 1 }]);
  });

  it('in a namespace of 1 000 vectors and more (native scan, re-scored)', async () => {
    let seed = 3;
    const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
    const records = Array.from({ length: 1200 }, (_, i) => ({ id: `v${i}`, vector: Array.from({ length: 384 }, rand) }));
    expect((await call('/wide/upsert/big', records)).status).toBe(200);
    for (const i of [0, 77, 1199]) {
      const { result } = await call('/wide/query/big', { vector: records[i].vector, topK: 2 });
      expect(result[0]).toEqual({ id: `v${i}`, score: 1 });
      expect(result[1].score).toBeLessThan(1);
    }
  });
});

describe('sparse vectors', () => {
  it('repeated indices are merged, their values summed', async () => {
    const up = await call('/sparse/upsert/rep', [{ id: 'r', sparseVector: { indices: [5, 3, 5], values: [0.5, 1, 0.25] } }]);
    expect(up.status).toBe(200);
    const { result } = await call('/sparse/fetch/rep', { ids: ['r'], includeVectors: true });
    expect(result[0].sparseVector).toEqual({ indices: [3, 5], values: [1, 0.75] });
    const q = await call('/sparse/query/rep', { sparseVector: { indices: [5, 5], values: [1, 1] }, topK: 1 });
    expect(q.result).toEqual([{ id: 'r', score: 1.5 }]);
  });

  it('more than 1 000 entries are refused (upsert, update, query); 1 000 pass', async () => {
    const sv = (n: number) => ({ indices: Array.from({ length: n }, (_, i) => i), values: Array(n).fill(0.5) });
    expect((await call('/sparse/upsert/big', [{ id: 'ok', sparseVector: sv(1000) }])).status).toBe(200);
    const refusal = /^Sparse vector has 1001 non-zero entries, more than the limit of 1000$/;
    const up = await call('/sparse/upsert/big', [{ id: 'no', sparseVector: sv(1001) }]);
    expect(up.status).toBe(422);
    expect(up.error).toMatch(refusal);
    const update = await call('/sparse/update/big', { id: 'ok', sparseVector: sv(1001) });
    expect(update.status).toBe(422);
    expect(update.error).toMatch(refusal);
    const q = await call('/sparse/query/big', { sparseVector: sv(1001), topK: 1 });
    expect(q.status).toBe(422);
    expect(q.error).toMatch(refusal);
  });
});

describe('range', () => {
  it('returns ids in the order they were first upserted (vector-js: id-0 … id-3 first of id-0 … id-19)', async () => {
    const records = Array.from({ length: 20 }, (_, i) => ({ id: `id-${i}`, vector: [1, i, 0] }));
    await call('/dense/upsert/order', records);
    await call('/dense/upsert/order', [{ id: 'id-2', vector: [0, 0, 1] }]); // an update keeps its place
    const first = await call('/dense/range/order', { cursor: '', limit: 4 });
    expect(first.result.vectors.map((v: { id: string }) => v.id)).toEqual(['id-0', 'id-1', 'id-2', 'id-3']);
    expect(first.result.nextCursor).toBe('4');
    const ids: string[] = [];
    let cursor = '0';
    do {
      const page = await call('/dense/range/order', { cursor, limit: 8 });
      ids.push(...page.result.vectors.map((v: { id: string }) => v.id));
      cursor = page.result.nextCursor;
    } while (cursor !== '');
    expect(ids).toEqual(records.map((r) => r.id));
    const prefixed = await call('/dense/range/order', { cursor: '0', limit: 5, prefix: 'id-1' });
    expect(prefixed.result.vectors.map((v: { id: string }) => v.id)).toEqual(['id-1', 'id-10', 'id-11', 'id-12', 'id-13']);
  });

  it('a deleted id leaves the order, an upsert after it goes last', async () => {
    await call(
      '/dense/upsert/order2',
      ['a', 'b', 'c'].map((id) => ({ id, vector: [1, 1, 1] })),
    );
    await call('/dense/delete/order2', { ids: ['a'] });
    await call('/dense/upsert/order2', [{ id: 'a', vector: [1, 1, 1] }]);
    const { result } = await call('/dense/range/order2', { cursor: '0', limit: 10 });
    expect(result.vectors.map((v: { id: string }) => v.id)).toEqual(['b', 'c', 'a']);
  });
});

describe('rename-namespace', () => {
  it('renames a namespace with its vectors', async () => {
    await call('/dense/upsert/old', [{ id: 'x', vector: [1, 0, 0] }]);
    const r = await call('/dense/rename-namespace', { namespace: 'old', newNamespace: 'new' });
    expect(r).toEqual({ status: 200, result: { renamed: true }, error: undefined });
    const names = (await call('/dense/list-namespaces', {})).result;
    expect(names).toContain('new');
    expect(names).not.toContain('old');
    expect((await call('/dense/fetch/new', { ids: ['x'] })).result).toEqual([{ id: 'x' }]);
    expect((await call('/dense/query/new', { vector: [1, 0, 0], topK: 1 })).result).toEqual([{ id: 'x', score: 1 }]);
  });

  it('refuses the default namespace, a missing one, and an existing target unless deleteExisting', async () => {
    await call('/dense/upsert/src', [{ id: 's', vector: [1, 0, 0] }]);
    await call('/dense/upsert/dst', [{ id: 'd', vector: [0, 1, 0] }]);
    const def = await call('/dense/rename-namespace', { namespace: '', newNamespace: 'x2' });
    expect(def.status).toBe(400);
    expect(def.error).toBe('The default namespace cannot be renamed');
    const missing = await call('/dense/rename-namespace', { namespace: 'nope', newNamespace: 'x3' });
    expect(missing.status).toBe(404);
    expect(missing.error).toBe('Namespace nope for the index dense does not exist');
    const taken = await call('/dense/rename-namespace', { namespace: 'src', newNamespace: 'dst' });
    expect(taken.status).toBe(400);
    expect(taken.error).toBe('Namespace dst already exists; pass deleteExisting to replace it');
    const noTarget = await call('/dense/rename-namespace', { namespace: 'src' });
    expect(noTarget.status).toBe(422);
    expect(noTarget.error).toBe('Failed to deserialize the JSON body into the target type: missing field `newNamespace`');
    const replaced = await call('/dense/rename-namespace', { namespace: 'src', newNamespace: 'dst', deleteExisting: true });
    expect(replaced.result).toEqual({ renamed: true });
    expect((await call('/dense/fetch/dst', { ids: ['s', 'd'] })).result).toEqual([{ id: 's' }, null]);
  });
});

describe('HYBRID update', () => {
  it('refuses only a dense or only a sparse vector, in the service words; both pass', async () => {
    await call('/hybrid/upsert', [{ id: 'h', vector: [1, 0], sparseVector: { indices: [1], values: [1] } }]);
    const text = 'For hybrid indexes either none or both of vector and sparseVector fields must be present';
    const dense = await call('/hybrid/update', { id: 'h', vector: [0, 1] });
    expect(dense.status).toBe(422);
    expect(dense.error).toBe(text);
    const sparse = await call('/hybrid/update', { id: 'h', sparseVector: { indices: [2], values: [1] } });
    expect(sparse.status).toBe(422);
    expect(sparse.error).toBe(text);
    expect((await call('/hybrid/update', { id: 'h', vector: [0, 1], sparseVector: { indices: [2], values: [1] } })).result).toEqual({
      updated: 1,
    });
    expect((await call('/hybrid/update', { id: 'h', metadata: { a: 1 } })).result).toEqual({ updated: 1 });
  });
});

describe('/info while an upsert is still arriving', () => {
  it('counts the upsert as pending until it is applied (the SDK polls /info right after an upsert it did not await)', async () => {
    const { default: http } = await import('node:http');
    const url = new URL(`${p.url}/vector/dense/upsert/arriving`);
    const body = JSON.stringify([{ id: 'late', vector: [1, 2, 3] }]);
    const answered = new Promise<number>((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', headers: { Authorization: `Bearer ${p.token}`, 'Content-Length': String(body.length) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      // Half the body now, the rest after /info was read.
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 400);
    });
    await new Promise((r) => setTimeout(r, 150));
    const during = await call('/dense/info', {});
    expect(during.result.pendingVectorCount).toBeGreaterThanOrEqual(1);
    expect(during.result.namespaces.arriving?.pendingVectorCount ?? 1).toBeGreaterThanOrEqual(1);
    expect(await answered).toBe(200);
    const after = await call('/dense/info', {});
    expect(after.result.namespaces.arriving).toEqual({ vectorCount: 1, pendingVectorCount: 0 });
  });
});
