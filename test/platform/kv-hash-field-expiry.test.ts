// Hash-field expiration (Redis 7.4/8) on the default stack, whose redis-server is 7.0.15: the platform
// emulates it (src/platform/kv/field-expiry.ts). The differential part replays the commands of
// hash-field-expiry-cases.ts and compares each raw reply with Redis 8.8.0's, recorded in
// fixtures/hash-field-expiry.redis8.json; the rest checks what a fixture cannot: fields vanishing on time
// (lazily and actively), the Read Only token, pipelines, the proxy, and a restart.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { arrayElements } from '../../src/resp/reply-scanner.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { HASH_FIELD_EXPIRY_CASES } from './hash-field-expiry-cases.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/hash-field-expiry.redis8.json', import.meta.url), 'utf8')) as {
  redis_version: string;
  cases: { command: string[]; reply: string }[];
};

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

/** One command over REST with `Upstash-Response-Format: resp2`: the raw reply (an error as its `-…` line). */
async function resp(args: string[], token?: string): Promise<string> {
  const r = await kv(p, '/', {
    method: 'POST',
    body: JSON.stringify(args),
    headers: { 'Upstash-Response-Format': 'resp2' },
    ...(token ? { token } : {}),
  });
  return r.bytes.toString('latin1');
}

/** HGETALL's field order differs (Redis 8 reorders a listpack with TTLs): compared as sorted pairs. */
function normalize(args: string[], reply: string): string {
  if (args[0] !== 'HGETALL' || reply[0] !== '*') return reply;
  const items = arrayElements(Buffer.from(reply, 'latin1'))!.map((b) => b.toString('latin1'));
  const pairs: string[] = [];
  for (let i = 0; i < items.length; i += 2) pairs.push(items[i] + items[i + 1]);
  return pairs.sort().join('|');
}

describe('hash-field expiration: replies identical to Redis 8.8.0', () => {
  it('the fixture was recorded from the current cases on Redis 8', () => {
    expect(fixture.redis_version.startsWith('8.')).toBe(true);
    expect(fixture.cases.map((c) => c.command)).toEqual(HASH_FIELD_EXPIRY_CASES);
  });

  it(`replays ${HASH_FIELD_EXPIRY_CASES.length} commands with Redis 8's exact replies and errors`, async () => {
    const info = await resp(['INFO', 'server']);
    expect(info).toContain('redis_version:7.0.'); // the default stack's server: the emulation is what runs
    for (const { command: args, reply } of fixture.cases) {
      const got = await resp(args);
      expect({ args, reply: normalize(args, got) }).toEqual({ args, reply: normalize(args, reply) });
    }
  });
});

describe('hash-field expiration: fields vanish on time', () => {
  it('a field is gone for every read once its time comes (lazy), and from the store itself (active)', async () => {
    await command(p, ['DEL', 'ttl:h']);
    await command(p, ['HSET', 'ttl:h', 'short', '1', 'long', '2', 'plain', '3']);
    expect((await command(p, ['HPEXPIRE', 'ttl:h', '300', 'FIELDS', '1', 'short'])).json).toEqual({ result: [1] });
    expect((await command(p, ['HEXPIRE', 'ttl:h', '100', 'FIELDS', '1', 'long'])).json).toEqual({ result: [1] });
    const [pttl] = (await command(p, ['HPTTL', 'ttl:h', 'FIELDS', '1', 'short'])).json.result;
    expect(pttl).toBeGreaterThan(200);
    expect(pttl).toBeLessThanOrEqual(300);
    expect((await command(p, ['HGET', 'ttl:h', 'short'])).json).toEqual({ result: '1' });
    await new Promise((r) => setTimeout(r, 350));
    // Straight after the time: every read through the platform sees it gone.
    expect((await command(p, ['HGET', 'ttl:h', 'short'])).json).toEqual({ result: null });
    expect((await command(p, ['HLEN', 'ttl:h'])).json).toEqual({ result: 2 });
    expect((await command(p, ['HTTL', 'ttl:h', 'FIELDS', '2', 'short', 'long'])).json).toEqual({ result: [-2, 100] });
    // The data store itself (seen around the platform) lost it too.
    const ds = p.dataStore;
    const direct = new IORedis({ host: ds.host, port: ds.port, username: ds.username, password: ds.password });
    expect(await direct.hexists('ttl:h', 'short')).toBe(0);
    // Active expiry: nothing reads the key, the field still goes (within the 100 ms cycle).
    await command(p, ['HPEXPIRE', 'ttl:h', '50', 'FIELDS', '1', 'plain']);
    await new Promise((r) => setTimeout(r, 300));
    expect(await direct.hexists('ttl:h', 'plain')).toBe(0);
    direct.disconnect();
  });

  it('the key goes with its last field, and a plain pipeline of reads sees the same', async () => {
    await command(p, ['DEL', 'ttl:k']);
    await command(p, ['HSET', 'ttl:k', 'a', '1', 'b', '2']);
    expect((await command(p, ['HPEXPIRE', 'ttl:k', '100', 'FIELDS', '2', 'a', 'b'])).json).toEqual({ result: [1, 1] });
    await new Promise((r) => setTimeout(r, 150));
    const r = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['EXISTS', 'ttl:k'],
        ['HGETALL', 'ttl:k'],
      ]),
    });
    expect(r.json).toEqual([{ result: 0 }, { result: [] }]);
  });
});

describe('hash-field expiration: tokens, pipelines, transactions', () => {
  it('the Read Only token reads TTLs and may not set them', async () => {
    await command(p, ['HSET', 'ro:h', 'f', 'v']);
    await command(p, ['HEXPIREAT', 'ro:h', '4102444800', 'FIELDS', '1', 'f']);
    expect((await command(p, ['HEXPIRETIME', 'ro:h', 'FIELDS', '1', 'f'], { token: p.readonlyToken })).json).toEqual({
      result: [4102444800],
    });
    const refused = await command(p, ['HPERSIST', 'ro:h', 'FIELDS', '1', 'f'], { token: p.readonlyToken });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatch(/^NOPERM .*'hpersist'/);
    const refused2 = await command(p, ['HEXPIRE', 'ro:h', '1', 'FIELDS', '1', 'f'], { token: p.readonlyToken });
    expect(refused2.json.error).toMatch(/^NOPERM .*'hexpire'/);
  });

  it('run in order between other commands of a /pipeline; refused inside /multi-exec', async () => {
    const r = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['DEL', 'pl:h'],
        ['HSET', 'pl:h', 'a', '1'],
        ['HEXPIREAT', 'pl:h', '4102444800', 'FIELDS', '1', 'a'],
        ['HEXPIRETIME', 'pl:h', 'FIELDS', '1', 'a'],
        ['HSET', 'pl:h', 'a', '2'],
        ['HEXPIRETIME', 'pl:h', 'FIELDS', '1', 'a'],
        ['HEXPIRE', 'pl:h', 'x', 'FIELDS', '1', 'a'],
      ]),
    });
    expect(r.json).toEqual([
      { result: 0 },
      { result: 1 },
      { result: [1] },
      { result: [4102444800] },
      { result: 0 },
      { result: [-1] },
      { error: 'ERR value is not an integer or out of range' },
    ]);
    const tx = await kv(p, '/multi-exec', { body: JSON.stringify([['HEXPIRE', 'pl:h', '10', 'FIELDS', '1', 'a']]) });
    expect(tx.status).toBe(400);
    expect(tx.json.error).toMatch(/^ERR 'hexpire' needs hash-field expiration/);
  });
});

describe('hash-field expiration: a restart on a data directory', () => {
  it('keeps the expiry times, and a time that came while stopped deletes the field at the start', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-hfe-'));
    try {
      let q = await startTestPlatform({ dataDir: dir });
      const run = (args: string[]) => command(q, args).then((r) => r.json);
      await run(['HSET', 'rs:h', 'keep', '1', 'soon', '2', 'plain', '3']);
      expect(await run(['HEXPIREAT', 'rs:h', '4102444800', 'FIELDS', '1', 'keep'])).toEqual({ result: [1] });
      expect(await run(['HPEXPIRE', 'rs:h', '400', 'FIELDS', '1', 'soon'])).toEqual({ result: [1] });
      await q.stop();
      await new Promise((r) => setTimeout(r, 500));
      q = await startTestPlatform({ dataDir: dir, token: q.token, readonlyToken: q.readonlyToken });
      try {
        expect(await run(['HEXPIRETIME', 'rs:h', 'FIELDS', '3', 'keep', 'soon', 'plain'])).toEqual({ result: [4102444800, -2, -1] });
        expect(await run(['HGETALL', 'rs:h'])).toEqual({ result: ['keep', '1', 'plain', '3'] });
      } finally {
        await q.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
