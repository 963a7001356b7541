// The official @upstash/vector SDK, unchanged, against the local platform's vector area: every index kind.
import { Index } from '@upstash/vector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { DEFAULT_INDEXES } from '../../src/platform/vector/config.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
const index = (name: string, token?: string) => new Index({ url: `${p.url}/vector/${name}`, token: token ?? p.token, retry: false });
const randomVector = (d: number) => Array.from({ length: d }, () => Math.random() - 0.5);

beforeAll(async () => {
  p = await startTestPlatform({
    vectorIndexes: [...DEFAULT_INDEXES, { name: 'hybrid-2d', type: 'HYBRID', dimension: 2, similarityFunction: 'COSINE' }],
  });
});
afterAll(async () => {
  await p?.stop();
});

describe('@upstash/vector on a dense index', () => {
  it('upsert, query by vector with scores in 0..1, include flags', async () => {
    const ix = index('dense');
    const v = randomVector(384);
    expect(
      await ix.upsert([
        { id: 'a', vector: v, metadata: { genre: 'sci-fi', year: 1999 } },
        { id: 1, vector: randomVector(384) },
      ]),
    ).toBe('Success');
    const [best] = await ix.query({ vector: v, topK: 1, includeVectors: true, includeMetadata: true });
    expect(best.id).toBe('a');
    expect(best.score).toBeCloseTo(1, 5);
    expect(best.metadata).toEqual({ genre: 'sci-fi', year: 1999 });
    expect(best.vector).toHaveLength(384);
    const all = await ix.query({ vector: v, topK: 5 });
    expect(all.map((r) => r.id).sort()).toEqual(['1', 'a']);
    expect(all.every((r) => r.score >= 0 && r.score <= 1 && r.vector === undefined && r.metadata === undefined)).toBe(true);
  });

  it('query with a filter, and queryMany', async () => {
    const ix = index('dense').namespace('filtered');
    await ix.upsert(
      Array.from({ length: 30 }, (_, i) => ({
        id: `f${i}`,
        vector: randomVector(384),
        metadata: { n: i, tags: i % 2 ? ['odd'] : ['even'] },
      })),
    );
    const odd = await ix.query({ vector: randomVector(384), topK: 100, filter: "n >= 10 AND tags CONTAINS 'odd'", includeMetadata: true });
    expect(odd.map((r) => r.id).sort()).toEqual(['f11', 'f13', 'f15', 'f17', 'f19', 'f21', 'f23', 'f25', 'f27', 'f29']);
    const many = await index('dense').queryMany(
      [
        { vector: randomVector(384), topK: 2 },
        { vector: randomVector(384), topK: 3, filter: 'n < 2' },
      ],
      { namespace: 'filtered' },
    );
    expect(many.map((r) => r.length)).toEqual([2, 2]);
  });

  it('fetch by ids and by prefix, range through all pages', async () => {
    const ix = index('dense').namespace('paging');
    await ix.upsert(
      Array.from({ length: 23 }, (_, i) => ({ id: `p-${String(i).padStart(2, '0')}`, vector: randomVector(384), metadata: { i } })),
    );
    await ix.upsert({ id: 'other', vector: randomVector(384) });
    const fetched = await ix.fetch(['p-03', 'missing', 'other'], { includeMetadata: true });
    expect(fetched.map((r) => r?.id ?? null)).toEqual(['p-03', null, 'other']);
    expect(fetched[0]?.metadata).toEqual({ i: 3 });
    const byPrefix = await ix.fetch({ prefix: 'p-1' });
    expect(byPrefix.map((r) => r?.id)).toEqual(Array.from({ length: 10 }, (_, i) => `p-1${i}`));
    const seen: string[] = [];
    let cursor: string | number = 0;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof ix.range>> = await ix.range({ cursor, limit: 5, prefix: 'p-', includeVectors: true });
      seen.push(...page.vectors.map((v) => v.id as string));
      expect(page.vectors.every((v) => v.vector?.length === 384)).toBe(true);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== '');
    expect(pages).toBe(5);
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => `p-${String(i).padStart(2, '0')}`));
    expect((await ix.range({ cursor: 0, limit: 5 })).nextCursor).toBe('5');
  });

  it('delete by ids, by prefix and by filter; the SDK refuses two selectors with the service text', async () => {
    const ix = index('dense').namespace('deleting');
    await ix.upsert(Array.from({ length: 10 }, (_, i) => ({ id: `d${i}`, vector: randomVector(384), metadata: { i } })));
    expect(await ix.delete(['d0', 'd1', 'nope'])).toEqual({ deleted: 2 });
    expect(await ix.delete('d2')).toEqual({ deleted: 1 });
    expect(await ix.delete({ prefix: 'd3' })).toEqual({ deleted: 1 });
    expect(await ix.delete({ filter: 'i >= 8' })).toEqual({ deleted: 2 });
    expect((await index('dense').info()).namespaces.deleting.vectorCount).toBe(4);
    await expect(ix.delete({ ids: ['d4'], prefix: 'd' } as never)).rejects.toThrow(
      'Only and only one of the ids, prefix, or filter must be provided.',
    );
    await expect(ix.fetch({ ids: ['d4'], prefix: 'd' } as never)).rejects.toThrow('Only one of ids or prefix must be provided.');
  });

  it('update: vector, metadata OVERWRITE and PATCH, data; a missing id updates nothing', async () => {
    const ix = index('dense').namespace('updating');
    await ix.upsert({ id: 'u', vector: randomVector(384), metadata: { a: 1, b: { c: 2, d: 3 } } });
    expect(await ix.update({ id: 'u', metadata: { b: { c: null, e: 4 }, f: 5 }, metadataUpdateMode: 'PATCH' })).toEqual({ updated: 1 });
    expect((await ix.fetch(['u'], { includeMetadata: true }))[0]?.metadata).toEqual({ a: 1, b: { d: 3, e: 4 }, f: 5 });
    await ix.update({ id: 'u', metadata: { only: true } });
    expect((await ix.fetch(['u'], { includeMetadata: true }))[0]?.metadata).toEqual({ only: true });
    const v = randomVector(384);
    await ix.update({ id: 'u', vector: v });
    expect((await ix.query({ vector: v, topK: 1 }))[0].score).toBeCloseTo(1, 5);
    await ix.update({ id: 'u', data: 'some text' });
    expect((await ix.fetch(['u'], { includeData: true }))[0]?.data).toBe('some text');
    expect(await ix.update({ id: 'nobody', metadata: { x: 1 } })).toEqual({ updated: 0 });
  });

  it('namespaces: list, info per namespace, reset one, reset all, delete one', async () => {
    const ix = index('dense');
    await ix.namespace('ns-a').upsert({ id: 'x', vector: randomVector(384) });
    await ix.namespace('ns-b').upsert({ id: 'y', vector: randomVector(384) });
    expect(await ix.listNamespaces()).toEqual(expect.arrayContaining(['', 'ns-a', 'ns-b']));
    const info = await ix.info();
    expect(info).toMatchObject({
      dimension: 384,
      similarityFunction: 'COSINE',
      pendingVectorCount: 0,
      denseIndex: { dimension: 384, similarityFunction: 'COSINE' },
    });
    expect(info.namespaces['ns-a']).toEqual({ vectorCount: 1, pendingVectorCount: 0 });
    expect(await ix.namespace('ns-a').reset()).toBe('Success');
    expect(await ix.namespace('ns-a').query({ vector: randomVector(384), topK: 3 })).toEqual([]);
    expect(await ix.deleteNamespace('ns-b')).toBe('Success');
    expect(await ix.listNamespaces()).not.toContain('ns-b');
    await expect(ix.deleteNamespace('ns-b')).rejects.toThrow('Namespace ns-b for the index dense does not exist');
    expect(await ix.reset({ all: true })).toBe('Success');
    expect((await ix.info()).vectorCount).toBe(0);
  });

  it('resumable query: start, next, stop', async () => {
    const ix = index('dense').namespace('resumable');
    const q = randomVector(384);
    await ix.upsert(Array.from({ length: 6 }, (_, i) => ({ id: `r${i}`, vector: randomVector(384) })));
    const { result, fetchNext, stop } = await ix.resumableQuery({ vector: q, topK: 2, maxIdle: 60 });
    const next = await fetchNext(3);
    const rest = await fetchNext(5);
    const all = [...result, ...next, ...rest];
    expect([result.length, next.length, rest.length]).toEqual([2, 3, 1]);
    expect(new Set(all.map((r) => r.id)).size).toBe(6);
    const scores = all.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(await stop()).toBe('Success');
    expect(() => fetchNext(1)).toThrow('The resumable query has already been stopped. Please start another resumable query.');
  });
});

describe('@upstash/vector with an embedding model (dense-data: the local lexical embedder)', () => {
  it('upsert data and query data: the text sharing the words wins; data is returned', async () => {
    const ix = index('dense-data');
    await ix.upsert([
      { id: 'cat', data: 'the cat sat on the mat', metadata: { kind: 'animal' } },
      { id: 'stock', data: 'stock markets fell sharply today' },
      { id: 'rain', data: 'heavy rain expected over the weekend' },
    ]);
    const res = await ix.query({ data: 'where did the cat sit', topK: 3, includeData: true, includeMetadata: true });
    expect(res[0]).toMatchObject({ id: 'cat', data: 'the cat sat on the mat', metadata: { kind: 'animal' } });
    expect((await ix.info()).denseIndex?.embeddingModel).toBe('respgate-lexical-v1');
  });

  it('an index without an embedding model refuses data with the service error', async () => {
    await expect(index('dense').upsert({ id: 'x', data: 'text' })).rejects.toThrow(
      'Embedding data for this index is not allowed. The index must be created with an embedding model to use it.',
    );
    await expect(index('dense').query({ data: 'text', topK: 1 })).rejects.toThrow('Embedding data for this index is not allowed');
  });
});

describe('@upstash/vector on a sparse index', () => {
  it('inner product, and IDF scores equal to those the real service gives in vector-js tests', async () => {
    const ix = index('sparse');
    await ix.upsert(
      [
        { id: 'id0', sparseVector: { indices: [0, 1], values: [0.1, 0.2] } },
        { id: 'id1', sparseVector: { indices: [1, 2], values: [0.2, 0.3] }, metadata: { key: 'value' } },
        { id: 'id2', sparseVector: { indices: [2, 3], values: [0.3, 0.4] }, metadata: { key: 'value' }, data: 'data' },
      ] as never,
      { namespace: 'golden' },
    ); // mixed items (data beside sparseVector), typed loosely as in vector-js's own tests
    const ns = ix.namespace('golden');
    const { result, fetchNext, stop } = await ns.resumableQuery({
      sparseVector: { indices: [0, 1], values: [0.1, 0.2] },
      topK: 1,
      includeVectors: true,
      includeMetadata: true,
      includeData: true,
      weightingStrategy: 'IDF' as never,
      fusionAlgorithm: 'DBSF' as never,
      maxIdle: 3600,
    });
    expect(result).toEqual([{ id: 'id0', score: 0.028_608_438, sparseVector: { indices: [0, 1], values: [0.1, 0.2] } }]);
    expect(await fetchNext(1)).toEqual([
      { id: 'id1', score: 0.018_800_145, sparseVector: { indices: [1, 2], values: [0.2, 0.3] }, metadata: { key: 'value' } },
    ]);
    await stop();
    const plain = await ns.query({ sparseVector: { indices: [1, 2], values: [1, 2] }, topK: 3 });
    expect(plain.map((r) => [r.id, r.score])).toEqual([
      ['id1', 0.8],
      ['id2', 0.6],
      ['id0', 0.2],
    ]);
  });

  it('BM25 text: upsert-data and query-data', async () => {
    const ix = index('sparse').namespace('bm25');
    await ix.upsert([
      { id: 'a', data: 'redis is an in-memory data store' },
      { id: 'b', data: 'vector search with sparse vectors' },
    ]);
    const res = await ix.query({ data: 'sparse search', topK: 2, includeData: true });
    expect(res.map((r) => r.id)).toEqual(['b']);
    expect((await index('sparse').info()).sparseIndex?.embeddingModel).toBe('BM25');
  });
});

describe('@upstash/vector on a hybrid index', () => {
  it('RRF (default) and DBSF fusion; a sparse-only query scores by the sparse side; scores equal the service ones', async () => {
    const ix = index('hybrid-2d').namespace('query-hybrid');
    await ix.upsert([
      { id: 'id0', vector: [0.1, 0.2], sparseVector: { indices: [0, 1], values: [0.1, 0.2] } },
      { id: 'id1', vector: [0.2, 0.3], sparseVector: { indices: [1, 2], values: [0.2, 0.3] }, metadata: { key: 'value' } },
      { id: 'id2', vector: [0.3, 0.4], sparseVector: { indices: [2, 3], values: [0.3, 0.4] }, metadata: { key: 'value' }, data: 'data' },
    ] as never);
    // the queries and expected answers of vector-js src/commands/client/query/query-many/index.test.ts
    const result = await index('hybrid-2d').queryMany(
      [
        { topK: 1, vector: [0.1, 0.1], sparseVector: { indices: [3, 4], values: [0.1, 0.2] }, fusionAlgorithm: 'RRF' as never },
        { topK: 1, vector: [0.5, 0.1], sparseVector: { indices: [0, 1], values: [0.5, 0.1] }, includeVectors: true },
        {
          topK: 1,
          sparseVector: { indices: [2, 3], values: [0.5, 0.5] },
          weightingStrategy: 'IDF' as never,
          fusionAlgorithm: 'DBSF' as never,
          includeMetadata: true,
        },
      ],
      { namespace: 'query-hybrid' },
    );
    expect(result).toEqual([
      [{ id: 'id2', score: 0.033_333_335 }],
      [{ id: 'id0', score: 0.032_795_697, vector: [0.1, 0.2], sparseVector: { indices: [0, 1], values: [0.1, 0.2] } }],
      [{ id: 'id2', score: 0.266_666_38, metadata: { key: 'value' } }],
    ]);
    const dbsf = await ix.query({
      topK: 3,
      vector: [0.1, 0.1],
      sparseVector: { indices: [0], values: [0.1] },
      fusionAlgorithm: 'DBSF' as never,
    });
    expect(dbsf.map((r) => r.id)).toHaveLength(3);
  });

  it('resumable DBSF query: pages of topK candidates per side, the scores vector-js expects from the service', async () => {
    await index('hybrid-2d').upsert(
      [
        { id: 'id0', vector: [0.1, 0.2], sparseVector: { indices: [0, 1], values: [0.1, 0.2] } },
        { id: 'id1', vector: [0.2, 0.3], sparseVector: { indices: [1, 2], values: [0.2, 0.3] }, metadata: { key: 'value' } },
        { id: 'id2', vector: [0.3, 0.4], sparseVector: { indices: [2, 3], values: [0.3, 0.4] }, metadata: { key: 'value' }, data: 'data' },
      ] as never,
      { namespace: 'resumable-hybrid' },
    );
    // the query and expected answers of vector-js src/commands/client/resumable-query/index.test.ts
    const { result, fetchNext, stop } = await index('hybrid-2d').resumableQuery(
      {
        vector: [0.1, 0.1],
        sparseVector: { indices: [0], values: [0.1] },
        topK: 2,
        includeVectors: true,
        includeMetadata: true,
        includeData: true,
        weightingStrategy: 'IDF' as never,
        fusionAlgorithm: 'DBSF' as never,
        maxIdle: 3600,
      },
      { namespace: 'resumable-hybrid' },
    );
    expect(result).toEqual([
      {
        id: 'id2',
        score: 0.617_851,
        vector: [0.3, 0.4],
        sparseVector: { indices: [2, 3], values: [0.3, 0.4] },
        metadata: { key: 'value' },
        data: 'data',
      },
      { id: 'id0', score: 0.5, vector: [0.1, 0.2], sparseVector: { indices: [0, 1], values: [0.1, 0.2] } },
    ]);
    expect(await fetchNext(1)).toEqual([
      { id: 'id1', score: 0.5, vector: [0.2, 0.3], sparseVector: { indices: [1, 2], values: [0.2, 0.3] }, metadata: { key: 'value' } },
    ]);
    await stop();
  });

  it('hybrid with embedders: query-data in HYBRID, DENSE and SPARSE modes', async () => {
    const ix = index('hybrid').namespace('modes');
    await ix.upsert([
      { id: 'a', data: 'apples and oranges' },
      { id: 'b', data: 'trains and planes' },
    ]);
    for (const queryMode of ['HYBRID', 'DENSE', 'SPARSE']) {
      const res = await ix.query({ data: 'oranges', topK: 1, queryMode: queryMode as never });
      expect(res[0].id).toBe('a');
    }
    const info = await index('hybrid').info();
    expect(info.denseIndex?.embeddingModel).toBe('respgate-lexical-v1');
    expect(info.sparseIndex?.embeddingModel).toBe('BM25');
  });
});

describe('startup banner', () => {
  it('prints each index with its URL and token, ready to paste', () => {
    const text = p.areaBanner.join('\n');
    for (const name of ['dense', 'dense-data', 'sparse', 'hybrid', 'hybrid-2d']) {
      expect(text).toContain(`export UPSTASH_VECTOR_REST_URL=${p.url}/vector/${name}\n      export UPSTASH_VECTOR_REST_TOKEN=${p.token}`);
    }
    expect(text).toContain('hybrid (HYBRID, 384 dimensions, COSINE, local embedder, BM25)');
  });
});

describe('tokens', () => {
  it('the read-only token queries and may not write', async () => {
    const ro = index('dense', p.readonlyToken);
    expect(await ro.query({ vector: randomVector(384), topK: 1 })).toBeInstanceOf(Array);
    await expect(ro.upsert({ id: 'ro', vector: randomVector(384) })).rejects.toThrow('not allowed with the read-only token');
    await expect(index('dense', 'wrong').info()).rejects.toThrow('Unauthorized');
  });
});

// The whole operation set once per index kind, each in its own namespace.
type Vectors = { vector?: number[]; sparseVector?: { indices: number[]; values: number[] } };
const kinds: Array<[string, string, (i: number) => Vectors]> = [
  ['DENSE', 'dense', (i) => ({ vector: Array.from({ length: 384 }, (_, j) => Math.sin(i * 7 + j)) })],
  ['SPARSE', 'sparse', (i) => ({ sparseVector: { indices: [i, i + 1, 1000], values: [1, 0.5, 0.1] } })],
  ['HYBRID', 'hybrid-2d', (i) => ({ vector: [Math.cos(i), Math.sin(i)], sparseVector: { indices: [i, 1000], values: [1, 0.1] } })],
];

describe.each(kinds)('every operation on a %s index', (_kind, name, vectors) => {
  const ns = 'all-ops';
  it('upsert, query (with filter), fetch, range, update, delete by each selector, info, resumable query, reset, delete-namespace', async () => {
    const ix = index(name);
    const records = Array.from({ length: 12 }, (_, i) => ({
      id: `k${String(i).padStart(2, '0')}`,
      ...vectors(i),
      metadata: { i, even: i % 2 === 0 },
    }));
    expect(await ix.upsert(records as never, { namespace: ns })).toBe('Success');

    const q = vectors(3);
    const top = await ix.query({ ...q, topK: 1, includeMetadata: true } as never, { namespace: ns });
    expect(top[0]).toMatchObject({ id: 'k03', metadata: { i: 3, even: false } });
    const filtered = await ix.query({ ...q, topK: 12, filter: 'even = true AND i < 6' } as never, { namespace: ns });
    expect(filtered.map((r) => r.id).sort()).toEqual(['k00', 'k02', 'k04']);

    expect((await ix.fetch(['k01', 'zz'], { namespace: ns })).map((r) => r?.id ?? null)).toEqual(['k01', null]);
    expect((await ix.fetch({ prefix: 'k1' }, { namespace: ns })).map((r) => r?.id)).toEqual(['k10', 'k11']);
    const ids: string[] = [];
    let cursor: string | number = 0;
    do {
      const page: Awaited<ReturnType<typeof ix.range>> = await ix.range({ cursor, limit: 5, includeVectors: true }, { namespace: ns });
      ids.push(...page.vectors.map((v) => String(v.id)));
      cursor = page.nextCursor;
    } while (cursor !== '');
    expect(ids).toEqual(records.map((r) => r.id));

    expect(await ix.update({ id: 'k05', metadata: { tag: 'x' }, metadataUpdateMode: 'PATCH' }, { namespace: ns })).toEqual({ updated: 1 });
    expect((await ix.fetch(['k05'], { namespace: ns, includeMetadata: true }))[0]?.metadata).toEqual({ i: 5, even: false, tag: 'x' });
    expect(await ix.update({ id: 'k05', ...vectors(11) } as never, { namespace: ns })).toEqual({ updated: 1 });

    expect(await ix.delete(['k00'], { namespace: ns })).toEqual({ deleted: 1 });
    expect(await ix.delete({ prefix: 'k1' }, { namespace: ns })).toEqual({ deleted: 2 });
    expect(await ix.delete({ filter: 'i >= 8' }, { namespace: ns })).toEqual({ deleted: 2 });
    const info = await ix.info();
    expect(info.namespaces[ns]).toEqual({ vectorCount: 7, pendingVectorCount: 0 });

    const { result, fetchNext, stop } = await ix.resumableQuery({ ...q, topK: 3, maxIdle: 60 } as never, { namespace: ns });
    const next = await fetchNext(10);
    expect(result).toHaveLength(3);
    expect(next).toHaveLength(4);
    expect(await stop()).toBe('Success');

    expect(await ix.reset({ namespace: ns })).toBe('Success');
    expect((await ix.info()).namespaces[ns]).toEqual({ vectorCount: 0, pendingVectorCount: 0 });
    expect(await ix.deleteNamespace(ns)).toBe('Success');
    expect(await ix.listNamespaces()).not.toContain(ns);
  });
});
