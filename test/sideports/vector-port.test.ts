// The vector side port end to end: RESP clients (ioredis RESP2, node-redis RESP3, redis-cli) → side port
// → the real local platform's Area C indexes over HTTP (dense, text-embedding, sparse, hybrid).
import { Redis as IORedis } from 'ioredis';
import { createClient, RESP_TYPES } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { VectorClient } from '../../src/upstream/vector-client.js';
import { startTestPlatform } from '../helpers/platform.js';
import { rawText, redisCli, vectorPort } from './harness.js';

let platform: RunningPlatform;
const ports: Record<string, RunningSideport> = {};
let io: IORedis;
let io3: ReturnType<typeof createClient>;
let text: IORedis;
let sparse: IORedis;
let hybrid: IORedis;

const fp32 = (v: number[]) => {
  const b = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => b.writeFloatLE(x, i * 4));
  return b;
};
const obj = (flat: unknown): Record<string, any> => {
  const a = flat as unknown[];
  const o: Record<string, any> = {};
  for (let i = 0; i < a.length; i += 2) o[a[i] as string] = a[i + 1];
  return o;
};

beforeAll(async () => {
  platform = await startTestPlatform({
    vectorIndexes: [
      { name: 'dense', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE' },
      { name: 'text', type: 'DENSE', dimension: 64, similarityFunction: 'COSINE', denseEmbedder: 'local' },
      { name: 'sparse', type: 'SPARSE', sparseEmbedder: 'bm25' },
      { name: 'hybrid', type: 'HYBRID', dimension: 2, similarityFunction: 'COSINE' },
    ],
  });
  for (const name of ['dense', 'text', 'sparse', 'hybrid'])
    ports[name] = await vectorPort({ url: `${platform.url}/vector/${name}`, token: platform.token });
  io = new IORedis({ port: ports.dense.port });
  io3 = createClient({ socket: { port: ports.dense.port }, RESP: 3 });
  await io3.connect();
  text = new IORedis({ port: ports.text.port });
  sparse = new IORedis({ port: ports.sparse.port });
  hybrid = new IORedis({ port: ports.hybrid.port });
});
afterAll(async () => {
  for (const c of [io, text, sparse, hybrid]) c?.disconnect();
  await io3?.quit();
  for (const p of Object.values(ports)) await p.stop();
  await platform?.stop();
});
beforeEach(async () => {
  await io.call('DEL', 'pts', 'movies', '');
});

async function points() {
  await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a');
  await io.call('VADD', 'pts', 'VALUES', '3', '0', '1', '0', 'b');
  await io.call('VADD', 'pts', 'VALUES', '3', '0.9', '0.1', '0', 'c');
}

describe('REDUCE (random projection), as Redis 8.8.0 answers', () => {
  // Recorded from Redis 8.8.0 (a server built from the tag): the same commands, replies as printed.
  it('projects with the Hadamard matrix, keeps the projection per set and projects VSIM queries', async () => {
    await io.call('DEL', 'red', 'plain');
    expect(await io.call('VADD', 'red', 'REDUCE', '3', 'VALUES', '4', '1', '2', '3', '4.5', 'a')).toBe(1);
    expect(await io.call('VADD', 'red', 'REDUCE', '3', 'VALUES', '4', '0.3', '-2', '1', '1', 'b', 'SETATTR', '{"k":1}')).toBe(1);
    expect(await io.call('VEMB', 'red', 'a')).toEqual(['5.25', '-1.2401574850082397', '-2.232283592224121']);
    expect(await io.call('VEMB', 'red', 'b')).toEqual(['0.14566929638385773', '1.1507874727249146', '-1.850000023841858']);
    const [type, blob] = (await io.callBuffer('VEMB', 'red', 'a', 'RAW')) as Buffer[];
    expect([type.toString(), blob.toString('hex')]).toEqual(['int8', '7fe2ca']);
    expect(obj(await io.call('VINFO', 'red'))).toMatchObject({ 'quant-type': 'int8', 'vector-dim': 3, 'projection-input-dim': 4, size: 2 });
    expect(await io.call('VGETATTR', 'red', 'b')).toBe('{"k":1}');
    // Queries of the input dimension are projected; queries of the set's dimension are taken as they are.
    const near = (await io.call('VSIM', 'red', 'VALUES', '4', '1', '2', '3', '4', 'WITHSCORES')) as string[];
    expect(near[0]).toBe('a');
    expect(Number(near[1])).toBeCloseTo(0.9988663792610168, 2);
    expect(Number(near[3])).toBeCloseTo(0.6383963227272034, 2);
    const direct = (await io.call('VSIM', 'red', 'VALUES', '3', '1', '1', '1', 'WITHSCORES')) as string[];
    expect(direct[0]).toBe('a');
    expect(Number(direct[1])).toBeCloseTo(0.5877606272697449, 2);
    expect(await io.call('VSIM', 'red', 'VALUES', '4', '1', '2', '3', '4', 'FILTER', '.k == 1')).toEqual(['b']);
    const errors = await rawText(ports.dense.port, [
      ['VADD', 'red', 'VALUES', '3', '1', '1', '1', 'c'],
      ['VADD', 'red', 'REDUCE', '3', 'VALUES', '5', '1', '1', '1', '1', '1', 'c'],
      ['VADD', 'red', 'REDUCE', '2', 'VALUES', '4', '1', '1', '1', '1', 'c'],
      ['VADD', 'red', 'REDUCE', '3', 'VALUES', '4', '1', '1', '1', '1', 'c', 'NOQUANT'],
      ['VADD', 'red', 'REDUCE', 'x', 'VALUES', '4', '1', '1', '1', '1', 'c'],
      ['VADD', 'red', 'REDUCE', '5', 'VALUES', '4', '1', '1', '1', '1', 'c'],
      ['VADD', 'plain', 'VALUES', '3', '1', '1', '1', 'c'],
      ['VADD', 'plain', 'REDUCE', '3', 'VALUES', '3', '1', '1', '1', 'd'],
      ['VSIM', 'red', 'VALUES', '5', '1', '1', '1', '1', '1'],
    ]);
    expect(errors).toEqual([
      '-ERR Vector dimension mismatch - got 3 but set has 3\r\n',
      '-ERR Input dimension mismatch for projection - got 5 but projection expects 4\r\n',
      '-ERR Vector dimension mismatch - got 4 but set has 3\r\n',
      '-ERR asked quantization mismatch with existing vector set\r\n',
      '-ERR invalid vector specification\r\n',
      '-ERR invalid vector specification\r\n',
      ':1\r\n',
      '-ERR cannot add projection to existing set without projection\r\n',
      '-ERR Input dimension mismatch for projection - got 5 but projection expects 4\r\n',
    ]);
    // A later VADD with the same REDUCE is projected too (the projection is read back from the set).
    expect(await io.call('VADD', 'red', 'REDUCE', '3', 'VALUES', '4', '1', '2', '3', '4.5', 'c')).toBe(1);
    expect(await io.call('VEMB', 'red', 'c')).toEqual(['5.25', '-1.2401574850082397', '-2.232283592224121']);
    await io.call('DEL', 'red', 'plain');
  });
});

describe('VADD, VCARD, VDIM, VISMEMBER, VEMB', () => {
  it('adds (1), updates (0), counts per namespace and reads back the vector', async () => {
    expect(await io.call('VADD', 'pts', 'VALUES', '3', '1', '2', '3', 'x')).toBe(1);
    expect(await io.call('VADD', 'pts', 'FP32', fp32([0.5, 0.25, 1]), 'x')).toBe(0);
    expect(await io.call('VADD', 'pts', 'VALUES', '3', '0', '0', '1', 'y', 'CAS', 'Q8', 'EF', '200', 'M', '16')).toBe(1);
    expect(await io.call('VCARD', 'pts')).toBe(2);
    expect(await io.call('VCARD', 'other')).toBe(0);
    expect(await io.call('VDIM', 'pts')).toBe(3);
    expect(await io.call('VISMEMBER', 'pts', 'x')).toBe(1);
    expect(await io.call('VISMEMBER', 'pts', 'zz')).toBe(0);
    expect(await io.call('VEMB', 'pts', 'nope')).toBeNull();
  });

  it('quantizes as Redis 8: int8 by default, NOQUANT f32, BIN; VEMB dequantized, VEMB RAW the stored bytes', async () => {
    // Recorded from Redis 8.8.0: VADD pts VALUES 3 0.5 0.25 1 x, then VEMB pts x [RAW].
    await io.call('VADD', 'pts', 'FP32', fp32([0.5, 0.25, 1]), 'x');
    expect((await io.call('VEMB', 'pts', 'x')) as string[]).toEqual(['0.4960629642009735', '0.25196850299835205', '1']);
    expect(await io3.sendCommand(['VEMB', 'pts', 'x'])).toEqual([0.4960629642009735, 0.25196850299835205, 1]);
    const [type, blob, norm, range] = (await io.callBuffer('VEMB', 'pts', 'x', 'RAW')) as Buffer[];
    expect([type.toString(), blob.toString('hex'), norm.toString(), range.toString()]).toEqual([
      'int8',
      '3f207f',
      '1.145643949508667',
      '0.8728715181350708',
    ]);
    expect(obj(await io.call('VINFO', 'pts'))['quant-type']).toBe('int8');
    // A set keeps the quantization of its first element, as in Redis.
    await expect(io.call('VADD', 'pts', 'VALUES', '3', '0', '0', '1', 'z', 'NOQUANT')).rejects.toThrow(
      'ERR asked quantization mismatch with existing vector set',
    );
    expect(await io.call('VADD', 'np', 'VALUES', '3', '0.5', '0.25', '1', 'x', 'NOQUANT')).toBe(1);
    expect(await io.call('VEMB', 'np', 'x')).toEqual(['0.5', '0.25', '1']);
    const [t2, b2, n2, ...rest] = (await io.callBuffer('VEMB', 'np', 'x', 'RAW')) as Buffer[];
    expect([t2.toString(), b2.toString('hex'), n2.toString(), rest.length]).toEqual([
      'f32',
      '8274df3e82745f3e82745f3f',
      '1.145643949508667',
      0,
    ]);
    expect(obj(await io.call('VINFO', 'np'))['quant-type']).toBe('f32');
    expect(await io.call('VADD', 'bin', 'VALUES', '3', '0.5', '-0.25', '1', 'x', 'BIN')).toBe(1);
    expect(await io.call('VEMB', 'bin', 'x')).toEqual(['1', '-1', '1']);
    // Attributes do not disturb the recorded quantization, nor it the attributes.
    expect(await io.call('VSETATTR', 'bin', 'x', 'a')).toBe(1);
    expect(await io.call('VGETATTR', 'bin', 'x')).toBe('a');
    expect(await io.call('VSETATTR', 'bin', 'x', '')).toBe(1);
    expect(await io.call('VGETATTR', 'bin', 'x')).toBeNull();
    expect(obj(await io.call('VINFO', 'bin'))).toMatchObject({ 'quant-type': 'bin', 'attributes-count': 0 });
    await io.call('DEL', 'np', 'bin');
  });

  it('a set keeps the M it was created with; another M is refused (recorded from Redis 8.8.0)', async () => {
    expect(await io.call('VADD', 'pts', 'VALUES', '3', '1', '1', '0', 'a', 'M', '32')).toBe(1);
    const [other, again, quantFirst] = await rawText(ports.dense.port, [
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'b'],
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'b', 'M', '32'],
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'b', 'M', '16', 'NOQUANT'],
    ]);
    expect([other, again, quantFirst]).toEqual([
      '-ERR asked M value mismatch with existing vector set\r\n',
      ':1\r\n',
      '-ERR asked quantization mismatch with existing vector set\r\n',
    ]);
    expect(obj(await io.call('VINFO', 'pts'))['hnsw-m']).toBe(32);
    // VSETATTR keeps it, and attributes do not show it.
    expect(await io.call('VSETATTR', 'pts', 'a', '')).toBe(1);
    expect(await io.call('VGETATTR', 'pts', 'a')).toBeNull();
    await expect(io.call('VADD', 'pts', 'VALUES', '3', '0', '0', '1', 'c')).rejects.toThrow(
      'ERR asked M value mismatch with existing vector set',
    );
  });

  it('the default namespace is the empty key', async () => {
    await io.call('VADD', '', 'VALUES', '3', '1', '1', '1', 'root');
    expect(await io.call('VCARD', '')).toBe(1);
    expect(await io.call('VCARD', 'pts')).toBe(0);
  });

  it('refuses wrong dimensions, REDUCE, bad vectors and unknown options in Redis style', async () => {
    const [newKey] = await rawText(ports.dense.port, [['VADD', 'pts', 'VALUES', '2', '1', '2', 'e0']]);
    const [first, dim, reduce, notNum, blob, missingEl, unknown, count, noVector, vdim] = await rawText(ports.dense.port, [
      ['VADD', 'pts', 'VALUES', '3', '1', '2', '3', 'first'],
      ['VADD', 'pts', 'VALUES', '2', '1', '2', 'e'],
      ['VADD', 'pts', 'REDUCE', '3', 'VALUES', '3', '1', '2', '3', 'e'],
      ['VADD', 'pts', 'VALUES', '3', '1', 'x', '3', 'e'],
      ['VADD', 'pts', 'FP32', 'abcde', 'e'],
      ['VADD', 'pts', 'VALUES', '3', '1', '2', '3'],
      ['VADD', 'pts', 'VALUES', '3', '1', '2', '3', 'e', 'FAST'],
      ['VADD', 'pts', 'VALUES', '-1', '1', 'e'],
      ['VADD', 'pts', 'e', 'x', 'y'],
      ['VDIM', 'nothing-here'],
    ]);
    // A new key takes the dimension of an index: none has 2 here, and the error names the flag.
    expect(newKey).toBe(
      "-ERR no vector index of dimension 2 for the new key: this side port's indexes have 3 dimensions; add an index of 2 dimensions with --vector-index\r\n",
    );
    expect(first).toBe(':1\r\n');
    // Redis 8.8.0's texts (recorded), byte for byte.
    expect(dim).toBe('-ERR Vector dimension mismatch - got 2 but set has 3\r\n');
    expect(reduce).toBe('-ERR cannot add projection to existing set without projection\r\n');
    expect(notNum).toBe('-ERR invalid vector specification\r\n');
    expect(blob).toBe('-ERR invalid vector specification\r\n');
    expect(missingEl).toBe("-ERR wrong number of arguments for 'VADD' command\r\n");
    expect(unknown).toBe('-ERR invalid option after element\r\n');
    expect(count).toBe('-ERR invalid vector specification\r\n');
    expect(noVector).toBe('-ERR invalid vector specification\r\n');
    expect(vdim).toBe('-ERR key does not exist\r\n');
    expect(await io.call('VCARD', 'pts')).toBe(1);
    const [arity] = await rawText(ports.dense.port, [['VCARD']]);
    expect(arity).toBe("-ERR wrong number of arguments for 'VCARD' command\r\n");
  });
});

describe('pipelines', () => {
  it('a pipeline sees its own writes in order; VADDs in a row run as one batch with per-request answers', async () => {
    const p = io.pipeline();
    p.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a', 'SETATTR', '{"v":1}');
    p.call('VADD', 'pts', 'VALUES', '3', '0', '1', '0', 'b');
    p.call('VADD', 'pts', 'VALUES', '2', '1', '0', 'bad');
    p.call('VADD', 'pts', 'VALUES', '3', '0', '0', '1', 'a');
    p.call('VADD', 'pts', 'VALUES', '3', '1', 'x', '0', 'worse');
    p.call('VADD', 'movies', 'VALUES', '3', '1', '1', '1', 'm');
    p.call('VCARD', 'pts');
    p.call('VEMB', 'pts', 'a');
    p.call('VGETATTR', 'pts', 'a');
    p.call('VSIM', 'pts', 'VALUES', '3', '0', '0', '1', 'COUNT', '1');
    p.call('VREM', 'pts', 'a');
    p.call('VISMEMBER', 'pts', 'a');
    const out = (await p.exec())!;
    expect(out.slice(0, 2)).toEqual([
      [null, 1],
      [null, 1],
    ]);
    expect((out[2][0] as Error).message).toMatch(/Vector dimension mismatch - got 2 but set has 3/);
    expect(out[3]).toEqual([null, 0]);
    expect((out[4][0] as Error).message).toMatch(/invalid vector specification/);
    expect(out.slice(5).map(([, v]) => v)).toEqual([1, 2, ['0', '0', '1'], '{"v":1}', ['a'], 1, 0]);
    expect(await io.call('VCARD', 'movies')).toBe(1);
  });
});

describe('VSIM', () => {
  it('returns names by similarity; WITHSCORES as RESP2 flat pairs and a RESP3 map of doubles', async () => {
    await points();
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0')).toEqual(['a', 'c', 'b']);
    const flat = (await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'WITHSCORES', 'COUNT', '2')) as string[];
    expect(flat[0]).toBe('a');
    expect(Number(flat[1])).toBeCloseTo(1, 6);
    expect(flat[2]).toBe('c');
    const cos = 0.9 / Math.hypot(0.9, 0.1);
    expect(Number(flat[3])).toBeCloseTo((1 + cos) / 2, 5);
    const m = (await io3.withTypeMapping({ [RESP_TYPES.MAP]: Map }).sendCommand(['VSIM', 'pts', 'ELE', 'b', 'WITHSCORES'])) as Map<
      string,
      number
    >;
    expect([...m.keys()]).toEqual(['b', 'c', 'a']);
    expect(m.get('b')).toBeCloseTo(1, 6);
    expect(m.get('a')).toBeCloseTo(0.5, 6);
  });

  it('WITHATTRIBS and FILTER (Redis syntax, evaluated here) and WHERE (service syntax)', async () => {
    await io.call('VADD', 'movies', 'VALUES', '3', '1', '0', '0', 'm1', 'SETATTR', '{"year":1950,"genre":"drama"}');
    await io.call('VADD', 'movies', 'VALUES', '3', '1', '0.1', '0', 'm2', 'SETATTR', '{"year":1999,"genre":"drama"}');
    await io.call('VADD', 'movies', 'VALUES', '3', '1', '0.2', '0', 'm3', 'SETATTR', '{"year":2001,"genre":"action"}');
    const q = ['VSIM', 'movies', 'VALUES', '3', '1', '0', '0'];
    expect(await io.call(...(q as [string]), 'FILTER', '.year > 1960 and .genre == "drama"')).toEqual(['m2']);
    expect(await io.call(...(q as [string]), 'FILTER', '.genre in ["action", "comedy"] || .year < 1951')).toEqual(['m1', 'm3']);
    expect(await io.call(...(q as [string]), 'WHERE', "year >= 1999 AND genre != 'action'")).toEqual(['m2']);
    expect(await io.call(...(q as [string]), 'COUNT', '1', 'WITHATTRIBS')).toEqual(['m1', '{"year":1950,"genre":"drama"}']);
    const both = (await io3
      .withTypeMapping({ [RESP_TYPES.MAP]: Map })
      .sendCommand([...q, 'COUNT', '1', 'WITHSCORES', 'WITHATTRIBS'])) as Map<string, [number, string]>;
    expect(both.get('m1')![0]).toBeCloseTo(1, 6);
    expect(JSON.parse(both.get('m1')![1])).toEqual({ year: 1950, genre: 'drama' });
    expect(await io.call(...(q as [string]), 'FILTER', '.year + 1 > 2000')).toEqual(['m3']);
    await expect(io.call(...(q as [string]), 'WHERE', 'year >>> 3')).rejects.toThrow(/vector service error \(HTTP 4\d\d\)/);
    // Both: WHERE goes to the service, FILTER is evaluated on what comes back.
    expect(await io.call(...(q as [string]), 'FILTER', '.year > 1960', 'WHERE', "genre = 'drama'")).toEqual(['m2']);
  });
});

describe('FILTER: the whole expression language of Redis 8', () => {
  const q = ['VSIM', 'movies', 'VALUES', '3', '1', '0', '0'] as const;
  beforeEach(async () => {
    await io.call(
      'VADD',
      'movies',
      'VALUES',
      '3',
      '1',
      '0',
      '0',
      'm1',
      'SETATTR',
      '{"year":1950,"genre":"drama","tags":["old","bw"],"rating":8.0,"seen":true}',
    );
    await io.call(
      'VADD',
      'movies',
      'VALUES',
      '3',
      '1',
      '0.1',
      '0',
      'm2',
      'SETATTR',
      '{"year":1999,"genre":"drama","tags":["new"],"rating":6.5,"seen":false}',
    );
    await io.call(
      'VADD',
      'movies',
      'VALUES',
      '3',
      '1',
      '0.2',
      '0',
      'm3',
      'SETATTR',
      '{"year":2001,"genre":"action","tags":[],"rating":null}',
    );
    await io.call('VADD', 'movies', 'VALUES', '3', '1', '0.3', '0', 'm4');
  });

  it.each<[string, string[]]>([
    // Answers as Redis 8.8.0 gives them for these attributes (see vector-filter.test.ts for the engine's fixtures).
    ['(.year - 1900) / 10 >= 9.9', ['m2', 'm3']],
    ['.year % 2 == 0 or .rating ** 2 > 60', ['m1']],
    ['!(.genre == "drama")', ['m3']],
    ['not .seen', ['m2']],
    ['.seen', ['m1']],
    ['"ram" in .genre', ['m1', 'm2']],
    ['"x" in .genre', []],
    ['"new" in .tags', ['m2']],
    ['.rating == null', ['m3']],
    ['.rating', ['m1', 'm2']],
    ['.genre in ["action", "comedy"] || .year < 1951', ['m1', 'm3']],
    ['.missing == 1 or 1', []],
    ['1', ['m1', 'm2', 'm3']],
  ])('FILTER %s → %j', async (expr, want) => {
    expect(await io.call(...q, 'FILTER', expr)).toEqual(want);
  });

  it('syntax errors have Redis texts, byte for byte', async () => {
    const replies = await rawText(ports.dense.port, [
      [...q, 'FILTER', '.year === 1950'],
      [...q, 'FILTER', '(.year > 1'],
      [...q, 'FILTER', '.year == true'],
      [...q, 'FILTER', ''],
    ]);
    expect(replies).toEqual([
      '-ERR syntax error in FILTER expression near:  1950\r\n',
      '-ERR syntax error in FILTER expression near: (.year > 1\r\n',
      '-ERR syntax error in FILTER expression near: .year == true\r\n',
      '-ERR syntax error in FILTER expression near: \r\n',
    ]);
  });

  it('a second FILTER replaces the first, as in Redis', async () => {
    expect(await io.call(...q, 'FILTER', '.year == 1950', 'FILTER', '.year == 2001')).toEqual(['m3']);
  });

  it('looks past the COUNT nearest: up to COUNT * 100 candidates, or FILTER-EF', async () => {
    const p = io.pipeline();
    for (let i = 0; i < 40; i++) p.call('VADD', 'far', 'VALUES', '3', '1', String(i / 10), '0', `e${i}`, 'SETATTR', `{"i":${i}}`);
    await p.exec();
    const near = ['VSIM', 'far', 'VALUES', '3', '1', '0', '0', 'COUNT', '2'];
    expect(await io.call(...(near as [string]), 'FILTER', '.i >= 30')).toEqual(['e30', 'e31']);
    expect(await io.call(...(near as [string]), 'FILTER', '.i >= 30', 'FILTER-EF', '10')).toEqual([]);
    expect(await io.call(...(near as [string]), 'FILTER', '.i % 10 == 5', 'WITHSCORES')).toHaveLength(4);
    await io.call('DEL', 'far');
  });

  it('VREMBY FILTER removes the elements the expression matches', async () => {
    expect(await io.call('VREMBY', 'movies', 'FILTER', '.year * 1 < 2000 and "dram" in .genre')).toBe(2);
    expect(await io.call('VSIM', ...q.slice(1))).toEqual(['m3', 'm4']);
    await expect(io.call('VREMBY', 'movies', 'FILTER', '.year =')).rejects.toThrow('ERR syntax error in FILTER expression near: ');
  });

  it('EPSILON keeps only close elements; errors for a missing ELE, bad COUNT and unknown options', async () => {
    await points();
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'EPSILON', '0.01')).toEqual(['a', 'c']);
    await expect(io.call('VSIM', 'pts', 'ELE', 'ghost')).rejects.toThrow(/ERR element not found in set/);
    expect(await io.call('VSIM', 'never', 'ELE', 'ghost')).toEqual([]);
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'EPSILON', '1.5')).toEqual(['a', 'c', 'b']);
    expect(await io.call('VSIM', 'pts', 'ELE', 'a', 'COUNT', '5000')).toEqual(['a', 'c', 'b']);
    // Redis 8's texts (recorded from Redis 8.8.0).
    const errors = await rawText(ports.dense.port, [
      ['VSIM', 'pts', 'ELE', 'a', 'COUNT', '0'],
      ['VSIM', 'pts', 'ELE', 'a', 'COUNT', 'x'],
      ['VSIM', 'pts', 'ELE', 'a', 'SORTED'],
      ['VSIM', 'pts', 'ELE', 'a', 'COUNT'],
      ['VSIM', 'pts', 'ELE', 'a', 'EPSILON', '0'],
      ['VSIM', 'pts', 'ELE', 'a', 'EF', '0'],
      ['VSIM', 'pts', 'ELE', 'a', 'FILTER-EF', '-1'],
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a', 'EF', '0'],
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a', 'M', '2'],
      ['VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a', 'SETATTR'],
      ['VEMB', 'pts', 'a', 'RAWX'],
      // A missing key answers an empty array before its options are read, as in Redis.
      ['VSIM', 'never', 'ELE', 'a', 'COUNT', '0'],
      ['VSIM', 'never', 'VALUES', '3', '1', '0', '0', 'FILTER', '(('],
    ]);
    expect(errors).toEqual([
      '-ERR invalid COUNT\r\n',
      '-ERR invalid COUNT\r\n',
      '-ERR syntax error in VSIM command\r\n',
      '-ERR syntax error in VSIM command\r\n',
      '-ERR invalid EPSILON\r\n',
      '-ERR invalid EF\r\n',
      '-ERR invalid FILTER-EF\r\n',
      '-ERR invalid EF\r\n',
      '-ERR invalid M\r\n',
      '-ERR invalid option after element\r\n',
      '-ERR invalid option\r\n',
      '*0\r\n',
      '*0\r\n',
    ]);
    await expect(io.call('VSIM', 'pts', 'VALUES', '2', '1', '0')).rejects.toThrow(/Vector dimension mismatch - got 2 but set has 3/);
  });
});

describe('attributes', () => {
  it('VSETATTR/VGETATTR round-trip; "" removes them; VADD without SETATTR keeps them', async () => {
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a', 'SETATTR', '{"k":1}');
    expect(await io.call('VGETATTR', 'pts', 'a')).toBe('{"k":1}');
    await io.call('VADD', 'pts', 'VALUES', '3', '0', '1', '0', 'a');
    expect(await io.call('VGETATTR', 'pts', 'a')).toBe('{"k":1}');
    expect(await io.call('VSETATTR', 'pts', 'a', '{"k":2,"tags":["x"]}')).toBe(1);
    expect(await io.call('VGETATTR', 'pts', 'a')).toBe('{"k":2,"tags":["x"]}');
    expect(await io.call('VSETATTR', 'pts', 'a', '')).toBe(1);
    expect(await io.call('VGETATTR', 'pts', 'a')).toBeNull();
    expect(await io.call('VSETATTR', 'pts', 'ghost', '{"k":1}')).toBe(0);
    expect(await io.call('VGETATTR', 'pts', 'ghost')).toBeNull();
  });

  it('are kept byte for byte, JSON or not, and returned unchanged by every command', async () => {
    const texts = ['{"rating": 8.0}', '{ "a" :1,"a":2 }', '{bad', '[1,2]', '"just a string"', 'plain text', '{"é": "ü\\n"}'];
    for (const [i, t] of texts.entries()) {
      await io.call('VADD', 'pts', 'VALUES', '3', '1', String(i), '0', `e${i}`, 'SETATTR', t);
      expect(await io.call('VGETATTR', 'pts', `e${i}`)).toBe(t);
    }
    const flat = (await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'COUNT', '20', 'WITHATTRIBS')) as string[];
    expect(obj(flat)).toEqual(Object.fromEntries(texts.map((t, i) => [`e${i}`, t])));
    const [, page] = (await io.call('VSCAN', 'pts', '0', 'COUNT', '100', 'WITHATTRIBS')) as [string, string[]];
    expect(obj(page)).toEqual(Object.fromEntries(texts.map((t, i) => [`e${i}`, t])));
    const [rec] = (await io.call('VFETCH', 'pts', 'IDS', '1', 'e0', 'WITHATTRIBS')) as unknown[];
    expect(obj(rec).attributes).toBe('{"rating": 8.0}');
    expect(await io.call('VSETATTR', 'pts', 'e1', '{"rating":8}')).toBe(1);
    expect(await io.call('VGETATTR', 'pts', 'e1')).toBe('{"rating":8}');
    // FILTER reads the text as Redis does: the first of two equal keys, nothing from text that is not an object.
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'FILTER', '.a == 1')).toEqual([]);
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'FILTER', '.rating == 8')).toEqual(['e0', 'e1']);
    // WHERE (the service) sees the fields of JSON objects.
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'WHERE', 'rating = 8')).toEqual(['e0', 'e1']);
  });

  it('SETATTR "" stores the empty string on a new element and removes the attributes of an existing one (as Redis 8)', async () => {
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'new', 'SETATTR', '');
    expect(await io.call('VGETATTR', 'pts', 'new')).toBe('');
    // An empty attribute string is attributes all the same: an expression without selectors matches it.
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0', 'FILTER', '1')).toEqual(['new']);
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'old', 'SETATTR', '{"k":1}');
    expect(await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'old', 'SETATTR', '')).toBe(0);
    expect(await io.call('VGETATTR', 'pts', 'old')).toBeNull();
    const p = io.pipeline();
    p.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'twice', 'SETATTR', '');
    p.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'twice', 'SETATTR', '');
    p.call('VGETATTR', 'pts', 'twice');
    expect((await p.exec())!.map(([, v]) => v)).toEqual([1, 0, null]);
  });

  it('refuses attribute bytes that are not UTF-8 (the service keeps them in JSON)', async () => {
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'a');
    await expect(io.call('VSETATTR', 'pts', 'a', Buffer.from([0xff, 0x7b]))).rejects.toThrow(
      /ERR the attribute string must be valid UTF-8/,
    );
  });
});

describe('VREM, VREMBY, VSCAN, VFETCH, VRANDMEMBER, VINFO, DEL, KEYS', () => {
  it('removes one element, or by prefix and filter', async () => {
    await points();
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '1', '1', 'doc:1', 'SETATTR', '{"n":1}');
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '1', '0', 'doc:2', 'SETATTR', '{"n":2}');
    expect(await io.call('VREM', 'pts', 'a')).toBe(1);
    expect(await io.call('VREM', 'pts', 'a')).toBe(0);
    expect(await io.call('VREMBY', 'pts', 'FILTER', '.n == 2')).toBe(1);
    expect(await io.call('VREMBY', 'pts', 'PREFIX', 'doc:')).toBe(1);
    expect(await io.call('VCARD', 'pts')).toBe(2);
    await expect(io.call('VREMBY', 'pts', 'ALL', 'x')).rejects.toThrow(/unknown option 'ALL' for VREMBY/);
  });

  it('VSCAN walks a namespace with a cursor until 0, with PREFIX and WITHATTRIBS', async () => {
    for (let i = 0; i < 7; i++) await io.call('VADD', 'pts', 'VALUES', '3', '1', String(i), '0', `e${i}`, 'SETATTR', `{"i":${i}}`);
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'other');
    const seen: string[] = [];
    let cursor = '0';
    let pages = 0;
    do {
      const [next, items] = (await io.call('VSCAN', 'pts', cursor, 'COUNT', '3')) as [string, string[]];
      seen.push(...items);
      cursor = next;
      pages++;
    } while (cursor !== '0' && pages < 10);
    expect(seen.sort()).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'other']);
    expect(pages).toBe(3);
    const [end, withAttrs] = (await io.call('VSCAN', 'pts', '0', 'PREFIX', 'e', 'COUNT', '100', 'WITHATTRIBS')) as [string, string[]];
    expect(end).toBe('0');
    expect(withAttrs).toHaveLength(14);
    expect(JSON.parse(withAttrs[withAttrs.indexOf('e3') + 1])).toEqual({ i: 3 });
    await expect(io.call('VSCAN', 'pts', 'abc')).rejects.toThrow(/ERR invalid cursor/);
  });

  it('VFETCH by ids (null for absent) and by prefix', async () => {
    await points();
    await io.call('VSETATTR', 'pts', 'a', '{"x":1}');
    const [a, none] = (await io.call('VFETCH', 'pts', 'IDS', '2', 'a', 'zz', 'WITHATTRIBS', 'WITHVECTORS')) as unknown[];
    expect(obj(a)).toEqual({ id: 'a', vector: ['1', '0', '0'], attributes: '{"x":1}' });
    expect(none).toBeNull();
    const byPrefix = (await io.call('VFETCH', 'pts', 'PREFIX', 'c')) as unknown[];
    expect(byPrefix.map((r) => obj(r).id)).toEqual(['c']);
    await expect(io.call('VFETCH', 'pts', 'WITHVECTORS', 'WITHDATA')).rejects.toThrow(/VFETCH needs IDS count id … or PREFIX prefix/);
  });

  it('VRANDMEMBER: one, distinct with a positive count, repeats allowed with a negative count', async () => {
    await points();
    expect(['a', 'b', 'c']).toContain(await io.call('VRANDMEMBER', 'pts'));
    expect(((await io.call('VRANDMEMBER', 'pts', '10')) as string[]).sort()).toEqual(['a', 'b', 'c']);
    const two = (await io.call('VRANDMEMBER', 'pts', '2')) as string[];
    expect(new Set(two).size).toBe(2);
    expect(await io.call('VRANDMEMBER', 'pts', '-5')).toHaveLength(5);
    expect(await io.call('VRANDMEMBER', 'empty')).toBeNull();
    expect(await io.call('VRANDMEMBER', 'pts', '0')).toEqual([]);
  });

  it('VINFO has Redis 8 fields (null array for a missing key); VSERVICE the index; DEL and KEYS work on namespaces', async () => {
    await points();
    await io.call('VSETATTR', 'pts', 'b', 'x');
    await io.call('VADD', 'movies', 'VALUES', '3', '1', '0', '0', 'm');
    const info = obj(await io.call('VINFO', 'pts'));
    expect(info).toEqual({
      'quant-type': 'int8',
      'hnsw-m': 16,
      'vector-dim': 3,
      'projection-input-dim': 0,
      size: 3,
      'max-level': 0,
      'attributes-count': 1,
      'vset-uid': 0,
      'hnsw-max-node-uid': 3,
    });
    const [raw2, missing2] = await rawText(ports.dense.port, [
      ['VINFO', 'pts'],
      ['VINFO', 'nothing'],
    ]);
    expect(raw2).toMatch(/^\*18\r\n\+quant-type\r\n\+int8\r\n\+hnsw-m\r\n:16\r\n\+vector-dim\r\n:3\r\n/);
    expect(missing2).toBe('*-1\r\n');
    expect(await io3.sendCommand(['VINFO', 'nothing'])).toBeNull();
    const service = obj(await io.call('VSERVICE', 'pts'));
    expect(service).toMatchObject({ 'vector-dim': 3, size: 3, 'index-type': 'DENSE', 'similarity-function': 'COSINE' });
    expect(await io.call('VSERVICE', 'nothing')).toBeNull();
    expect(((await io.call('KEYS', '*')) as string[]).sort()).toEqual(expect.arrayContaining(['movies', 'pts']));
    expect(await io.call('KEYS', 'mov*')).toEqual(['movies']);
    expect(await io.call('DEL', 'pts', 'movies', 'never')).toBe(2);
    expect(await io.call('VCARD', 'pts')).toBe(0);
  });

  it('a set is a key while it has elements: EXISTS, TYPE, KEYS, VINFO; VREM of the last element removes it', async () => {
    await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'only');
    expect(await io.call('EXISTS', 'pts', 'pts', 'never')).toBe(2);
    expect(await io.call('TYPE', 'pts')).toBe('vectorset');
    expect(await io.call('TYPE', 'never')).toBe('none');
    expect(await io.call('KEYS', 'pt*')).toEqual(['pts']);
    expect(await io.call('VREM', 'pts', 'only')).toBe(1);
    expect(await io.call('EXISTS', 'pts')).toBe(0);
    expect(await io.call('TYPE', 'pts')).toBe('none');
    expect(await io.call('KEYS', 'pt*')).toEqual([]);
    expect(await io.call('VINFO', 'pts')).toBeNull();
    await expect(io.call('VDIM', 'pts')).rejects.toThrow('ERR key does not exist');
    expect(await io.call('DEL', 'pts')).toBe(0);
  });

  it('VLINKS: one level of the nearest elements, WITHSCORES as similarities; null when missing', async () => {
    await points();
    expect(await io.call('VLINKS', 'pts', 'a')).toEqual([['c', 'b']]);
    const [level] = (await io.call('VLINKS', 'pts', 'a', 'WITHSCORES')) as string[][];
    expect(level[0]).toBe('c');
    expect(Number(level[1])).toBeCloseTo((1 + 0.9 / Math.hypot(0.9, 0.1)) / 2, 6);
    expect(Number(level[3])).toBeCloseTo(0.5, 6);
    const m = (await io3.withTypeMapping({ [RESP_TYPES.MAP]: Map }).sendCommand(['VLINKS', 'pts', 'a', 'WITHSCORES'])) as Map<
      string,
      number
    >[];
    expect([...m[0].keys()]).toEqual(['c', 'b']);
    const [none, noKey, bad] = await rawText(ports.dense.port, [
      ['VLINKS', 'pts', 'ghost'],
      ['VLINKS', 'never', 'a'],
      ['VLINKS', 'pts', 'a', 'WITHSCORE'],
    ]);
    expect([none, noKey]).toEqual(['$-1\r\n', '$-1\r\n']);
    expect(bad).toBe("-ERR wrong number of arguments for 'VLINKS' command\r\n");
  });
});

describe('extensions: text (DATA), sparse, hybrid', () => {
  it('DATA embeds text on an index with an embedding model, VSIM DATA queries it, WITHDATA returns it', async () => {
    expect(await text.call('VADD', 'docs', 'DATA', 'the quick brown fox', 'fox')).toBe(1);
    await text.call('VADD', 'docs', 'DATA', 'a slow green turtle', 'turtle');
    const r = (await text.call('VSIM', 'docs', 'DATA', 'quick fox', 'WITHDATA', 'COUNT', '1')) as string[];
    expect(r).toEqual(['fox', 'the quick brown fox']);
    await expect(io.call('VADD', 'pts', 'DATA', 'hello', 'h')).rejects.toThrow(
      /vector service error \(HTTP 422\): Embedding data for this index is not allowed/,
    );
    await expect(text.call('VSIM', 'docs', 'VALUES', '2', '1', '0', 'QUERYMODE', 'DENSE')).rejects.toThrow(
      /QUERYMODE applies to text queries only/,
    );
  });

  it('SPARSE vectors on a sparse index; VEMB shows indices and values', async () => {
    expect(await sparse.call('VADD', 'sp', 'SPARSE', '2', '1', '0.5', '7', '0.25', 's1')).toBe(1);
    await sparse.call('VADD', 'sp', 'SPARSE', '1', '3', '1', 's2');
    expect(await sparse.call('VSIM', 'sp', 'SPARSE', '1', '7', '2', 'WITHSCORES')).toEqual(['s1', '0.5']);
    expect(obj(await sparse.call('VEMB', 'sp', 's1'))).toEqual({ indices: [1, 7], values: ['0.5', '0.25'] });
    await expect(sparse.call('VDIM', 'sp')).rejects.toThrow(/the index is sparse/);
    await expect(sparse.call('VADD', 'sp', 'SPARSE', '1', '-3', '1', 's3')).rejects.toThrow(
      /a sparse index is a whole number from 0 to 2147483647/,
    );
  });

  it('hybrid: VALUES plus SPARSE in one VADD and one VSIM, with a fusion algorithm', async () => {
    await hybrid.call('VADD', 'h', 'VALUES', '2', '1', '0', 'SPARSE', '1', '5', '1', 'h1');
    await hybrid.call('VADD', 'h', 'VALUES', '2', '0', '1', 'SPARSE', '1', '6', '1', 'h2');
    expect(await hybrid.call('VSIM', 'h', 'VALUES', '2', '1', '0', 'SPARSE', '1', '5', '1')).toEqual(['h1', 'h2']);
    expect(await hybrid.call('VSIM', 'h', 'VALUES', '2', '0', '1', 'SPARSE', '1', '6', '1', 'FUSION', 'DBSF', 'COUNT', '1')).toEqual([
      'h2',
    ]);
    await expect(hybrid.call('VSIM', 'h', 'VALUES', '2', '0', '1', 'FUSION', 'MAX')).rejects.toThrow(/FUSION must be one of RRF, DBSF/);
  });
});

describe('names and upstream faults', () => {
  it('element names are any bytes, as in Redis: UTF-8 names are their own ids, others are stored encoded', async () => {
    expect(await io.call('VADD', 'pts', 'VALUES', '3', '1', '0', '0', 'caf\u00e9 \u2603')).toBe(1);
    expect(await io.call('VSIM', 'pts', 'VALUES', '3', '1', '0', '0')).toEqual(['caf\u00e9 \u2603']);
    const odd = [Buffer.from([0xff, 0xfe]), Buffer.alloc(0), Buffer.from('\uE000abc')];
    for (const [i, name] of odd.entries()) expect(await io.call('VADD', 'pts', 'VALUES', '3', '0', '1', String(i), name)).toBe(1);
    const names = (await io.callBuffer('VRANGE', 'pts', '-', '+')) as Buffer[];
    expect(names.map((b) => b.toString('hex'))).toEqual(
      [...odd, Buffer.from('caf\u00e9 \u2603')]
        .map((b) => b.toString('hex'))
        .sort((a, b) => Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))),
    );
    for (const name of odd) expect(await io.call('VISMEMBER', 'pts', name)).toBe(1);
    expect(await io.call('VISMEMBER', 'pts', Buffer.from([0xff]))).toBe(0);
    // What REST clients of the index see: U+E000 and the name's bytes in hex.
    const rest = new VectorClient({ url: `${platform.url}/vector/dense`, token: platform.token });
    const ids = (await rest.fetch('pts', { ids: ['\uE000fffe', '\uE000', '\uE000ee8080616263'] })).map((r) => r?.id);
    await rest.close();
    expect(ids).toEqual(['\uE000fffe', '\uE000', '\uE000ee8080616263']);
    for (const name of odd) expect(await io.call('VREM', 'pts', name)).toBe(1);
    await expect(io.call('VCARD', Buffer.from([0xc3]))).rejects.toThrow(/ERR the key \(namespace\) must be valid UTF-8/);
  });

  it('an unreachable index gives a bounded, clear error per command and the port keeps serving', async () => {
    const dead = await vectorPort({ url: 'http://127.0.0.1:1/vector/dense', token: 'secret-token-value', timeoutMs: 1000 });
    const c = new IORedis({ port: dead.port });
    try {
      const err = await c.call('VCARD', 'x').catch((e: Error) => e.message);
      expect(err).toMatch(
        /^ERR vector service unavailable: http:\/\/127\.0\.0\.1:1 unreachable: ECONNREFUSED; the command was not confirmed/,
      );
      expect(err).not.toContain('secret-token-value');
      expect(await c.ping()).toBe('PONG');
    } finally {
      c.disconnect();
      await dead.stop();
    }
  });

  it('a slow index past --upstream-timeout gives an error naming the limit', async () => {
    const http = await import('node:http');
    const slow = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(slow.address() as { port: number }).port}/vector/dense`;
    const p = await vectorPort({ url, token: 't', timeoutMs: 300 });
    const c = new IORedis({ port: p.port });
    try {
      await expect(c.call('VCARD', 'x')).rejects.toThrow(/unavailable: .* no answer within 300 ms/);
    } finally {
      c.disconnect();
      await p.stop();
      slow.closeAllConnections();
      slow.close();
    }
  });
});

describe('redis-cli', () => {
  it('adds and searches with redis-cli', async () => {
    expect((await redisCli(ports.dense.port, ['VADD', 'cli', 'VALUES', '3', '1', '0', '0', 'one'])).trim()).toBe('1');
    expect(await redisCli(ports.dense.port, ['VSIM', 'cli', 'ELE', 'one', 'WITHSCORES'])).toBe('one\n1\n');
    await io.call('DEL', 'cli');
  });
});
