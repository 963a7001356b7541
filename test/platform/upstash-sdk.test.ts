// The official @upstash/redis SDK, unchanged, against the local platform.
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let redis: Redis;
beforeAll(async () => {
  p = await startTestPlatform();
  redis = new Redis({ url: p.url, token: p.token, enableTelemetry: false });
});
afterAll(async () => {
  await p?.stop();
});

describe('@upstash/redis', () => {
  it('strings, with automatic JSON (de)serialisation', async () => {
    expect(await redis.set('sdk:s', 'hello')).toBe('OK');
    expect(await redis.get('sdk:s')).toBe('hello');
    await redis.set('sdk:obj', { a: 1, b: [true, 'x'] }, { ex: 100 });
    expect(await redis.get('sdk:obj')).toEqual({ a: 1, b: [true, 'x'] });
    expect(await redis.ttl('sdk:obj')).toBeGreaterThan(90);
    expect(await redis.incrby('sdk:n', 41)).toBe(41);
    expect(await redis.incr('sdk:n')).toBe(42);
    expect(await redis.mget('sdk:s', 'sdk:missing')).toEqual(['hello', null]);
    expect(await redis.getdel('sdk:s')).toBe('hello');
    expect(await redis.exists('sdk:s')).toBe(0);
  });

  it('hashes', async () => {
    expect(await redis.hset('sdk:h', { name: 'ada', year: 1815 })).toBe(2);
    expect(await redis.hget('sdk:h', 'name')).toBe('ada');
    expect(await redis.hgetall('sdk:h')).toEqual({ name: 'ada', year: 1815 });
    expect(await redis.hincrby('sdk:h', 'year', 1)).toBe(1816);
    expect((await redis.hkeys('sdk:h')).sort()).toEqual(['name', 'year']);
  });

  it('lists', async () => {
    expect(await redis.rpush('sdk:l', 'a', 'b', 'c')).toBe(3);
    expect(await redis.lrange('sdk:l', 0, -1)).toEqual(['a', 'b', 'c']);
    expect(await redis.lpop('sdk:l')).toBe('a');
    expect(await redis.llen('sdk:l')).toBe(2);
  });

  it('sets and sorted sets', async () => {
    expect(await redis.sadd('sdk:set', 'x', 'y', 'z')).toBe(3);
    expect((await redis.smembers('sdk:set')).sort()).toEqual(['x', 'y', 'z']);
    expect(await redis.sismember('sdk:set', 'y')).toBe(1);
    expect(await redis.zadd('sdk:z', { score: 2, member: 'two' }, { score: 1, member: 'one' })).toBe(2);
    expect(await redis.zrange('sdk:z', 0, -1)).toEqual(['one', 'two']);
    expect(await redis.zrange('sdk:z', 0, -1, { withScores: true })).toEqual(['one', 1, 'two', 2]);
    expect(await redis.zscore('sdk:z', 'two')).toBe(2);
    expect(await redis.zincrby('sdk:z', 1.5, 'one')).toBe(2.5);
  });

  it('scripts: eval, scriptLoad and evalsha', async () => {
    expect(await redis.eval('return {KEYS[1], ARGV[1], 7}', ['k1'], ['a1'])).toEqual(['k1', 'a1', 7]);
    const sha = await redis.scriptLoad("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    expect(await redis.evalsha(sha, ['sdk:script'], [5])).toBe(5);
    expect(await redis.scriptExists(sha)).toEqual([1]);
  });

  it('pipelines, with errors kept per command', async () => {
    const pipe = redis.pipeline();
    pipe.set('sdk:p', 1).incr('sdk:p').get('sdk:p');
    expect(await pipe.exec()).toEqual(['OK', 2, 2]);
    const bad = redis.pipeline();
    bad.set('sdk:p2', 'text').incr('sdk:p2');
    const kept = await bad.exec({ keepErrors: true });
    expect(kept[0]).toEqual({ result: 'OK', error: undefined });
    expect(kept[1].error).toBe('ERR value is not an integer or out of range');
  });

  it('auto-pipelining batches commands issued together', async () => {
    const auto = new Redis({ url: p.url, token: p.token, enableAutoPipelining: true, enableTelemetry: false });
    const results = await Promise.all([
      auto.set('sdk:ap1', 'a'),
      auto.set('sdk:ap2', 'b'),
      auto.get('sdk:ap1'),
      auto.incr('sdk:ap3'),
      auto.get('sdk:ap2'),
    ]);
    expect(results).toEqual(['OK', 'OK', 'a', 1, 'b']);
  });

  it('transactions (multi/exec)', async () => {
    const tx = redis.multi();
    tx.set('sdk:tx', 10).incrby('sdk:tx', 5).get('sdk:tx');
    expect(await tx.exec()).toEqual(['OK', 15, 15]);
  });

  it('read-your-writes sync token changes after writes', async () => {
    await redis.set('sdk:ryw', 1);
    const t1 = redis.readYourWritesSyncToken;
    await redis.set('sdk:ryw', 2);
    const t2 = redis.readYourWritesSyncToken;
    expect(t1).toBeTruthy();
    expect(t2).not.toBe(t1);
  });

  it('subscribe receives messages published through the SDK', async () => {
    const sub = redis.subscribe<string>('sdk-chan');
    const got: unknown[] = [];
    sub.on('message', (m) => got.push(m.message));
    const subscribed = new Promise<void>((resolve) => sub.on('subscribe', () => resolve()));
    await subscribed;
    expect(await redis.publish('sdk-chan', 'hi there')).toBe(1);
    const start = Date.now();
    while (got.length === 0 && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['hi there']);
    await sub.unsubscribe();
  });

  it('refuses writes with the Read Only token', async () => {
    const ro = new Redis({ url: p.url, token: p.readonlyToken, enableTelemetry: false, enableAutoPipelining: false });
    await redis.set('sdk:ro', 'v');
    expect(await ro.get('sdk:ro')).toBe('v');
    await expect(ro.set('sdk:ro', 'w')).rejects.toThrow(/NOPERM/);
    await expect(ro.keys('*')).rejects.toThrow(/NOPERM/);
    expect(await redis.get('sdk:ro')).toBe('v');
  });

  it('reports a wrong token as the WRONGPASS error', async () => {
    const wrong = new Redis({ url: p.url, token: 'nope', enableTelemetry: false, retry: false });
    await expect(wrong.get('x')).rejects.toThrow(/WRONGPASS/);
  });
});
