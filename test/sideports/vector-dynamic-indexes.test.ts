// The dev stack creates the vector indexes it needs (issue 21): Redis 8 gives each vector set the dimension
// of its first VADD, any dimension, so the dev stack's side port (wired as `respgate dev` wires it,
// cli/roles/dev-vector.ts) makes a dense COSINE index `vset-<dimension>` on its platform for a new key of
// a dimension no index has. The indexes stay after a restart on the same data directory; a side port in
// front of hosted indexes keeps its error naming the flag.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devVectorIndexes } from '../../src/cli/roles/dev-vector.js';
import { generateToken } from '../../src/config.js';
import { reconcile, type Manifest } from '../../src/platform/data-dir.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { vectorPort } from './harness.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'respgate-vdyn-'));
const tokens = { token: generateToken(), readonlyToken: generateToken() };
let platform: RunningPlatform;
let port: RunningSideport;
let io: IORedis;

/** The dev stack: the platform on the data directory, its side port in front of 'dense' (384) as by default. */
async function startDev(): Promise<void> {
  platform = await startTestPlatform({ ...tokens, dataDir });
  port = await vectorPort(devVectorIndexes(platform, ['dense'], platform.token));
  io = new IORedis({ port: port.port });
}
async function stopDev(): Promise<void> {
  io?.disconnect();
  await port?.stop();
  await platform?.stop();
}

beforeAll(startDev);
afterAll(async () => {
  await stopDev();
  rmSync(dataDir, { recursive: true, force: true });
});

const values = (dim: number, at = 0) => Array.from({ length: dim }, (_, i) => String(i === at ? 1 : 0.01 * ((i % 7) + 1)));
const vinfo = async (key: string): Promise<Record<string, unknown>> => {
  const a = (await io.call('VINFO', key)) as unknown[];
  return Object.fromEntries(Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]]));
};
const restInfo = async (index: string) => {
  const res = await fetch(`${platform.url}/vector/${index}/info`, { headers: { Authorization: `Bearer ${platform.token}` } });
  return { status: res.status, json: (await res.json()) as { result: { dimension: number; namespaces: Record<string, unknown> } } };
};

describe('the dev stack creates an index for each new dimension', () => {
  it('VADD of 3, 20, 384 and REDUCE to 2 dimensions: each key keeps its dimension, VSIM and VINFO answer', async () => {
    expect(await io.call('VADD', 'a3', 'VALUES', '3', ...values(3), 'x')).toBe(1);
    expect(await io.call('VADD', 'a3', 'VALUES', '3', ...values(3, 1), 'y')).toBe(1);
    expect(await io.call('VADD', 'a20', 'VALUES', '20', ...values(20), 'x')).toBe(1);
    expect(await io.call('VADD', 'a384', 'VALUES', '384', ...values(384), 'x')).toBe(1);
    expect(await io.call('VADD', 'r2', 'REDUCE', '2', 'VALUES', '5', ...values(5), 'x')).toBe(1);
    expect(await io.call('VADD', 'f6', 'FP32', Buffer.from(new Float32Array([1, 0, 0, 0, 0, 0.5]).buffer), 'x')).toBe(1);
    expect(await io.call('VDIM', 'f6')).toBe(6);
    for (const key of ['a3', 'a20', 'a384', 'r2', 'f6']) expect(await io.call('VSIM', key, 'ELE', 'x', 'COUNT', '1')).toEqual(['x']);
    expect(await io.call('VSIM', 'a3', 'VALUES', '3', ...values(3, 1), 'COUNT', '1')).toEqual(['y']);
    expect((await vinfo('a3'))['vector-dim']).toBe(3);
    expect((await vinfo('a20'))['vector-dim']).toBe(20);
    expect((await vinfo('a384'))['vector-dim']).toBe(384);
    expect(await vinfo('r2')).toMatchObject({ 'vector-dim': 2, 'projection-input-dim': 5 });
    expect(await io.call('VDIM', 'r2')).toBe(2);
    // 384 is the configured index's dimension: nothing is created for it.
    expect(platform.vectorRuntimeIndexes().sort()).toEqual(['vset-2', 'vset-20', 'vset-3', 'vset-6']);
    // A created index is an index like any other: /info and the REST API.
    const info = await restInfo('vset-20');
    expect(info.status).toBe(200);
    expect(info.json.result.dimension).toBe(20);
    expect(Object.keys(info.json.result.namespaces)).toContain('a20');
    // A vector of another dimension than the key's is Redis' refusal, not a new index.
    await expect(io.call('VADD', 'a3', 'VALUES', '4', '1', '0', '0', '0', 'z')).rejects.toThrow(
      /^ERR Vector dimension mismatch - got 4 but set has 3$/,
    );
    expect(((await io.call('KEYS', '*')) as string[]).sort()).toEqual(['a20', 'a3', 'a384', 'f6', 'r2']);
  });

  it('reads of a missing key of an unknown dimension answer as Redis and create nothing', async () => {
    expect(await io.call('VSIM', 'none', 'VALUES', '7', ...values(7))).toEqual([]);
    expect(await io.call('VEMB', 'none', 'x')).toBeNull();
    expect(await io.call('VCARD', 'none')).toBe(0);
    expect(platform.vectorRuntimeIndexes()).not.toContain('vset-7');
    expect((await restInfo('vset-7')).status).toBe(404);
  });

  it('concurrent VADDs of a new dimension, on several connections, create one index', async () => {
    const clients = Array.from({ length: 6 }, () => new IORedis({ port: port.port }));
    try {
      const added = await Promise.all(clients.map((c, i) => c.call('VADD', `c${i}`, 'VALUES', '11', ...values(11, i), `e${i}`)));
      expect(added).toEqual([1, 1, 1, 1, 1, 1]);
    } finally {
      for (const c of clients) c.disconnect();
    }
    expect(platform.vectorRuntimeIndexes().filter((n) => n === 'vset-11')).toEqual(['vset-11']);
    const namespaces = Object.keys((await restInfo('vset-11')).json.result.namespaces);
    for (let i = 0; i < 6; i++) {
      expect(namespaces).toContain(`c${i}`);
      expect(await io.call('VDIM', `c${i}`)).toBe(11);
    }
  });

  it('a restart on the same data directory serves the created indexes and their keys', async () => {
    await stopDev();
    const manifest = JSON.parse(readFileSync(path.join(dataDir, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.vectorIndexes.filter((s) => s.createdAtRunTime).map((s) => [s.name, s.dimension])).toEqual(
      expect.arrayContaining([
        ['vset-3', 3],
        ['vset-20', 20],
        ['vset-2', 2],
        ['vset-11', 11],
      ]),
    );
    await startDev();
    expect(platform.dataDirNotes).toEqual([]);
    expect(platform.vectorRuntimeIndexes().sort()).toEqual(['vset-11', 'vset-2', 'vset-20', 'vset-3', 'vset-6']);
    expect(await io.call('VSIM', 'a3', 'VALUES', '3', ...values(3, 1), 'COUNT', '1')).toEqual(['y']);
    expect((await vinfo('a20'))['vector-dim']).toBe(20);
    expect(await vinfo('r2')).toMatchObject({ 'vector-dim': 2, 'projection-input-dim': 5 });
    expect(await io.call('VCARD', 'c3')).toBe(1);
    // A known dimension after the restart uses its index again; a new one still creates.
    expect(await io.call('VADD', 'b3', 'VALUES', '3', ...values(3), 'x')).toBe(1);
    expect(await io.call('VADD', 'a9', 'VALUES', '9', ...values(9), 'x')).toBe(1);
    expect(platform.vectorRuntimeIndexes().sort()).toEqual(['vset-11', 'vset-2', 'vset-20', 'vset-3', 'vset-6', 'vset-9']);
    expect(Object.keys((await restInfo('vset-3')).json.result.namespaces)).toEqual(expect.arrayContaining(['a3', 'b3']));
  });
});

describe('in front of hosted indexes nothing is created', () => {
  it('a side port without the dev stack wiring keeps the error naming the flag', async () => {
    const remote = await vectorPort({ url: `${platform.url}/vector/dense`, token: platform.token, addHint: '--vector-index URL[,TOKEN]' });
    const c = new IORedis({ port: remote.port });
    try {
      await expect(c.call('VADD', 'remote5', 'VALUES', '5', ...values(5), 'x')).rejects.toThrow(
        "ERR no vector index of dimension 5 for the new key: this side port's indexes have 384 dimensions; add an index of 5 dimensions with --vector-index URL[,TOKEN]",
      );
      expect(await c.call('EXISTS', 'remote5')).toBe(0);
    } finally {
      c.disconnect();
      await remote.stop();
    }
    expect(platform.vectorRuntimeIndexes()).not.toContain('vset-5');
  });
});

describe('an index that cannot be created', () => {
  it('a dimension out of range, or a configured index holding the name with another dimension, is a clear error', async () => {
    const other = await startTestPlatform({
      vectorIndexes: [
        { name: 'dense', type: 'DENSE', dimension: 384, similarityFunction: 'COSINE' },
        { name: 'vset-3', type: 'DENSE', dimension: 5, similarityFunction: 'COSINE' },
      ],
    });
    const p = await vectorPort(devVectorIndexes(other, ['dense'], other.token));
    const c = new IORedis({ port: p.port });
    try {
      await expect(other.vectorCreateIndex(0)).rejects.toThrow('an index has 1 to 16384 dimensions, not 0');
      await expect(other.vectorCreateIndex(16385)).rejects.toThrow('an index has 1 to 16384 dimensions, not 16385');
      await expect(c.call('VADD', 'k', 'VALUES', '3', '1', '0', '0', 'a')).rejects.toThrow(
        "ERR could not create a vector index of dimension 3: index 'vset-3' exists as DENSE of dimension 5; rename it to let a DENSE one of 3 be created",
      );
      expect(await c.call('EXISTS', 'k')).toBe(0);
      expect(other.vectorRuntimeIndexes()).toEqual([]);
    } finally {
      c.disconnect();
      await p.stop();
      await other.stop();
    }
  });
});

describe('the data directory manifest', () => {
  it('an index created at run time is neither refused nor reported as not served at the next start', () => {
    const stored: Manifest = {
      format: 1,
      vectorIndexes: [
        { name: 'dense', type: 'DENSE', dimension: 384, similarityFunction: 'COSINE' },
        { name: 'vset-3', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE', createdAtRunTime: true },
      ],
    };
    const { manifest, notes } = reconcile('/d', stored, [stored.vectorIndexes[0]], undefined);
    expect(notes).toEqual([]);
    expect(manifest.vectorIndexes).toEqual(stored.vectorIndexes);
  });
});
