// QFLOWCONTROL on the queue side port end to end: RESP clients (ioredis RESP2, node-redis RESP3,
// redis-cli, raw sockets) → side port → the real local platform's /v2/flowControl and
// /v2/globalParallelism over HTTP → real HTTP destinations that hold their answers until the test lets go.
import { stripVTControlCharacters } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startDestination, type Destination, type Reply } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';
import { deferred, until } from '../helpers/wait.js';
import { queuePort, rawText, redisCli } from './harness.js';

let platform: RunningPlatform;
let port: RunningSideport;
let io: IORedis;
let nr: ReturnType<typeof createClient>;
let dest: Destination;
let keyCounter = 0;
/** A fresh flow-control key per test, so tests never share limits. */
const freshKey = (name: string) => `sp-${name}-${++keyCounter}-${Date.now()}`;

beforeAll(async () => {
  platform = await startTestPlatform();
  port = await queuePort({ url: `${platform.url}/queue`, token: platform.token });
  io = new IORedis({ port: port.port });
  nr = createClient({ socket: { port: port.port }, RESP: 3 });
  await nr.connect();
});
afterAll(async () => {
  io?.disconnect();
  await nr?.quit();
  await port?.stop();
  await platform?.stop();
  await dest?.close();
});
beforeEach(async () => {
  await dest?.close();
  dest = await startDestination();
});

/** A RESP2 flat map reply as an object. */
function obj(flat: unknown): Record<string, any> {
  const a = flat as unknown[];
  const o: Record<string, any> = {};
  for (let i = 0; i < a.length; i += 2) o[a[i] as string] = a[i + 1];
  return o;
}

/** JSON as a RESP2 client sees it: booleans are the integers 1 and 0. */
function asResp2(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]));
}

/** The platform's REST answer, asked directly (what the side port must mirror). */
async function rest(path: string): Promise<any> {
  const res = await fetch(`${platform.url}/queue${path}`, { headers: { Authorization: `Bearer ${platform.token}` } });
  expect(res.status).toBe(200);
  return res.json();
}

const info = async (key: string) => obj(await io.call('QFLOWCONTROL', 'GET', key));
const ofPath = (prefix: string) => dest.received.filter((r) => r.path.startsWith(prefix));

/** Holds every answer of the destination until the test releases it. */
function holdReplies(d: Destination) {
  const held: Array<() => void> = [];
  const state = { inFlight: 0 };
  d.respond = () => {
    state.inFlight++;
    const gate = deferred<Reply>();
    held.push(() => {
      state.inFlight--;
      gate.resolve({ status: 200 });
    });
    return gate.promise;
  };
  const releaseAll = () => {
    while (held.length) held.shift()!();
  };
  return { state, held, releaseAll };
}

/** Lets every held and later request through until `n` requests to `prefix` arrived and were answered. */
async function drain(h: ReturnType<typeof holdReplies>, prefix: string, n: number): Promise<void> {
  await until(() => {
    h.releaseAll();
    return ofPath(prefix).length >= n && h.state.inFlight === 0;
  }, `${n} answered requests to ${prefix}`);
}

describe('QFLOWCONTROL LIST and GET', () => {
  it('show the key of a publish with PARALLELISM 1 and its counters exactly as the REST endpoints do', async () => {
    const key = freshKey('list');
    const h = holdReplies(dest);
    for (const i of [1, 2]) await io.call('QPUBLISH', `${dest.url}/list/${i}`, `m${i}`, 'FLOW-CONTROL', key, 'parallelism=1');
    await dest.waitFor(1);
    // One in flight, one waiting for its slot.
    await until(async () => (await info(key)).waitListSize === 1, 'the second message on the wait list');
    const got = await info(key);
    expect(got).toMatchObject({ flowControlKey: key, parallelismMax: 1, parallelismCount: 1, waitListSize: 1, isPaused: 0 });
    expect(got).toEqual(asResp2(await rest(`/v2/flowControl/${encodeURIComponent(key)}`)));
    // RESP3: a map with real booleans.
    expect(await nr.sendCommand(['QFLOWCONTROL', 'GET', key])).toMatchObject({ flowControlKey: key, isPaused: false });

    const listed = ((await io.call('QFLOWCONTROL', 'LIST', 'SEARCH', key)) as unknown[]).map(obj);
    expect(listed).toEqual((await rest(`/v2/flowControl?search=${encodeURIComponent(key)}`)).map(asResp2));
    expect(listed.map((i) => i.flowControlKey)).toEqual([key]);
    const all = ((await io.call('QFLOWCONTROL', 'LIST')) as unknown[]).map((i) => obj(i).flowControlKey);
    expect(all).toEqual((await rest('/v2/flowControl')).map((i: { flowControlKey: string }) => i.flowControlKey));
    expect(all).toContain(key);
    expect(await io.call('QFLOWCONTROL', 'LIST', 'search', `${key}-none`)).toEqual([]);

    await drain(h, '/list/', 2);
    expect(ofPath('/list/')).toHaveLength(2);
    expect(await info(key)).toMatchObject({ parallelismCount: 0, waitListSize: 0 });
  });
});

describe('QFLOWCONTROL PAUSE and RESUME', () => {
  it('PAUSE holds the key’s deliveries (others go on), RESUME releases them', async () => {
    const key = freshKey('pause');
    // A key can be paused before its first message (the platform creates it).
    expect(await io.call('QFLOWCONTROL', 'PAUSE', key)).toBe('OK');
    expect((await info(key)).isPaused).toBe(1);
    for (const i of [1, 2]) await io.call('QPUBLISH', `${dest.url}/paused/${i}`, 'x', 'FLOW-CONTROL', key, 'parallelism=5');
    // A message without flow control published after them is delivered: the worker ran, the paused ones stayed.
    await io.call('QPUBLISH', `${dest.url}/control`, 'x');
    await until(() => ofPath('/control').length === 1, 'the control message');
    expect(ofPath('/paused/')).toHaveLength(0);
    expect(await info(key)).toMatchObject({ isPaused: 1, waitListSize: 2, parallelismCount: 0 });

    expect(await io.call('QFLOWCONTROL', 'RESUME', key)).toBe('OK');
    // Well before the platform's 5 s recheck: the resume itself woke them.
    await dest.waitFor(3, 3000);
    expect(ofPath('/paused/')).toHaveLength(2);
    await until(async () => (await info(key)).waitListSize === 0, 'the wait list empty');
    expect((await info(key)).isPaused).toBe(0);
  });
});

describe('QFLOWCONTROL PIN, UNPIN and RESETRATE', () => {
  it('PIN changes the effective limits at once and against later publishes; UNPIN lets publishes set them again', async () => {
    const key = freshKey('pin');
    const h = holdReplies(dest);
    for (const i of [1, 2, 3]) await io.call('QPUBLISH', `${dest.url}/pin/${i}`, 'x', 'FLOW-CONTROL', key, 'parallelism=1');
    await dest.waitFor(1);
    await until(async () => (await info(key)).waitListSize === 2, 'two messages waiting');
    expect(h.state.inFlight).toBe(1);

    expect(await io.call('QFLOWCONTROL', 'PIN', key, 'PARALLELISM', '3', 'RATE', '20', 'PERIOD', '2m')).toBe('OK');
    // The two waiting messages start now: three in flight under the pinned parallelism.
    await dest.waitFor(3, 3000);
    expect(h.state.inFlight).toBe(3);
    expect(await info(key)).toMatchObject({
      parallelismMax: 3,
      rateMax: 20,
      ratePeriod: 120,
      isPinnedParallelism: 1,
      isPinnedRate: 1,
      parallelismCount: 3,
    });
    // A later publish asks for parallelism 1 and rate 1: the pinned values stay.
    await io.call('QPUBLISH', `${dest.url}/pin/4`, 'x', 'FLOW-CONTROL', key, 'parallelism=1, rate=1');
    expect(await info(key)).toMatchObject({ parallelismMax: 3, rateMax: 20 });

    expect(await io.call('QFLOWCONTROL', 'UNPIN', key, 'PARALLELISM')).toBe('OK');
    expect(await info(key)).toMatchObject({ isPinnedParallelism: 0, isPinnedRate: 1, parallelismMax: 3 });
    // The next publish brings its own parallelism again; the rate stays pinned.
    await io.call('QPUBLISH', `${dest.url}/pin/5`, 'x', 'FLOW-CONTROL', key, 'parallelism=2, rate=1');
    expect(await info(key)).toMatchObject({ parallelismMax: 2, rateMax: 20, ratePeriod: 120 });
    expect(await io.call('QFLOWCONTROL', 'UNPIN', key, 'rate')).toBe('OK');
    expect((await info(key)).isPinnedRate).toBe(0);
    await drain(h, '/pin/', 5);
  });

  it('RESETRATE answers OK and clears the count of the current rate window', async () => {
    const key = freshKey('rate');
    for (const i of [1, 2]) await io.call('QPUBLISH', `${dest.url}/rate/${i}`, 'x', 'FLOW-CONTROL', key, 'rate=5, period=1h');
    await dest.waitFor(2);
    expect(await info(key)).toMatchObject({ rateMax: 5, rateCount: 2, ratePeriod: 3600 });
    expect(await io.call('QFLOWCONTROL', 'RESETRATE', key)).toBe('OK');
    const after = await info(key);
    expect(after.rateCount).toBe(0);
    expect(after.ratePeriodStart).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 5);
  });
});

describe('QFLOWCONTROL GLOBAL', () => {
  it('answers the global parallelism as GET /v2/globalParallelism does', async () => {
    const global = obj(await io.call('QFLOWCONTROL', 'GLOBAL'));
    expect(Object.keys(global).sort()).toEqual(['parallelismCount', 'parallelismMax']);
    expect(global.parallelismMax).toBe((await rest('/v2/globalParallelism')).parallelismMax);
    expect(global.parallelismMax).toBeGreaterThan(0);
    expect(Number.isInteger(global.parallelismCount)).toBe(true);
  });
});

describe('bad input', () => {
  it('every bad call is a Redis-style error that names the fix, and none reaches the platform', async () => {
    const key = freshKey('bad');
    const replies = await rawText(port.port, [
      ['QFLOWCONTROL', 'GET'],
      ['QFLOWCONTROL', 'GET', key, 'extra'],
      ['QFLOWCONTROL', 'PAUSE'],
      ['QFLOWCONTROL', 'RESETRATE', key, 'now'],
      ['QFLOWCONTROL', 'GLOBAL', 'x'],
      ['QFLOWCONTROL', 'PIN', key],
      ['QFLOWCONTROL', 'PIN', key, 'PARALLELISM', 'many'],
      ['QFLOWCONTROL', 'PIN', key, 'PARALLELISM', '0'],
      ['QFLOWCONTROL', 'PIN', key, 'RATE', '-3'],
      ['QFLOWCONTROL', 'PIN', key, 'PERIOD', 'soon'],
      ['QFLOWCONTROL', 'PIN', key, 'PERIOD', '0s'],
      ['QFLOWCONTROL', 'PIN', key, 'BURST', '3'],
      ['QFLOWCONTROL', 'PIN', key, 'RATE'],
      ['QFLOWCONTROL', 'UNPIN', key],
      ['QFLOWCONTROL', 'UNPIN', key, 'PERIOD'],
      ['QFLOWCONTROL', 'LIST', 'SEARCH'],
      ['QFLOWCONTROL', 'LIST', 'PREFIX', 'a'],
      ['QFLOWCONTROL', 'STATS', key],
      ['QFLOWCONTROL'],
      ['QFLOWCONTROL', 'GET', key],
    ]);
    expect(replies).toEqual([
      "-ERR wrong number of arguments for 'qflowcontrol|get' command\r\n",
      "-ERR wrong number of arguments for 'qflowcontrol|get' command\r\n",
      "-ERR wrong number of arguments for 'qflowcontrol|pause' command\r\n",
      "-ERR wrong number of arguments for 'qflowcontrol|resetrate' command\r\n",
      "-ERR wrong number of arguments for 'qflowcontrol|global' command\r\n",
      '-ERR nothing to pin: give PARALLELISM n, RATE n and/or PERIOD duration, e.g. QFLOWCONTROL PIN key RATE 20 PERIOD 1m\r\n',
      '-ERR PARALLELISM is not an integer or out of range\r\n',
      "-ERR PARALLELISM must be a whole number >= 1, got '0'\r\n",
      "-ERR RATE must be a whole number >= 1, got '-3'\r\n",
      "-ERR PERIOD must be a duration such as 30s, 10m, 2h, 1d or 1h30m (a plain number is seconds), got 'soon'\r\n",
      "-ERR PERIOD must be at least 1 second, got '0s'\r\n",
      "-ERR syntax error: unknown option 'BURST' for QFLOWCONTROL PIN (see QFLOWCONTROL HELP or HELP QFLOWCONTROL)\r\n",
      '-ERR syntax error\r\n',
      '-ERR nothing to unpin: give PARALLELISM and/or RATE, e.g. QFLOWCONTROL UNPIN key PARALLELISM RATE\r\n',
      "-ERR syntax error: unknown option 'PERIOD' for QFLOWCONTROL UNPIN (see QFLOWCONTROL HELP or HELP QFLOWCONTROL)\r\n",
      '-ERR syntax error\r\n',
      "-ERR syntax error: unknown option 'PREFIX' for QFLOWCONTROL LIST (see QFLOWCONTROL HELP or HELP QFLOWCONTROL)\r\n",
      "-ERR unknown subcommand 'STATS'. Try QFLOWCONTROL HELP.\r\n",
      "-ERR wrong number of arguments for 'qflowcontrol' command\r\n",
      // None of the refused PINs/UNPINs reached the platform (a pin there would have created the key):
      // an unknown key is the platform's 404 with its own text.
      `-ERR queue service error (HTTP 404): flowControl key ${key} not found: publish with Upstash-Flow-Control-Key: ${key} first\r\n`,
    ]);
  });
});

describe('discovery', () => {
  it('QFLOWCONTROL HELP, HELP QFLOWCONTROL, COMMAND DOCS and redis-cli help list the subcommands', async () => {
    const help = ((await io.call('QFLOWCONTROL', 'HELP')) as string[]).join('\n');
    for (const line of [
      'LIST [SEARCH text]',
      'GET key',
      'PAUSE key',
      'RESUME key',
      'PIN key [PARALLELISM parallelism] [RATE rate] [PERIOD duration]',
      'UNPIN key [PARALLELISM] [RATE]',
      'RESETRATE key',
      'GLOBAL',
    ])
      expect(help).toContain(`\n${line}\n`);
    expect(((await io.call('HELP', 'QFLOWCONTROL')) as string[]).join('\n')).toBe(help);
    expect(((await io.call('HELP')) as string[]).join('\n')).toMatch(/QFLOWCONTROL/);
    const docs = (await nr.sendCommand(['COMMAND', 'DOCS', 'qflowcontrol'])) as Record<string, any>;
    expect(Object.keys(docs.qflowcontrol.subcommands).sort()).toEqual(
      [
        'qflowcontrol|get',
        'qflowcontrol|global',
        'qflowcontrol|help',
        'qflowcontrol|list',
        'qflowcontrol|pause',
        'qflowcontrol|pin',
        'qflowcontrol|resetrate',
        'qflowcontrol|resume',
        'qflowcontrol|unpin',
      ].sort(),
    );
    expect(docs.qflowcontrol.subcommands['qflowcontrol|pin'].group).toBe('queue');
    // redis-cli colours its help (ANSI escapes) even on a pipe: compare the text without them.
    const cli = stripVTControlCharacters(await redisCli(port.port, ['help', '@queue']));
    expect(cli).toMatch(/QFLOWCONTROL PIN key \[PARALLELISM parallelism\] \[RATE rate\] \[PERIOD duration\]/);
    expect(cli).toMatch(/QFLOWCONTROL GLOBAL/);
    expect(await redisCli(port.port, ['QFLOWCONTROL', 'HELP'])).toContain('UNPIN key [PARALLELISM] [RATE]');
  });
});
