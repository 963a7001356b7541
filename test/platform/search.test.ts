// Upstash Redis Search (SEARCH.*) on the local platform: driven by the official SDK (`redis.search`), by
// REST (single command, /pipeline, /multi-exec), and through the proxy with ioredis. The indexes follow the
// data whatever writes it (HSET, JSON.SET, SET, DEL, EXPIRE, RENAME, scripts, FLUSHALL).
import { Redis, s } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { tracked } from '../helpers/cleanup.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { startTestProxy } from '../helpers/stack.js';

let p: RunningPlatform;
let redis: Redis;
beforeAll(async () => {
  p = await startTestPlatform();
  redis = new Redis({ url: p.url, token: p.token, enableTelemetry: false });
});
afterAll(async () => {
  await p?.stop();
});

const products = [
  {
    name: 'Wireless Headphones',
    description: 'Premium wireless headphones with noise cancelling',
    category: '/audio/headphones',
    price: 199.99,
    stock: 5,
    inStock: true,
    added: '2026-01-10T10:00:00Z',
  },
  {
    name: 'Wired Headphones',
    description: 'Studio headphones, wired',
    category: '/audio/headphones',
    price: 89.5,
    stock: 0,
    inStock: false,
    added: '2026-01-20T10:00:00Z',
  },
  {
    name: 'Bluetooth Speaker',
    description: 'Portable wireless speaker',
    category: '/audio/speakers',
    price: 59,
    stock: 12,
    inStock: true,
    added: '2026-02-05T10:00:00Z',
  },
  {
    name: 'Laptop Stand',
    description: 'Aluminium stand for laptops',
    category: '/office/stands',
    price: 35,
    stock: 40,
    inStock: true,
    added: '2026-02-06T10:00:00Z',
  },
];

describe('SEARCH.* through @upstash/redis', () => {
  const schema = s.object({
    name: s.string(),
    description: s.string(),
    category: s.facet(),
    price: s.number('F64'),
    stock: s.number('U64'),
    inStock: s.boolean().fast(),
    added: s.date().fast(),
  });
  let index: Awaited<ReturnType<typeof redis.search.createIndex<typeof schema>>>;

  beforeAll(async () => {
    index = await redis.search.createIndex({ name: 'sdk-products', dataType: 'json', prefix: 'sdkp:', schema });
    for (const [i, doc] of products.entries()) await redis.json.set(`sdkp:${i}`, '$', doc);
    expect(await index.waitIndexing()).toBe(1);
  });

  it('smart matching ranks exact terms first and tolerates typos', async () => {
    const hits = await index.query({ filter: { name: 'headphones' } });
    expect(hits.map((h) => h.key).sort()).toEqual(['sdkp:0', 'sdkp:1']);
    const typo = await index.query({ filter: { name: 'hedphones' } });
    expect(typo.map((h) => h.key).sort()).toEqual(['sdkp:0', 'sdkp:1']);
    const phrase = await index.query({ filter: { description: '"noise cancelling"' } });
    expect(phrase.map((h) => h.key)).toEqual(['sdkp:0']);
  });

  it('range, boolean, date, facet and boolean-operator filters', async () => {
    const keys = async (filter: object) => (await index.query({ filter: filter as never, select: {} })).map((h) => h.key).sort();
    expect(await keys({ price: { $gte: 59, $lt: 100 } })).toEqual(['sdkp:1', 'sdkp:2']);
    expect(await keys({ inStock: false })).toEqual(['sdkp:1']);
    expect(await keys({ added: { $gt: '2026-02-01T00:00:00Z' } })).toEqual(['sdkp:2', 'sdkp:3']);
    expect(await keys({ category: { $eq: '/audio' } })).toEqual(['sdkp:0', 'sdkp:1', 'sdkp:2']);
    expect(await keys({ category: { $in: ['/office/stands', '/audio/speakers'] } })).toEqual(['sdkp:2', 'sdkp:3']);
    expect(await keys({ $must: { description: 'wireless' }, $mustNot: { name: 'speaker' } })).toEqual(['sdkp:0']);
    expect(await keys({ $should: [{ name: 'laptop' }, { name: 'speaker' }] })).toEqual(['sdkp:2', 'sdkp:3']);
    expect(await keys({ $mustNot: { name: 'laptop' } })).toEqual([]);
  });

  it('$should with $boost reorders; ORDERBY sorts by a FAST field and reports its value as the score', async () => {
    const boosted = await index.query({
      filter: { $must: { category: { $eq: '/audio' } }, $should: [{ description: 'portable', $boost: 10 }] } as never,
      select: {},
    });
    expect(boosted[0].key).toBe('sdkp:2');
    const byPrice = await index.query({ filter: { category: { $eq: '/audio' } }, orderBy: { price: 'ASC' }, select: {} });
    expect(byPrice.map((h) => [h.key, h.score])).toEqual([
      ['sdkp:2', 59],
      ['sdkp:1', 89.5],
      ['sdkp:0', 199.99],
    ]);
  });

  it('select, highlight with custom tags, limit and offset', async () => {
    const hits = await index.query({
      filter: { description: 'wireless' },
      select: { name: true, description: true },
      highlight: { fields: ['description'], preTag: '[', postTag: ']' },
      limit: 1,
      offset: 0,
    });
    expect(hits).toHaveLength(1);
    expect(Object.keys(hits[0].data).sort()).toEqual(['description', 'name']);
    expect(String(hits[0].data.description)).toMatch(/\[wireless\]/i);
    const second = await index.query({ filter: { description: 'wireless' }, limit: 1, offset: 1, select: {} });
    expect(second).toHaveLength(1);
    expect(second[0].key).not.toBe(hits[0].key);
  });

  it('count, aggregate and describe', async () => {
    expect(await index.count({ filter: { inStock: true } })).toEqual({ count: 3 });
    const agg: any = await index.aggregate({
      filter: { category: { $eq: '/audio' } },
      aggregations: {
        price: { $stats: { field: 'price' } },
        byStock: { $range: { field: 'stock', ranges: [{ to: 1 }, { from: 1 }] } },
        cats: { $facet: { field: 'category', path: '/audio' } },
      },
    } as never);
    expect(agg.price).toEqual({ count: 3, min: 59, max: 199.99, sum: 348.49, avg: 348.49 / 3 });
    expect(agg.byStock.buckets).toEqual([
      { key: '*-1', docCount: 1, to: 1 },
      { key: '1-*', docCount: 2, from: 1 },
    ]);
    expect(agg.cats.children).toEqual([
      { path: '/audio/headphones', docCount: 2, sumOtherDocCount: 0 },
      { path: '/audio/speakers', docCount: 1, sumOtherDocCount: 0 },
    ]);
    const description = await index.describe();
    expect(description).toMatchObject({ name: 'sdk-products', dataType: 'json', prefixes: ['sdkp:'], language: 'english' });
    expect(description!.schema).toMatchObject({ price: { type: 'F64', fast: true }, inStock: { type: 'BOOL', fast: true } });
  });

  it('aliases resolve for queries; DROP takes the literal name', async () => {
    expect(await redis.search.alias.add({ alias: 'sdk-alias', indexName: 'sdk-products' })).toBe(1);
    expect(await redis.search.index({ name: 'sdk-alias' }).count({ filter: { inStock: true } })).toEqual({ count: 3 });
    expect(await redis.search.index({ name: 'sdk-alias' }).drop()).toBe(0);
    expect(await redis.search.alias.list()).toEqual({ 'sdk-alias': 'sdk-products' });
    expect(await redis.search.alias.delete({ alias: 'sdk-alias' })).toBe(1);
  });
});

describe('the index follows the data', () => {
  let index: ReturnType<typeof redis.search.index>;
  const keys = async () => (await index.query({ filter: {}, select: {}, limit: 100 })).map((h) => h.key).sort();
  beforeAll(async () => {
    await redis.search.createIndex({
      name: 'follow',
      dataType: 'hash',
      prefix: ['fol:', 'other:'],
      schema: s.object({ title: s.string(), n: s.number('I64') }),
    });
    index = redis.search.index({ name: 'follow' });
  });

  it('HSET, HINCRBY, DEL, RENAME, scripts and type changes update it', async () => {
    await redis.hset('fol:1', { title: 'first note', n: 1 });
    await redis.hset('fol:2', { title: 'second note', n: 2 });
    await redis.set('fol:str', 'not a hash');
    await index.waitIndexing();
    expect(await keys()).toEqual(['fol:1', 'fol:2']);
    await redis.hincrby('fol:1', 'n', 10);
    await index.waitIndexing();
    expect((await index.query({ filter: { n: 11 }, select: {} })).map((h) => h.key)).toEqual(['fol:1']);
    await redis.del('fol:2');
    await redis.rename('fol:1', 'elsewhere:1');
    await redis.eval("redis.call('HSET', KEYS[1], 'title', 'from a script', 'n', '7')", ['other:9'], []);
    await index.waitIndexing();
    expect(await keys()).toEqual(['other:9']);
    expect((await index.query({ filter: { title: 'script' } })).map((h) => h.data)).toEqual([{ title: 'from a script', n: 7 }]);
  });

  it('expired keys leave the index', async () => {
    await redis.hset('fol:ttl', { title: 'short lived', n: 3 });
    await redis.pexpire('fol:ttl', 50);
    await index.waitIndexing();
    const deadline = Date.now() + 3000;
    while ((await keys()).includes('fol:ttl') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await keys()).not.toContain('fol:ttl');
  });

  it('FLUSHALL empties it and the definition stays', async () => {
    await redis.hset('fol:3', { title: 'third', n: 3 });
    await index.waitIndexing();
    expect((await keys()).length).toBeGreaterThan(0);
    await redis.flushall();
    await index.waitIndexing();
    expect(await keys()).toEqual([]);
    await redis.hset('fol:4', { title: 'fourth', n: 4 });
    await index.waitIndexing();
    expect(await keys()).toEqual(['fol:4']);
  });
});

describe('SEARCH.* over REST', () => {
  beforeAll(async () => {
    await command(p, ['HSET', 'rest:1', 'title', 'red apple', 'price', '3']);
    await command(p, ['HSET', 'rest:2', 'title', 'green apple pie', 'price', '12']);
    const created = await command(p, [
      'SEARCH.CREATE',
      'rest',
      'ON',
      'HASH',
      'PREFIX',
      '1',
      'rest:',
      'SCHEMA',
      'title',
      'TEXT',
      'price',
      'F64',
      'FAST',
    ]);
    expect(created.json).toEqual({ result: 1 });
  });

  it('answers the reply shapes the command reference gives', async () => {
    const q = await command(p, ['SEARCH.QUERY', 'rest', '{"title": "apple"}', 'ORDERBY', 'price', 'ASC']);
    expect(q.json).toEqual({
      result: [
        [
          'rest:1',
          '3',
          [
            ['title', 'red apple'],
            ['price', '3'],
          ],
        ],
        [
          'rest:2',
          '12',
          [
            ['title', 'green apple pie'],
            ['price', '12'],
          ],
        ],
      ],
    });
    expect((await command(p, ['SEARCH.COUNT', 'rest', '{"price": {"$gt": 5}}'])).json).toEqual({ result: 1 });
    expect((await command(p, ['SEARCH.QUERY', 'nope', '{}'])).json).toEqual({ result: null });
    expect((await command(p, ['SEARCH.COUNT', 'nope', '{}'])).json).toEqual({ result: -1 });
    expect((await command(p, ['SEARCH.DESCRIBE', 'rest'])).json.result.slice(0, 8)).toEqual([
      'name',
      'rest',
      'type',
      'HASH',
      'prefixes',
      ['rest:'],
      'language',
      'english',
    ]);
    expect((await command(p, ['SEARCH.LISTINDEXES', 'MATCH', 're*', 'LIMIT', '1'])).json).toEqual({
      result: [['name', 'rest', 'type', 'HASH']],
    });
    const agg = await command(p, ['SEARCH.AGGREGATE', 'rest', '{}', '{"avg": {"$avg": {"field": "price"}}}']);
    expect(agg.json).toEqual({ result: ['avg', ['value', '7.5']] });
  });

  it("runs in /pipeline and, with NOCONTENT, in /multi-exec after the transaction's writes", async () => {
    const pipe = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['HSET', 'rest:3', 'title', 'apple juice', 'price', '4'],
        ['SEARCH.WAITINDEXING', 'rest'],
        ['SEARCH.COUNT', 'rest', '{"title": "apple"}'],
      ]),
    });
    expect(pipe.json).toEqual([{ result: 2 }, { result: 1 }, { result: 3 }]);
    const tx = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['HSET', 'rest:4', 'title', 'apple tart', 'price', '5'],
        ['SEARCH.QUERY', 'rest', '{"title": "tart"}', 'NOCONTENT'],
      ]),
    });
    expect(tx.json).toEqual([{ result: 2 }, { result: [['rest:4', expect.any(String)]] }]);
    const refused = await kv(p, '/multi-exec', { body: JSON.stringify([['SEARCH.QUERY', 'rest', '{}']]) });
    expect(refused.json).toEqual({ error: 'ERR SEARCH.QUERY inside MULTI requires NOCONTENT' });
  });

  it('refuses bad input with Redis-style errors', async () => {
    const err = async (args: string[]) => (await command(p, args)).json.error as string;
    expect(await err(['SEARCH.QUERY', 'rest', '{not json'])).toBe('ERR invalid filter: not valid JSON');
    expect(await err(['SEARCH.QUERY', 'rest', '{"color": "red"}'])).toBe("ERR unknown field 'color' in filter");
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'LIMIT', '0'])).toBe('ERR LIMIT must be an integer between 1 and 1000');
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'LIMIT', '0', '10'])).toBe('ERR LIMIT must be an integer between 1 and 1000');
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'OFFSET', '10001'])).toBe('ERR OFFSET must be an integer between 0 and 10000');
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'NOCONTENT', 'SELECT', '1', 'title'])).toBe(
      'ERR NOCONTENT cannot be combined with SELECT or HIGHLIGHT',
    );
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'ORDERBY', 'title'])).toBe("ERR ORDERBY needs a FAST field; 'title' is not FAST");
    expect(await err(['SEARCH.QUERY', 'rest', '{}', 'ORDERBY', 'price', 'SCOREFUNC', 'FIELDVALUE', 'price'])).toBe(
      'ERR SCOREFUNC cannot be combined with ORDERBY',
    );
    expect(await err(['SEARCH.QUERY', 'rest', '{"title": {"$gt": 3}}'])).toBe(
      "ERR range operators are not supported on TEXT field 'title'",
    );
    expect(await err(['SEARCH.QUERY', 'rest', '{"price": {"$fuzzy": "x"}}'])).toBe(
      "ERR $fuzzy is only supported on TEXT fields ('price' is F64)",
    );
    expect(await err(['SEARCH.QUERY', 'rest', '{"title": {"$regex": "("}}'])).toBe("ERR invalid $regex pattern '('");
    expect(await err(['SEARCH.AGGREGATE', 'rest', '{}', '{"a": {"$avg": {"field": "title"}}}'])).toBe(
      "ERR $avg is not supported on TEXT field 'title'",
    );
    expect(await err(['SEARCH.CREATE', 'rest', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'a', 'TEXT'])).toBe(
      "ERR index 'rest' already exists",
    );
    expect(await err(['SEARCH.CREATE', 'rest', 'EXISTSOK', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'a', 'TEXT'])).toBe(
      "ERR index 'rest' exists with another configuration",
    );
    expect(await err(['SEARCH.CREATE', 'ov', 'ON', 'HASH', 'PREFIX', '2', 'u:', 'u:admin:', 'SCHEMA', 'a', 'TEXT'])).toBe(
      "ERR prefix 'u:' overlaps prefix 'u:admin:'",
    );
    expect(await err(['SEARCH.CREATE', 'rest:1', 'ON', 'HASH', 'PREFIX', '1', 'y:', 'SCHEMA', 'a', 'TEXT'])).toBe(
      "ERR 'rest:1' is already used by a key that is not an index",
    );
    expect(await err(['SEARCH.CREATE', 'bad', 'ON', 'HASH', 'PREFIX', '1', 'y:', 'SCHEMA', 'a', 'TEXT', 'FAST'])).toBe(
      "ERR FAST is not allowed for field 'a' of type TEXT",
    );
    expect(await err(['SEARCH.DROP'])).toBe("ERR wrong number of arguments for 'search.drop' command");
    expect(
      (
        await command(p, [
          'SEARCH.CREATE',
          'rest',
          'EXISTSOK',
          'ON',
          'HASH',
          'PREFIX',
          '1',
          'rest:',
          'SCHEMA',
          'title',
          'TEXT',
          'price',
          'F64',
          'FAST',
        ])
      ).json,
    ).toEqual({
      result: 0,
    });
  });

  it('SKIPINITIALSCAN leaves existing keys out until SEARCH.REINDEX; DESCRIBE through an alias names the target', async () => {
    await command(p, ['HSET', 'late:1', 'title', 'already here']);
    expect(
      (await command(p, ['SEARCH.CREATE', 'late', 'ON', 'HASH', 'PREFIX', '1', 'late:', 'SKIPINITIALSCAN', 'SCHEMA', 'title', 'TEXT']))
        .json,
    ).toEqual({
      result: 1,
    });
    await command(p, ['HSET', 'late:2', 'title', 'written after']);
    expect((await command(p, ['SEARCH.COUNT', 'late', '{}'])).json).toEqual({ result: 1 });
    expect((await command(p, ['SEARCH.REINDEX', 'late'])).json).toEqual({ result: 1 });
    expect((await command(p, ['SEARCH.COUNT', 'late', '{}'])).json).toEqual({ result: 2 });
    expect((await command(p, ['SEARCH.REINDEX', 'missing'])).json).toEqual({ result: 0 });
    await command(p, ['SEARCH.ALIASADD', 'late-alias', 'late']);
    await command(p, ['SEARCH.ALIASADD', 'dangling', 'not-yet']);
    expect((await command(p, ['SEARCH.DESCRIBE', 'late-alias'])).json.result.slice(0, 2)).toEqual(['name', 'late']);
    expect((await command(p, ['SEARCH.LISTALIASES'])).json.result).toEqual(
      expect.arrayContaining([
        ['late-alias', 'late'],
        ['dangling', 'not-yet'],
      ]),
    );
    expect((await command(p, ['SEARCH.DROP', 'late'])).json).toEqual({ result: 1 });
    expect((await command(p, ['SEARCH.QUERY', 'late-alias', '{}'])).json).toEqual({ result: null });
  });

  it('the Read Only token may query but not create or drop', async () => {
    const ro = { token: p.readonlyToken };
    expect((await command(p, ['SEARCH.COUNT', 'rest', '{}'], ro)).json).toEqual({ result: 4 });
    expect((await command(p, ['SEARCH.DROP', 'rest'], ro)).json.error).toBe(
      "NOPERM this user has no permissions to run the 'search.drop' command",
    );
  });
});

describe('SEARCH.* through the proxy (ioredis)', () => {
  it('creates, queries and counts with call(), also inside MULTI', async () => {
    const proxy = await startTestProxy(p);
    const client = new IORedis({ port: proxy.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(
        await client.call('SEARCH.CREATE', 'viaproxy', 'ON', 'STRING', 'PREFIX', '1', 'vp:', 'SCHEMA', 'title', 'TEXT', 'n', 'U64', 'FAST'),
      ).toBe(1);
      await client.set('vp:1', JSON.stringify({ title: 'proxy works', n: 1 }));
      await client.set('vp:2', JSON.stringify({ title: 'proxy again', n: 2 }));
      expect(await client.call('SEARCH.WAITINDEXING', 'viaproxy')).toBe(1);
      expect(await client.call('SEARCH.QUERY', 'viaproxy', '{"title": "proxy"}', 'ORDERBY', 'n', 'DESC', 'SELECT', '1', 'n')).toEqual([
        ['vp:2', '2', [['n', '2']]],
        ['vp:1', '1', [['n', '1']]],
      ]);
      const [[, count], [, hits]] = (await client
        .multi()
        .call('SEARCH.COUNT', 'viaproxy', '{}')
        .call('SEARCH.QUERY', 'viaproxy', '{"n": 1}', 'NOCONTENT')
        .exec())!;
      expect(count).toBe(2);
      expect(hits).toEqual([['vp:1', '1']]);
      await expect(client.call('SEARCH.QUERY', 'viaproxy', '{"nope": 1}')).rejects.toThrow("ERR unknown field 'nope' in filter");
    } finally {
      client.disconnect();
      await proxy.stop();
    }
  });
});

describe('index definitions survive a restart of the platform', () => {
  it('comes back with its definition and documents, and keeps following writes', async () => {
    const data = tracked(await startEmbeddedRedis({ databases: 1, password: null }));
    const internal = tracked(await startEmbeddedRedis({ password: null }));
    const urls = { redisUrl: `redis://127.0.0.1:${data.endpoint.port}`, internalRedisUrl: `redis://127.0.0.1:${internal.endpoint.port}` };
    try {
      let q = await startTestPlatform(urls);
      await command(q, ['SEARCH.CREATE', 'kept', 'ON', 'HASH', 'PREFIX', '1', 'k:', 'SCHEMA', 'title', 'TEXT']);
      await command(q, ['SEARCH.ALIASADD', 'kept-alias', 'kept']);
      await command(q, ['HSET', 'k:1', 'title', 'before restart']);
      await q.stop();
      q = await startTestPlatform(urls);
      await command(q, ['HSET', 'k:2', 'title', 'after restart']);
      expect((await command(q, ['SEARCH.WAITINDEXING', 'kept-alias'])).json).toEqual({ result: 1 });
      expect(
        (await command(q, ['SEARCH.QUERY', 'kept', '{"title": "restart"}', 'NOCONTENT'])).json.result.map((r: string[]) => r[0]).sort(),
      ).toEqual(['k:1', 'k:2']);
      await q.stop();
    } finally {
      await data.stop();
      await internal.stop();
    }
  });
});
