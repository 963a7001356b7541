// The official @upstash/redis SDK's redis.json.* helpers, unchanged, against the local platform: a port of
// the SDK's own pkg/commands/json_*.test.ts (upstash/redis-js), with their expected values.
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let redis: Redis;
let n = 0;
const newKey = () => `sdkjson:${++n}`;
beforeAll(async () => {
  p = await startTestPlatform();
  redis = new Redis({ url: p.url, token: p.token, enableTelemetry: false });
});
afterAll(async () => {
  await p?.stop();
});

const headphones = {
  name: 'Noise-cancelling Bluetooth headphones',
  description: 'Wireless Bluetooth headphones with noise-cancelling technology',
  connection: { wireless: true, type: 'Bluetooth' },
  price: 99.98,
  stock: 25,
  colors: ['black', 'silver'],
};
const earbuds = {
  name: 'Wireless earbuds',
  description: 'Wireless Bluetooth in-ear headphones',
  connection: { wireless: true, type: 'Bluetooth' },
  price: 64.99,
  stock: 17,
  colors: ['black', 'white'],
  max_level: [80, 100, 120],
};

describe('@upstash/redis json.*', () => {
  it('arrappend, arrinsert, arrindex, get (json_arrappend/arrinsert/arrindex.test.ts)', async () => {
    const key = newKey();
    expect(await redis.json.set(key, '$', headphones)).toBe('OK');
    expect(await redis.json.arrappend(key, '$.colors', '"blue"')).toEqual([3]);
    expect(await redis.json.get(key)).toEqual({ ...headphones, colors: ['black', 'silver', 'blue'] });
    expect(await redis.json.get(key, '$.colors[*]')).toEqual(['black', 'silver', 'blue']);
    expect(await redis.json.arrinsert(key, '$.colors', 2, '"yellow"', '"gold"')).toEqual([5]);
    expect(await redis.json.get(key, '$.colors')).toEqual([['black', 'silver', 'yellow', 'gold', 'blue']]);
    expect(await redis.json.arrindex(key, '$..colors', '"silver"')).toEqual([1]);
  });

  it('arrlen, arrpop, arrtrim (json_arrlen/arrpop/arrtrim.test.ts)', async () => {
    const k1 = newKey();
    expect(await redis.json.set(k1, '$', earbuds)).toBe('OK');
    expect(await redis.json.arrlen(k1, '$.max_level')).toEqual([3]);
    const k2 = newKey();
    expect(await redis.json.set(k2, '$', { max_level: [80, 90, 100, 120] })).toBe('OK');
    expect(await redis.json.arrpop(k2, '$.max_level', 0)).toEqual([80]);
    expect(await redis.json.get(k2, '$.max_level')).toEqual([[90, 100, 120]]);
    const k3 = newKey();
    expect(await redis.json.set(k3, '$', { a: [1] })).toBe('OK');
    expect((await redis.json.arrappend(k3, '$.a', 2)).sort()).toEqual([2]);
    expect(await redis.json.arrtrim(k3, '$.a', 1, 1)).toEqual([1]);
    expect(await redis.json.get(k3, '$.a')).toEqual([[2]]);
  });

  it('clear, del, forget (json_clear/del/forget.test.ts)', async () => {
    const key = newKey();
    expect(
      await redis.json.set(key, '$', '{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}'),
    ).toBe('OK');
    expect(await redis.json.clear(key, '$.*')).toBe(4);
    expect(await redis.json.get(key, '$')).toEqual([{ obj: {}, arr: [], str: 'foo', bool: true, int: 0, float: 0 }]);
    for (const remove of [redis.json.del.bind(redis.json), redis.json.forget.bind(redis.json)]) {
      const k = newKey();
      expect(await redis.json.set(k, '$', { a: 1, nested: { a: 2, b: 3 } })).toBe('OK');
      expect(await remove(k, '$..a')).toBe(2);
      expect(await redis.json.get(k, '$')).toEqual([{ nested: { b: 3 } }]);
    }
  });

  it('get with several paths, mget, mset (json_get/mget/mset.test.ts)', async () => {
    const key = newKey();
    expect(await redis.json.set(key, '$', { a: 2, b: 3, nested: { a: 4, b: null } })).toBe('OK');
    expect(await redis.json.get(key, '$..b')).toEqual([null, 3]);
    expect(await redis.json.get(key, '$..a', '$..b')).toEqual({ '$..b': [null, 3], '$..a': [4, 2] });
    const k1 = newKey();
    const k2 = newKey();
    await redis.json.set(k1, '$', { a: 1, b: 2, nested: { a: 3 }, c: null });
    await redis.json.set(k2, '$', { a: 4, b: 5, nested: { a: 6 }, c: null });
    expect(await redis.json.mget([k1, k2], '$..a')).toEqual([
      [3, 1],
      [6, 4],
    ]);
    const [m1, m2, m3] = [newKey(), newKey(), newKey()];
    expect(
      await redis.json.mset(
        { key: m1, path: '$', value: { key: 'value' } },
        { key: m2, path: '$', value: { key: 'value' } },
        { key: m3, path: '$', value: { key: 'value' } },
      ),
    ).toBe('OK');
    const m = newKey();
    expect(await redis.json.mset({ key: m, path: '$', value: { a: 2 } })).toBe('OK');
    expect(await redis.json.mset({ key: m, path: '$.a', value: 3 })).toBe('OK');
    expect(await redis.json.get(m, '$')).toEqual([{ a: 3 }]);
    const mm = newKey();
    expect(await redis.json.mset({ key: mm, path: '$', value: { f1: { a: 1 }, f2: { a: 2 } } })).toBe('OK');
    expect(await redis.json.mset({ key: mm, path: '$..a', value: 3 })).toBe('OK');
    expect(await redis.json.get(mm, '$')).toEqual([{ f1: { a: 3 }, f2: { a: 3 } }]);
  });

  it('merge with object and string values (json_merge.test.ts)', async () => {
    const cases: Array<[unknown, string, unknown, unknown]> = [
      [{ a: 2 }, '$.b', 8, [{ a: 2, b: 8 }]],
      [{ a: 2 }, '$.a', 3, [{ a: 3 }]],
      [{ a: 2 }, '$', { a: null }, [{}]],
      [{ a: [2, 4, 6, 8] }, '$.a', [10, 12], [{ a: [10, 12] }]],
      [{ f1: { a: 1 }, f2: { a: 2 } }, '$', { f1: null, f2: { a: 3, b: 4 }, f3: [2, 4, 6] }, [{ f2: { a: 3, b: 4 }, f3: [2, 4, 6] }]],
      ['{ "a": 2 }', '$.b', '8', [{ a: 2, b: 8 }]],
      ['{ "a": 2 }', '$.a', '3', [{ a: 3 }]],
      [{ a: '[2, 4, 6, 8]' }, '$.a', '[10, 12]', [{ a: [10, 12] }]],
      [
        { f1: { a: 1 }, f2: { a: 2 } },
        '$',
        '{ "f1": null, "f2": { "a": 3, "b": 4 }, "f3": [2, 4, 6] }',
        [{ f2: { a: 3, b: 4 }, f3: [2, 4, 6] }],
      ],
    ];
    for (const [initial, path, value, expected] of cases) {
      const key = newKey();
      await redis.json.set(key, '$', initial as never);
      expect(await redis.json.merge(key, path, value as never)).toBe('OK');
      expect(await redis.json.get(key, '$')).toEqual(expected);
    }
  });

  it('numincrby, nummultby (json_numincrby/nummultby.test.ts)', async () => {
    for (const [op, expected] of [
      ['numincrby', [4, 7, null, null]],
      ['nummultby', [10, 4, null, null]],
    ] as const) {
      const key = newKey();
      expect(await redis.json.set(key, '$', { a: 'b', b: [{ a: 2 }, { a: 5 }, { a: 'c' }] })).toBe('OK');
      expect((await redis.json[op](key, '$.a', 2)).sort()).toEqual([null]);
      expect((await redis.json[op](key, '$..a', 2)).sort()).toEqual(expected);
    }
  });

  it('objkeys, objlen (json_objkeys/objlen.test.ts)', async () => {
    const key = newKey();
    expect(await redis.json.set(key, '$', { a: [3], nested: { a: { b: 2, c: 1 } } })).toBe('OK');
    const keys = await redis.json.objkeys(key, '$..a');
    for (const e of keys.sort()) e?.sort();
    expect(keys).toEqual([['b', 'c'], null]);
    expect(await redis.json.objlen(key, '$..a')).toEqual([2, null]);
  });

  it('resp, set (json_resp/set.test.ts)', async () => {
    const key = newKey();
    expect(await redis.json.set(key, '$', earbuds)).toBe('OK');
    expect((await redis.json.resp(key)).length).toBe(15);
    const k = newKey();
    expect(await redis.json.set(k, '$', { a: 2 })).toBe('OK');
    expect(await redis.json.set(k, '$.a', 3)).toBe('OK');
    expect(await redis.json.set(k, '$.b', 8)).toBe('OK');
    expect(await redis.json.get(k, '$')).toEqual([{ a: 3, b: 8 }]);
    const kk = newKey();
    expect(await redis.json.set(kk, '$', { f1: { a: 1 }, f2: { a: 2 } })).toBe('OK');
    expect(await redis.json.set(kk, '$..a', 3)).toBe('OK');
    expect(await redis.json.get(kk, '$')).toEqual([{ f1: { a: 3 }, f2: { a: 3 } }]);
  });

  it('strappend, strlen, toggle, type (json_strappend/strlen/toggle/type.test.ts)', async () => {
    const key = newKey();
    expect(await redis.json.set(key, '$', { a: 'foo', nested: { a: 'hello' }, nested2: { a: 31 } })).toBe('OK');
    expect((await redis.json.strlen(key, '$..a')).sort()).toEqual([3, 5, null]);
    expect((await redis.json.strappend(key, '$..a', '"baz"')).sort()).toEqual([6, 8, null]);
    expect(await redis.json.get(key)).toEqual({ a: 'foobaz', nested: { a: 'hellobaz' }, nested2: { a: 31 } });
    const t = newKey();
    expect(await redis.json.set(t, '$', { bool: true })).toBe('OK');
    expect(await redis.json.toggle(t, '$.bool')).toEqual([0]);
    expect(await redis.json.get(t, '$')).toEqual([{ bool: false }]);
    expect(await redis.json.toggle(t, '$.bool')).toEqual([1]);
    const ty = newKey();
    expect(await redis.json.set(ty, '$', { a: 2, nested: { a: true }, foo: 'bar' })).toBe('OK');
    expect((await redis.json.type(ty, '$..foo')).sort()).toEqual(['string']);
    expect((await redis.json.type(ty, '$..a')).sort()).toEqual(['boolean', 'integer']);
  });

  it('json commands in an SDK pipeline and transaction', async () => {
    const key = newKey();
    const pipe = redis.pipeline();
    pipe.json.set(key, '$', { n: 1, list: [] });
    pipe.json.numincrby(key, '$.n', 2);
    pipe.json.arrappend(key, '$.list', '"x"');
    pipe.json.get(key);
    expect(await pipe.exec()).toEqual(['OK', [3], [1], { n: 3, list: ['x'] }]);
    const tx = redis.multi();
    tx.json.numincrby(key, '$.n', 10);
    tx.json.get(key, '$.n');
    expect(await tx.exec()).toEqual([[13], [13]]);
  });
});
