// Records live in the platform's internal redis-server: a restart on a kept server loses nothing.
import { Index } from '@upstash/vector';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { DEFAULT_INDEXES, type VectorIndexConfig } from '../../src/platform/vector/config.js';
import { startTestPlatform } from '../helpers/platform.js';

let internal: EmbeddedRedis;
let url: string;
const token = 'persist-token';
const indexes: VectorIndexConfig[] = [
  ...DEFAULT_INDEXES,
  { name: 'hybrid-3d', type: 'HYBRID', dimension: 3, similarityFunction: 'EUCLIDEAN' },
];

beforeAll(async () => {
  internal = await startEmbeddedRedis();
  url = `redis://:${encodeURIComponent(internal.endpoint.password ?? '')}@127.0.0.1:${internal.endpoint.port}`;
});
afterAll(async () => {
  await internal?.stop();
});

const start = (more: Partial<Parameters<typeof startTestPlatform>[0]> = {}) =>
  startTestPlatform({ internalRedisUrl: url, token, vectorIndexes: indexes, ...more });
const open = (p: RunningPlatform, name: string) => new Index({ url: `${p.url}/vector/${name}`, token, retry: false });

describe('vector persistence', () => {
  it('records, namespaces, updates and deletes survive a platform restart', async () => {
    const vec = Array.from({ length: 384 }, (_, i) => Math.sin(i));
    let p = await start();
    try {
      // a vector with its data text: the SDK's types don't mix them, the REST API does
      await open(p, 'dense').upsert([
        { id: 'a', vector: vec, metadata: { n: 1 }, data: 'alpha' },
        { id: 'b', vector: vec.map((x) => -x) },
      ] as never);
      await open(p, 'dense').upsert({ id: 'c', vector: vec }, { namespace: 'other' });
      await open(p, 'dense').update({ id: 'a', metadata: { n: 2 } });
      await open(p, 'dense').delete('b');
      await open(p, 'sparse').upsert([{ id: 's', data: 'persistent sparse text' }]);
      await open(p, 'hybrid-3d').upsert(
        { id: 'h', vector: [1, 2, 3], sparseVector: { indices: [7, 9], values: [0.5, 0.25] } },
        { namespace: 'h-ns' },
      );
      await open(p, 'dense').namespace('gone').upsert({ id: 'g', vector: vec });
      await open(p, 'dense').deleteNamespace('gone');
    } finally {
      await p.stop();
    }

    p = await start();
    try {
      const dense = open(p, 'dense');
      expect(await dense.fetch(['a', 'b'], { includeMetadata: true, includeData: true, includeVectors: true })).toEqual([
        { id: 'a', metadata: { n: 2 }, data: 'alpha', vector: vec.map((x) => expect.closeTo(x, 6)) },
        null,
      ]);
      expect((await dense.query({ vector: vec, topK: 1 }))[0]).toEqual({ id: 'a', score: 1 });
      expect(await dense.listNamespaces()).toEqual(['', 'other']);
      expect((await dense.fetch(['c'], { namespace: 'other' }))[0]?.id).toBe('c');
      expect((await open(p, 'sparse').query({ data: 'sparse', topK: 1 }))[0]?.id).toBe('s');
      expect(await open(p, 'hybrid-3d').fetch(['h'], { namespace: 'h-ns', includeVectors: true })).toEqual([
        { id: 'h', vector: [1, 2, 3], sparseVector: { indices: [7, 9], values: [0.5, 0.25] } },
      ]);
    } finally {
      await p.stop();
    }
  });

  it('a renamed namespace comes back under its new name (rename-namespace moves the stored records)', async () => {
    const vec = Array.from({ length: 384 }, (_, i) => Math.cos(i));
    const rename = (p: RunningPlatform, body: unknown) =>
      fetch(`${p.url}/vector/dense/rename-namespace`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    let p = await start();
    try {
      await open(p, 'dense').upsert({ id: 'r1', vector: vec }, { namespace: 'before' });
      await open(p, 'dense').upsert({ id: 'r2', vector: vec }, { namespace: 'taken' });
      expect(await (await rename(p, { namespace: 'before', newNamespace: 'taken', deleteExisting: true })).json()).toEqual({
        result: { renamed: true },
      });
    } finally {
      await p.stop();
    }
    p = await start();
    try {
      const names = await open(p, 'dense').listNamespaces();
      expect(names).toContain('taken');
      expect(names).not.toContain('before');
      expect(await open(p, 'dense').fetch(['r1', 'r2'], { namespace: 'taken' })).toEqual([{ id: 'r1' }, null]);
    } finally {
      await p.stop();
    }
  });

  it('keeps its keys under respgate:vector: and refuses a restart that changes an index dimension', async () => {
    const client = new IORedis({ port: internal.endpoint.port, password: internal.endpoint.password, lazyConnect: true });
    await client.connect();
    try {
      const keys = await client.keys('*vector*');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((k) => k.startsWith('respgate:vector:'))).toBe(true);
    } finally {
      client.disconnect();
    }
    await expect(start({ vectorIndexes: [{ name: 'dense', type: 'DENSE', dimension: 8, similarityFunction: 'COSINE' }] })).rejects.toThrow(
      "vector index 'dense' was stored as DENSE (dimension 384, COSINE) in the internal Redis, now configured as DENSE (dimension 8, COSINE): restore its configuration, or give it another name",
    );
  });
});
