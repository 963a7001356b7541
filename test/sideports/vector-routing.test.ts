// One vector side port in front of several indexes, one per dimension: as in Redis, each key takes the
// dimension of its first VADD (it lives in the index of that dimension) and keeps it.
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { vectorPort } from './harness.js';

let platform: RunningPlatform;
let port: RunningSideport;
let io: IORedis;
const index = (name: string) => ({ url: `${platform.url}/vector/${name}`, token: platform.token });

beforeAll(async () => {
  platform = await startTestPlatform({
    vectorIndexes: [
      { name: 'd3', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE' },
      { name: 'd2', type: 'DENSE', dimension: 2, similarityFunction: 'COSINE' },
    ],
  });
  port = await vectorPort({ ...index('d3'), more: [index('d2')], addHint: '--vector-index URL[,TOKEN]' });
  io = new IORedis({ port: port.port });
});
afterAll(async () => {
  io?.disconnect();
  await port?.stop();
  await platform?.stop();
});
beforeEach(async () => {
  await io.call('DEL', 'three', 'two', 'x');
});

const obj = (flat: unknown): Record<string, unknown> => {
  const a = flat as unknown[];
  return Object.fromEntries(Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]]));
};

describe('keys of two dimensions through one port', () => {
  it('each key takes the dimension of its first VADD and every command finds its index', async () => {
    expect(await io.call('VADD', 'three', 'VALUES', '3', '1', '0', '0', 'a')).toBe(1);
    expect(await io.call('VADD', 'two', 'VALUES', '2', '0', '1', 'b')).toBe(1);
    expect(await io.call('VADD', 'two', 'VALUES', '2', '1', '1', 'c', 'SETATTR', '{"k":1}')).toBe(1);
    expect([await io.call('VDIM', 'three'), await io.call('VDIM', 'two')]).toEqual([3, 2]);
    expect([await io.call('VCARD', 'three'), await io.call('VCARD', 'two')]).toEqual([1, 2]);
    expect(await io.call('VSIM', 'two', 'VALUES', '2', '0', '1', 'COUNT', '1')).toEqual(['b']);
    expect(await io.call('VSIM', 'two', 'ELE', 'c', 'FILTER', '.k == 1')).toEqual(['c']);
    expect(await io.call('VEMB', 'two', 'b')).toEqual(['0', '1']);
    expect(await io.call('VGETATTR', 'two', 'c')).toBe('{"k":1}');
    expect(obj(await io.call('VINFO', 'two'))['vector-dim']).toBe(2);
    expect(obj(await io.call('VINFO', 'three'))['vector-dim']).toBe(3);
    expect(((await io.call('KEYS', '*')) as string[]).sort()).toEqual(['three', 'two']);
    expect(await io.call('EXISTS', 'three', 'two', 'none')).toBe(2);
    expect(await io.call('TYPE', 'two')).toBe('vectorset');
    // Redis' text for a vector of another dimension than the key's.
    await expect(io.call('VADD', 'two', 'VALUES', '3', '1', '0', '0', 'd')).rejects.toThrow(
      /^ERR Vector dimension mismatch - got 3 but set has 2$/,
    );
    await expect(io.call('VSIM', 'three', 'VALUES', '2', '1', '0')).rejects.toThrow(
      /^ERR Vector dimension mismatch - got 2 but set has 3$/,
    );
    expect(await io.call('VREM', 'two', 'b')).toBe(1);
    expect(await io.call('DEL', 'two', 'three')).toBe(2);
    expect(await io.call('KEYS', '*')).toEqual([]);
  });

  it('a deleted key can come back with another dimension', async () => {
    expect(await io.call('VADD', 'x', 'VALUES', '2', '1', '0', 'a')).toBe(1);
    expect(await io.call('DEL', 'x')).toBe(1);
    expect(await io.call('VADD', 'x', 'VALUES', '3', '1', '0', '0', 'a')).toBe(1);
    expect(await io.call('VDIM', 'x')).toBe(3);
  });

  it('a new key of a dimension no index has gets an error naming the flag that adds one', async () => {
    await expect(io.call('VADD', 'five', 'VALUES', '5', '1', '0', '0', '0', '0', 'a')).rejects.toThrow(
      "ERR no vector index of dimension 5 for the new key: this side port's indexes have 3, 2 dimensions; add an index of 5 dimensions with --vector-index URL[,TOKEN]",
    );
    expect(await io.call('EXISTS', 'five')).toBe(0);
  });

  it('a pipeline of VADDs to both keys is answered in order', async () => {
    const p = io.pipeline();
    p.call('VADD', 'three', 'VALUES', '3', '1', '0', '0', 'a');
    p.call('VADD', 'two', 'VALUES', '2', '1', '0', 'a');
    p.call('VADD', 'two', 'VALUES', '3', '1', '0', '0', 'b');
    p.call('VADD', 'three', 'VALUES', '3', '0', '1', '0', 'b');
    const out = (await p.exec())!;
    expect(out.map(([err, v]) => (err ? (err as Error).message : v))).toEqual([
      1,
      1,
      'ERR Vector dimension mismatch - got 3 but set has 2',
      1,
    ]);
    expect([await io.call('VCARD', 'three'), await io.call('VCARD', 'two')]).toEqual([2, 1]);
  });
});
