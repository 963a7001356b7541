// Commands newer than Redis 7.0.15 that @upstash/redis exposes, and the real service's leniencies the
// SDK's own tests show, through the official SDK against the local platform (src/platform/kv/compat.ts).
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let redis: Redis;
beforeAll(async () => {
  p = await startTestPlatform();
  redis = new Redis({ url: p.url, token: p.token, enableTelemetry: false });
});
afterAll(async () => {
  await p?.stop();
});

describe('commands newer than Redis 7.0.15, emulated atomically', () => {
  it('HGETDEL returns the values and deletes the fields (the key with the last one)', async () => {
    await redis.hset('c:h', { a: 'v1', b: 'v2', c: 'v3' });
    expect(await redis.hgetdel('c:h', 'a', 'nope')).toEqual({ a: 'v1', nope: null });
    expect(await redis.hgetall('c:h')).toEqual({ b: 'v2', c: 'v3' });
    expect(await redis.hgetdel('c:h', 'b', 'c')).toEqual({ b: 'v2', c: 'v3' });
    expect(await redis.exists('c:h')).toBe(0);
    expect((await command(p, ['HGETDEL', 'c:h', 'FIELDS', '2', 'a'])).json).toEqual({
      error: 'ERR The `numfields` parameter must match the number of arguments',
    });
    expect((await command(p, ['HGETDEL', 'c:h', 'FILDS', '1', 'a'])).json).toEqual({
      error: 'ERR Mandatory argument FIELDS is missing or not at the right position',
    });
  });

  it('HSETEX and HGETEX, with and without a field TTL (emulated: kv-hash-field-expiry.test.ts)', async () => {
    expect(await redis.hsetex('c:hx', { conditional: 'FNX' }, { a: 'v1', b: 'v2' })).toBe(1);
    expect(await redis.hsetex('c:hx', { conditional: 'FNX' }, { a: 'v9' })).toBe(0);
    expect(await redis.hsetex('c:hx', { conditional: 'FXX' }, { a: 'v5', z: 'v1' })).toBe(0);
    expect(await redis.hsetex('c:hx', { conditional: 'FXX' }, { a: 'v5' })).toBe(1);
    expect(await redis.hgetex('c:hx', { persist: true }, 'a', 'b')).toEqual({ a: 'v5', b: 'v2' });
    expect((await command(p, ['HSETEX', 'c:hx', 'EX', '10', 'FIELDS', '1', 'a', '1'])).json).toEqual({ result: 1 });
    expect((await command(p, ['HTTL', 'c:hx', 'FIELDS', '2', 'a', 'b'])).json).toEqual({ result: [10, -1] });
    expect(await redis.hgetex('c:hx', { persist: true }, 'a')).toEqual({ a: 1 }); // the SDK parses numbers
    expect((await command(p, ['HEXPIRE', 'c:hx', '10', 'FIELDS', '1', 'a'])).json).toEqual({ result: [1] });
    // Inside /multi-exec the emulation cannot run: the error says what is needed.
    const tx = await kv(p, '/multi-exec', { body: JSON.stringify([['HSETEX', 'c:hx', 'EX', '10', 'FIELDS', '1', 'a', '1']]) });
    expect(tx.json.error).toMatch(/^ERR 'hsetex' needs hash-field expiration \(Redis 8\.0\+\).*--redis-server/);
  });

  it('BITOP DIFF, DIFF1, ANDOR and ONE', async () => {
    await redis.set('c:x', 'x'); // 0x78
    await redis.set('c:y1', 'a'); // 0x61
    await redis.set('c:y2', 'B'); // 0x42
    const byte = async (k: string) => (await kv(p, `/get/${k}`, { headers: { 'Upstash-Encoding': 'base64' } })).json.result;
    const b64 = (n: number) => Buffer.from([n]).toString('base64');
    expect(await redis.bitop('diff', 'c:d', 'c:x', 'c:y1', 'c:y2')).toBe(1);
    expect(await byte('c:d')).toBe(b64(0x78 & ~(0x61 | 0x42) & 0xff));
    expect(await redis.bitop('diff1', 'c:d1', 'c:x', 'c:y1', 'c:y2')).toBe(1);
    expect(await byte('c:d1')).toBe(b64(~0x78 & 0xff & (0x61 | 0x42)));
    expect(await redis.bitop('andor', 'c:ao', 'c:x', 'c:y1', 'c:y2')).toBe(1);
    expect(await byte('c:ao')).toBe(b64(0x78 & (0x61 | 0x42)));
    expect(await redis.bitop('one', 'c:one', 'c:x', 'c:y1', 'c:y2')).toBe(1);
    expect(await byte('c:one')).toBe(b64((0x78 ^ 0x61 ^ 0x42) & ~((0x78 & 0x61) | (0x78 & 0x42) | (0x61 & 0x42)) & 0xff));
    expect((await command(p, ['BITOP', 'DIFF', 'c:d', 'c:x'])).json).toEqual({
      error: 'ERR BITOP DIFF must be called with at least two source keys.',
    });
  });

  it('XDELEX and XACKDEL with KEEPREF, DELREF and ACKED', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 4; i++) ids.push((await redis.xadd('c:s', `1-${i}`, { n: String(i) })) as string);
    await redis.xgroup('c:s', { type: 'CREATE', group: 'g', id: '0' });
    await redis.xreadgroup('g', 'c1', 'c:s', '>', { count: 2 }); // 1-1 and 1-2 pending in g; 1-3, 1-4 never delivered
    expect(await redis.xdelex('c:s', 'ACKED', '1-1', '1-3', '9-9')).toEqual([2, 2, -1]);
    expect(await redis.xackdel('c:s', 'g', 'ACKED', '1-1')).toEqual([1]);
    expect(await redis.xdelex('c:s', 'KEEPREF', '1-4')).toEqual([1]);
    expect(await redis.xackdel('c:s', 'g', 'DELREF', '1-2')).toEqual([1]);
    expect(await redis.xlen('c:s')).toBe(1);
    expect((await command(p, ['XPENDING', 'c:s', 'g'])).json.result[0]).toBe(0);
  });
});

describe('the real service’s leniencies (as the SDK’s tests show them)', () => {
  it('COPY of a key onto itself answers NOT_COPIED instead of an error', async () => {
    await redis.set('c:same', 'v');
    expect(await redis.copy('c:same', 'c:same')).toBe('NOT_COPIED');
    expect(await redis.copy('c:same', 'c:other')).toBe('COPIED');
  });

  it('XTRIM and XADD with ~ trim to the threshold, not to a whole stream node', async () => {
    const pipe = redis.pipeline();
    for (let i = 0; i < 300; i++) pipe.xadd('c:trim', '*', { i: String(i) });
    await pipe.exec();
    await redis.xtrim('c:trim', { strategy: 'MAXLEN', threshold: 30, exactness: '~' });
    expect(await redis.xlen('c:trim')).toBe(30);
    await redis.xadd('c:trim', '*', { i: 'x' }, { trim: { type: 'MAXLEN', threshold: 10, comparison: '~' } });
    expect(await redis.xlen('c:trim')).toBe(10);
    // With LIMIT, ~ is kept (Redis refuses LIMIT with =).
    expect((await command(p, ['XTRIM', 'c:trim', 'MAXLEN', '~', '5', 'LIMIT', '100'])).status).toBe(200);
  });

  it('SCAN … WITHTYPE answers each key with its type', async () => {
    await redis.set('c:wt:s', 'v');
    await redis.zadd('c:wt:z', { score: 1, member: 'm' });
    await command(p, ['JSON.SET', 'c:wt:j', '$', '{}']);
    const seen: { key: string; type: string }[] = [];
    let cursor = '0';
    do {
      const [next, items] = await redis.scan(cursor, { match: 'c:wt:*', withType: true });
      seen.push(...items);
      cursor = String(next);
    } while (cursor !== '0');
    expect(seen.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      { key: 'c:wt:j', type: 'ReJSON-RL' },
      { key: 'c:wt:s', type: 'string' },
      { key: 'c:wt:z', type: 'zset' },
    ]);
  });
});

describe('a newer data store runs its own commands', () => {
  it('emulates only what the data store lacks (redis_version from INFO)', async () => {
    const { compatPlan, parseServerVersion } = await import('../../src/platform/kv/compat.js');
    expect(parseServerVersion('# Server\r\nredis_version:8.2.1\r\n')).toEqual([8, 2, 1]);
    const hgetdel = ['HGETDEL', 'k', 'FIELDS', '1', 'a'];
    expect(compatPlan(hgetdel, [7, 0, 15])).toMatchObject({ command: expect.arrayContaining(['EVAL']) });
    expect(compatPlan(hgetdel, [8, 0, 0])).toBeUndefined();
    expect(compatPlan(['HEXPIRE', 'k', '10', 'FIELDS', '1', 'a'], [7, 4, 0])).toBeUndefined();
    expect(compatPlan(['BITOP', 'ONE', 'd', 'a'], [8, 0, 0])).toMatchObject({ command: expect.arrayContaining(['EVAL']) });
    expect(compatPlan(['BITOP', 'ONE', 'd', 'a'], [8, 2, 0])).toBeUndefined();
    // The leniencies stay: they are the real service's behaviour, not missing commands.
    expect(compatPlan(['COPY', 'a', 'a'], [8, 2, 0])).toMatchObject({ command: expect.arrayContaining(['EVAL']) });
  });
});

describe('XREADGROUP NOACK and FCALL_RO as the real service runs them', () => {
  it('XREADGROUP … NOACK delivers and leaves nothing behind: no pending entry, no consumer it created', async () => {
    await redis.xadd('c:nq', '1-1', { a: '1' });
    await redis.xadd('c:nq', '1-2', { a: '2' });
    await redis.xgroup('c:nq', { type: 'CREATE', group: 'g', id: '0' });
    const read = await command(p, ['XREADGROUP', 'GROUP', 'g', 'new', 'COUNT', '1', 'NOACK', 'STREAMS', 'c:nq', '>']);
    expect(read.json).toEqual({ result: [['c:nq', [['1-1', ['a', '1']]]]] });
    expect((await command(p, ['XINFO', 'CONSUMERS', 'c:nq', 'g'])).json).toEqual({ result: [] });
    expect((await command(p, ['XPENDING', 'c:nq', 'g'])).json.result[0]).toBe(0);
    // A consumer that existed before the NOACK read stays (only what the read created goes).
    await command(p, ['XGROUP', 'CREATECONSUMER', 'c:nq', 'g', 'old']);
    await command(p, ['XREADGROUP', 'GROUP', 'g', 'old', 'NOACK', 'STREAMS', 'c:nq', '>']);
    const consumers = (await command(p, ['XINFO', 'CONSUMERS', 'c:nq', 'g'])).json.result as unknown[][];
    expect(consumers.map((c) => [c[1], c[3]])).toEqual([['old', 0]]);
    // Without NOACK, Redis' own behaviour; errors are Redis' own; BLOCK is still refused.
    await command(p, ['XREADGROUP', 'GROUP', 'g', 'acks', 'STREAMS', 'c:nq', '0']);
    expect((await command(p, ['XREADGROUP', 'GROUP', 'nog', 'x', 'NOACK', 'STREAMS', 'c:nq', '>'])).json.error).toMatch(/^NOGROUP /);
    expect((await command(p, ['XREADGROUP', 'GROUP', 'g', 'x', 'NOACK', 'STREAMS', 'c:nq'])).json.error).toMatch(/^ERR Unbalanced/);
    expect((await command(p, ['XREADGROUP', 'GROUP', 'g', 'x', 'BLOCK', '10', 'NOACK', 'STREAMS', 'c:nq', '>'])).json.error).toMatch(
      /^ERR blocking command 'xreadgroup' is not supported over REST/,
    );
  });

  it('FCALL_RO runs any function read-only: reads work, writes fail as in a read-only script', async () => {
    const code = [
      '#!lua name=c_lib',
      "redis.register_function('c_get', function(keys) return redis.call('GET', keys[1]) end)",
      "redis.register_function{function_name='c_set', callback=function(keys, args) return redis.call('SET', keys[1], args[1]) end, description='writes'}",
      "redis.register_function{function_name='c_ro', callback=function(keys) return redis.call('STRLEN', keys[1]) end, flags={'no-writes'}}",
    ].join('\n');
    expect((await command(p, ['FUNCTION', 'LOAD', 'REPLACE', code])).json).toEqual({ result: 'c_lib' });
    await redis.set('c:fk', 'hello');
    expect((await command(p, ['FCALL_RO', 'c_get', '1', 'c:fk'])).json).toEqual({ result: 'hello' });
    expect(await redis.functions.callRo('c_get', ['c:fk'])).toBe('hello');
    expect((await command(p, ['FCALL_RO', 'c_ro', '1', 'c:fk'])).json).toEqual({ result: 5 });
    const write = await command(p, ['FCALL_RO', 'c_set', '1', 'c:fk', 'x']);
    expect(write.status).toBe(400);
    expect(write.json.error).toMatch(/Write commands are not allowed from read-only scripts/);
    expect(await redis.get('c:fk')).toBe('hello');
    // The Read Only token too; FCALL still writes; the temporary copy is never left behind.
    expect((await command(p, ['FCALL_RO', 'c_get', '1', 'c:fk'], { token: p.readonlyToken })).json).toEqual({ result: 'hello' });
    expect((await command(p, ['FCALL', 'c_set', '1', 'c:fk', 'x'])).json).toEqual({ result: 'OK' });
    const libs = (await command(p, ['FUNCTION', 'LIST'])).json.result as unknown[][];
    expect(libs.map((l) => l[1])).toEqual(['c_lib']);
    expect((await command(p, ['FCALL_RO', 'nosuch', '0'])).json.error).toBe('ERR Function not found');
  });
});
