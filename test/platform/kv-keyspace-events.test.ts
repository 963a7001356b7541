// Keyspace notifications as the real service documents them (redis/howto/keyspacenotifications.mdx):
// `CONFIG SET notify-keyspace-events <flags>` over REST, then `__keyspace@0__:<key>` and
// `__keyevent@0__:<event>` messages on the /subscribe and /psubscribe streams, and through the proxy to a
// RESP client's PSUBSCRIBE. The oracle is a direct redis-server running the same commands.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globMatches } from '../../src/platform/kv/config.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { openEventStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let oracle: IORedis;
beforeAll(async () => {
  stack = await startStack();
  oracle = new IORedis({ host: stack.oracle.endpoint.host, port: stack.oracle.endpoint.port, lazyConnect: true });
  await oracle.connect();
});
afterAll(async () => {
  oracle?.disconnect();
  await stack?.stop();
});

const p = () => stack.platform;

/** The writes whose notifications are compared; each runs on the platform (REST) and on the oracle. */
const WRITES: string[][] = [
  ['SET', 'ks:a', '1'],
  ['APPEND', 'ks:a', '2'],
  ['EXPIRE', 'ks:a', '100'],
  ['HSET', 'ks:h', 'f', 'v'],
  ['LPUSH', 'ks:l', 'x'],
  ['RENAME', 'ks:l', 'ks:l2'],
  ['DEL', 'ks:a', 'ks:h'],
  ['SET', 'ks:t', 'v', 'PX', '1'],
];

async function oracleEvents(pattern: string, flags: string): Promise<string[]> {
  const sub = oracle.duplicate();
  const got: string[] = [];
  sub.on('pmessage', (pat: string, channel: string, message: string) => got.push(`pmessage,${pat},${channel},${message}`));
  await sub.psubscribe(pattern);
  await oracle.config('SET', 'notify-keyspace-events', flags);
  for (const w of WRITES) await oracle.call(w[0], ...w.slice(1));
  // The last write expires ks:t at once; with x (A includes it) wait for Redis to notice.
  if (/[Ax]/.test(flags)) await until(() => got.some((e) => e.includes('expired')));
  else await new Promise((r) => setTimeout(r, 200));
  await oracle.config('SET', 'notify-keyspace-events', '');
  sub.disconnect();
  return got;
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('CONFIG SET / CONFIG GET over REST (the service permits only notify-keyspace-events)', () => {
  it('accepts notify-keyspace-events, shows only it, and refuses other parameters', async () => {
    expect((await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', 'Kh'])).json).toEqual({ result: 'OK' });
    expect((await command(p(), ['CONFIG', 'GET', 'notify-keyspace-events'])).json).toEqual({
      result: ['notify-keyspace-events', 'hK'],
    });
    // Patterns: only the one parameter is ever shown, others answer nothing (not an error).
    expect((await command(p(), ['CONFIG', 'GET', '*'])).json).toEqual({ result: ['notify-keyspace-events', 'hK'] });
    expect((await command(p(), ['CONFIG', 'GET', 'notify-*', 'maxmemory'])).json).toEqual({ result: ['notify-keyspace-events', 'hK'] });
    expect((await command(p(), ['CONFIG', 'GET', 'maxmemory'])).json).toEqual({ result: [] });
    expect((await command(p(), ['CONFIG', 'GET', 'requirepass'])).json).toEqual({ result: [] });
    // The path form and a value the name spells in another case.
    expect((await kv(p(), '/config/set/NOTIFY-KEYSPACE-EVENTS/')).json).toEqual({ result: 'OK' });
    expect((await kv(p(), '/config/get/notify-keyspace-events')).json).toEqual({ result: ['notify-keyspace-events', ''] });
  });

  it('answers Redis-style errors for bad flags, other parameters and wrong arity', async () => {
    const bad = await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', 'Kq']);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe((await oracle.config('SET', 'notify-keyspace-events', 'Kq').catch((e: Error) => e.message)) as string);
    for (const args of [
      ['CONFIG', 'SET', 'maxmemory', '1'],
      ['CONFIG', 'SET', 'notify-keyspace-events', 'K', 'save', ''],
    ]) {
      const r = await command(p(), args);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatch(/^ERR CONFIG SET of '(maxmemory|save)' is not allowed: only notify-keyspace-events can be changed/);
    }
    // Nothing was changed by the refused pair list.
    expect((await command(p(), ['CONFIG', 'GET', 'notify-keyspace-events'])).json.result[1]).toBe('');
    expect((await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events'])).json.error).toBe(
      "ERR wrong number of arguments for 'config|set' command",
    );
    expect((await command(p(), ['CONFIG', 'GET'])).json.error).toBe("ERR wrong number of arguments for 'config|get' command");
    // The Read Only token may neither read nor change it (CONFIG is an admin command).
    const ro = await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', 'KA'], { token: p().readonlyToken });
    expect(ro.status).toBe(400);
    expect(ro.json.error).toMatch(/^NOPERM .*'config\|set'/);
  });

  it('is accepted inside /multi-exec and /pipeline too', async () => {
    const tx = await kv(p(), '/multi-exec', {
      body: JSON.stringify([
        ['CONFIG', 'SET', 'notify-keyspace-events', 'E$'],
        ['CONFIG', 'GET', '*'],
      ]),
    });
    expect(tx.json).toEqual([{ result: 'OK' }, { result: ['notify-keyspace-events', '$E'] }]);
    const pipe = await kv(p(), '/pipeline', {
      body: JSON.stringify([
        ['CONFIG', 'SET', 'notify-keyspace-events', ''],
        ['CONFIG', 'SET', 'dir', '/tmp'],
      ]),
    });
    expect(pipe.json[0]).toEqual({ result: 'OK' });
    expect(pipe.json[1].error).toMatch(/^ERR CONFIG SET of 'dir' is not allowed/);
  });
});

describe('notifications on the event streams, as a direct redis-server publishes them', () => {
  it('/psubscribe/__keyspace@0__:* and /psubscribe/__keyevent@0__:* get the same messages as on redis-server', async () => {
    for (const [pattern, flags] of [
      ['__keyspace@0__:*', 'KA'],
      ['__keyevent@0__:*', 'EA'],
    ]) {
      const expected = await oracleEvents(pattern, flags);
      expect(expected.length).toBeGreaterThanOrEqual(WRITES.length);
      const stream = await openEventStream(`${p().url}/psubscribe/${encodeURIComponent(pattern)}`, p().token);
      await stream.waitFor(1);
      expect((await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', flags])).json).toEqual({ result: 'OK' });
      for (const w of WRITES) expect((await command(p(), w)).status, w.join(' ')).toBe(200);
      const events = await stream.waitFor(1 + expected.length);
      stream.close();
      expect(events).toEqual([`psubscribe,${pattern},1`, ...expected]);
      await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', '']);
    }
  });

  it('/subscribe/__keyspace@0__:<key> with only hash events (Kh, the documented example)', async () => {
    const stream = await openEventStream(`${p().url}/subscribe/__keyspace@0__:ks:doc`, p().token);
    await stream.waitFor(1);
    await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', 'Kh']);
    await command(p(), ['SET', 'ks:doc', 'x']); // a string event: not published with Kh
    await command(p(), ['DEL', 'ks:doc']); // generic: not published either
    await command(p(), ['HSET', 'ks:doc', 'a', '1']);
    await command(p(), ['HINCRBY', 'ks:doc', 'a', '2']);
    await command(p(), ['HDEL', 'ks:doc', 'a']);
    expect(await stream.waitFor(4)).toEqual([
      'subscribe,__keyspace@0__:ks:doc,1',
      'message,__keyspace@0__:ks:doc,hset',
      'message,__keyspace@0__:ks:doc,hincrby',
      'message,__keyspace@0__:ks:doc,hdel',
    ]);
    // Disabling stops them.
    await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', '']);
    await command(p(), ['HSET', 'ks:doc', 'b', '1']);
    await new Promise((r) => setTimeout(r, 200));
    expect(stream.events).toHaveLength(4);
    stream.close();
  });

  it('reach a RESP client subscribed through the proxy (ioredis PSUBSCRIBE __keyspace@0__:*)', async () => {
    const expected = await oracleEvents('__keyspace@0__:*', 'K$g');
    expect(expected).toContain('pmessage,__keyspace@0__:*,__keyspace@0__:ks:l2,rename_to');
    const sub = new IORedis({ host: '127.0.0.1', port: stack.proxy.port, lazyConnect: true });
    await sub.connect();
    const got: string[] = [];
    sub.on('pmessage', (pat: string, channel: string, message: string) => got.push(`pmessage,${pat},${channel},${message}`));
    await sub.psubscribe('__keyspace@0__:*');
    // The setting is changed over REST, as the service documents it (the proxy answers CONFIG SET itself).
    expect((await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', 'K$g'])).json).toEqual({ result: 'OK' });
    for (const w of WRITES) await command(p(), w);
    await until(() => got.length >= expected.length);
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(expected);
    sub.disconnect();
    await command(p(), ['CONFIG', 'SET', 'notify-keyspace-events', '']);
  });
});

describe('globMatches (CONFIG GET patterns, as Redis matches them)', () => {
  it('matches *, ?, classes, negated classes and escapes, case-insensitively', () => {
    const name = 'notify-keyspace-events';
    for (const yes of ['*', 'notify-*', 'NOTIFY-*', '*events', 'notify?keyspace?events', '[mn]otify-*', '[^a]otify-*', 'notify\\-*'])
      expect(globMatches(yes, name), yes).toBe(true);
    for (const no of ['notify', 'maxmemory', '[^n]otify-*', 'notify-keyspace-event', '?']) expect(globMatches(no, name), no).toBe(false);
  });
});

describe('the setting across a restart', () => {
  it('is set again when the platform starts on the same data directory', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-notify-'));
    try {
      let q = await startTestPlatform({ dataDir: dir });
      expect((await command(q, ['CONFIG', 'SET', 'notify-keyspace-events', 'Egx'])).json).toEqual({ result: 'OK' });
      await q.stop();
      q = await startTestPlatform({ dataDir: dir, token: q.token, readonlyToken: q.readonlyToken });
      try {
        expect((await command(q, ['CONFIG', 'GET', 'notify-keyspace-events'])).json).toEqual({
          result: ['notify-keyspace-events', 'gxE'],
        });
      } finally {
        await q.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
