// Flow control (Upstash-Flow-Control-Key/-Value) with the official @upstash/qstash Client, unchanged,
// against the local platform and real HTTP destinations: parallelism and rate limits per key,
// pause/resume, pin/unpin, resetRate, the info and list endpoints, filters, bad values, and a
// restart in the middle of a wait.
import { Client, QstashError } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { startDestination, type Destination, type Received, type Reply } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';
import { deferred, until } from '../helpers/wait.js';

let p: RunningPlatform;
let client: Client;
let dest: Destination;
let keyCounter = 0;
/** A fresh flow-control key per test, so tests never share limits. */
const freshKey = (name: string) => `${name}-${++keyCounter}-${Date.now()}`;

beforeAll(async () => {
  p = await startTestPlatform();
  client = new Client({ baseUrl: `${p.url}/queue`, token: p.token, enableTelemetry: false, retry: false });
  dest = await startDestination();
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});

/** Holds every reply until the test lets it go; counts the requests in flight and their maximum. */
function holdReplies(d: Destination) {
  const held: Array<() => void> = [];
  const state = { inFlight: 0, maxInFlight: 0, held };
  d.respond = () => {
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const gate = deferred<Reply>();
    held.push(() => {
      state.inFlight--;
      gate.resolve({ status: 200 });
    });
    return gate.promise;
  };
  /** Answers the oldest held request. */
  const releaseOne = () => held.shift()!();
  return { state, releaseOne };
}

const api = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${p.url}/queue${path}`, { ...init, headers: { Authorization: `Bearer ${p.token}`, ...init.headers } });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
};

const ofPath = (prefix: string) => dest.received.filter((r) => r.path.startsWith(prefix));
const waitForPath = (prefix: string, n: number, ms = 10_000) => until(() => ofPath(prefix).length >= n, `${n} requests to ${prefix}`, ms);

describe('delivery honours flow control per key', () => {
  it('parallelism 2 with a slow destination: never more than 2 in flight, all delivered once, info follows', async () => {
    const key = freshKey('par');
    const { state, releaseOne } = holdReplies(dest);
    const ids = [];
    for (let i = 0; i < 6; i++)
      ids.push((await client.publish({ url: `${dest.url}/par/${i}`, body: `m${i}`, flowControl: { key, parallelism: 2 } })).messageId);
    await waitForPath('/par/', 2);
    const info = await client.flowControl.get(key);
    expect(info).toMatchObject({ flowControlKey: key, parallelismMax: 2, parallelismCount: 2, waitListSize: 4, rateMax: 0 });
    expect(info.isPaused).toBe(false);
    // Each answer lets exactly one more start.
    for (let n = 3; n <= 6; n++) {
      releaseOne();
      await waitForPath('/par/', n);
      expect(state.inFlight).toBeLessThanOrEqual(2);
    }
    while (state.held.length) releaseOne();
    await until(async () => (await client.flowControl.get(key)).parallelismCount === 0, 'all slots free');
    expect(state.maxInFlight).toBe(2);
    const delivered = ofPath('/par/').map((r) => r.headers['upstash-message-id']);
    expect(delivered.sort()).toEqual([...ids].sort());
    expect((await client.flowControl.get(key)).waitListSize).toBe(0);
  });

  it('rate 5 per second spreads 15 messages over at least 2 s (5 per window)', async () => {
    const key = freshKey('rate');
    dest.respond = () => ({ status: 200 });
    await client.batchJSON(
      Array.from({ length: 15 }, (_, i) => ({ url: `${dest.url}/rate/${i}`, body: { i }, flowControl: { key, rate: 5 } })),
    );
    await waitForPath('/rate/', 15, 8000);
    const at = ofPath('/rate/')
      .map((r) => r.at)
      .sort((x, y) => x - y);
    // Fixed windows of 1 s from the first start: 5 in the first, 5 from 1 s on, 5 from 2 s on.
    expect(at[5] - at[0]).toBeGreaterThanOrEqual(950);
    expect(at[10] - at[0]).toBeGreaterThanOrEqual(1950);
    expect(at[4] - at[0]).toBeLessThan(900);
  });

  it('rate 2 per 1m: the third waits in the wait list until resetRate ends the window', async () => {
    const key = freshKey('minute');
    dest.respond = () => ({ status: 200 });
    for (let i = 0; i < 3; i++)
      await client.publish({ url: `${dest.url}/minute/${i}`, body: 'x', flowControl: { key, rate: 2, period: '1m' } });
    await waitForPath('/minute/', 2);
    await until(async () => (await client.flowControl.get(key)).rateCount === 2, 'rate count 2');
    const info = await client.flowControl.get(key);
    expect(info).toMatchObject({ rateMax: 2, rateCount: 2, ratePeriod: 60, waitListSize: 1, parallelismMax: 0 });
    expect(Math.abs(info.ratePeriodStart - Date.now() / 1000)).toBeLessThan(10);
    expect(ofPath('/minute/')).toHaveLength(2);
    await client.flowControl.resetRate(key);
    await waitForPath('/minute/', 3, 3000);
    expect((await client.flowControl.get(key)).waitListSize).toBe(0);
  });

  it('retries count against the same key: parallelism 1 holds a retry and the next message apart', async () => {
    const key = freshKey('retry');
    let inFlight = 0;
    let maxInFlight = 0;
    const attempts = new Map<string, number>();
    dest.respond = async (r: Received) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const n = (attempts.get(r.path) ?? 0) + 1;
      attempts.set(r.path, n);
      await new Promise((resolve) => setTimeout(resolve, 50));
      inFlight--;
      return { status: r.path === '/retry/0' && n === 1 ? 500 : 200 };
    };
    for (let i = 0; i < 3; i++)
      await client.publish({ url: `${dest.url}/retry/${i}`, body: 'x', retries: 2, retryDelay: '0', flowControl: { key, parallelism: 1 } });
    await waitForPath('/retry/', 4);
    await until(async () => (await client.flowControl.get(key)).parallelismCount === 0, 'slots free');
    expect(attempts.get('/retry/0')).toBe(2);
    expect(maxInFlight).toBe(1);
  });
});

describe('managing a key', () => {
  it('pause holds deliveries (new ones join the wait list), resume releases them at once', async () => {
    const key = freshKey('pause');
    dest.respond = () => ({ status: 200 });
    await client.flowControl.pause(key);
    expect((await client.flowControl.get(key)).isPaused).toBe(true);
    for (let i = 0; i < 3; i++) await client.publish({ url: `${dest.url}/pause/${i}`, body: 'x', flowControl: { key, parallelism: 5 } });
    // A message without flow control published after them is delivered: the worker ran, the paused ones stayed.
    await client.publish({ url: `${dest.url}/pause-control`, body: 'x' });
    await waitForPath('/pause-control', 1);
    expect(ofPath('/pause/')).toHaveLength(0);
    expect((await client.flowControl.get(key)).waitListSize).toBe(3);
    await client.flowControl.resume(key);
    // Well before the 5 s recheck of a paused key: the resume itself woke them.
    await waitForPath('/pause/', 3, 3000);
    expect(await client.flowControl.get(key)).toMatchObject({ isPaused: false, waitListSize: 0 });
  });

  it('pin overrides the values of later publishes until unpinned; pinning wakes the waiting ones', async () => {
    const key = freshKey('pin');
    const { state, releaseOne } = holdReplies(dest);
    for (let i = 0; i < 4; i++) await client.publish({ url: `${dest.url}/pin/${i}`, body: 'x', flowControl: { key, parallelism: 1 } });
    await waitForPath('/pin/', 1);
    await client.flowControl.pin(key, { parallelism: 3, rate: 20, period: 120 });
    await waitForPath('/pin/', 3, 3000);
    expect(state.inFlight).toBe(3);
    const pinned = await client.flowControl.get(key);
    expect(pinned).toMatchObject({ isPinnedParallelism: true, isPinnedRate: true, parallelismMax: 3, rateMax: 20, ratePeriod: 120 });
    // A later publish asks for parallelism 1: the pinned 3 stays.
    await client.publish({ url: `${dest.url}/pin/4`, body: 'x', flowControl: { key, parallelism: 1, rate: 1 } });
    expect(await client.flowControl.get(key)).toMatchObject({ parallelismMax: 3, rateMax: 20, waitListSize: 2 });
    await client.flowControl.unpin(key, { parallelism: true });
    const partial = await client.flowControl.get(key);
    expect(partial).toMatchObject({ isPinnedParallelism: false, isPinnedRate: true, parallelismMax: 3 });
    // The next publish brings its own parallelism again (the rate stays pinned).
    await client.publish({ url: `${dest.url}/pin/5`, body: 'x', flowControl: { key, parallelism: 2, rate: 1 } });
    expect(await client.flowControl.get(key)).toMatchObject({ parallelismMax: 2, rateMax: 20 });
    await client.flowControl.unpin(key, { rate: true });
    expect((await client.flowControl.get(key)).isPinnedRate).toBe(false);
    while (ofPath('/pin/').length < 6 || state.held.length) {
      if (state.held.length) releaseOne();
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(ofPath('/pin/')).toHaveLength(6);
  });

  it('list (with search), global parallelism, message records and filtered cancel know the key', async () => {
    const key = freshKey('listed');
    const other = freshKey('other');
    await client.flowControl.pause(key);
    const a = await client.publish({ url: `${dest.url}/listed/a`, body: 'a', flowControl: { key, parallelism: 4, rate: 7, period: 30 } });
    const b = await client.publish({ url: `${dest.url}/listed/b`, body: 'b', flowControl: { key, parallelism: 4 } });
    await client.flowControl.pause(other);
    const c = await client.publish({ url: `${dest.url}/listed/c`, body: 'c', flowControl: { key: other, parallelism: 1 } });

    const all = await api('/v2/flowControl');
    expect(all.status).toBe(200);
    expect(all.json.map((i: { flowControlKey: string }) => i.flowControlKey)).toEqual(expect.arrayContaining([key, other]));
    const found = await api(`/v2/flowControl?search=${encodeURIComponent(key)}`);
    expect(found.json).toEqual([await client.flowControl.get(key)]);
    expect(Object.keys(found.json[0]).sort()).toEqual(
      [
        'flowControlKey',
        'waitListSize',
        'parallelismMax',
        'parallelismCount',
        'rateMax',
        'rateCount',
        'ratePeriod',
        'ratePeriodStart',
        'isPaused',
        'isPinnedParallelism',
        'isPinnedRate',
      ].sort(),
    );

    const global = await client.flowControl.getGlobalParallelism();
    expect(global.parallelismMax).toBe(200);
    expect(global.parallelismCount).toBeGreaterThanOrEqual(0);

    const record = await client.messages.get(a.messageId);
    expect(record).toMatchObject({ flowControlKey: key, parallelism: 4, rate: 7, period: 30 });

    const { scheduleId } = await client.schedules.create({
      destination: `${dest.url}/listed/scheduled`,
      cron: '0 0 1 1 *',
      flowControl: { key, rate: 3, period: '1h' },
    });
    expect(await client.schedules.get(scheduleId)).toMatchObject({ flowControlKey: key, rate: 3, period: 3600 });
    await client.schedules.delete(scheduleId);

    expect(await client.messages.cancel({ filter: { flowControlKey: key } })).toEqual({ cancelled: 2 });
    // The event log knows the key too: its filter keeps the two messages' events only.
    const cancelledOf = async () =>
      (await client.logs({ filter: { flowControlKey: key } })).logs.filter((l) => String(l.state) === 'CANCELLED').map((l) => l.messageId);
    await until(async () => (await cancelledOf()).length === 2, 'two cancel events');
    expect((await cancelledOf()).sort()).toEqual([a.messageId, b.messageId].sort());
    expect(
      (await client.logs({ filter: { flowControlKey: key } })).logs.every((l) => [a.messageId, b.messageId].includes(l.messageId)),
    ).toBe(true);
    expect((await client.flowControl.get(key)).waitListSize).toBe(0);
    expect((await client.messages.get(c.messageId)).messageId).toBe(c.messageId);
    await client.messages.cancel(c.messageId);
  });
});

describe('with named queues', () => {
  it('an enqueued message is held by its key too; deleting the queue takes its messages off the wait list', async () => {
    const key = freshKey('queued');
    const queueName = freshKey('fcq');
    dest.respond = () => ({ status: 200 });
    await client.queue({ queueName }).upsert({ parallelism: 5 });
    await client.flowControl.pause(key);
    const enqueue = (i: number) =>
      api(`/v2/enqueue/${queueName}/${dest.url}/queued/${i}`, {
        method: 'POST',
        headers: { 'Upstash-Flow-Control-Key': key, 'Upstash-Flow-Control-Value': 'parallelism=1' },
        body: `${i}`,
      });
    expect((await enqueue(1)).status).toBe(200);
    expect((await enqueue(2)).status).toBe(200);
    expect((await client.flowControl.get(key)).waitListSize).toBe(2);
    await client.queue({ queueName }).delete();
    expect((await client.flowControl.get(key)).waitListSize).toBe(0);
    await client.flowControl.resume(key);
  });
});

describe('bad values are refused in the service style', () => {
  const publishWith = (headers: Record<string, string>) =>
    api(`/v2/publish/${dest.url}/bad`, { method: 'POST', headers: { 'Content-Type': 'text/plain', ...headers }, body: 'x' });

  it.each([
    ['parallelism=0', /parallelism must be a whole number >= 1, got '0'/],
    ['rate=abc', /rate must be a whole number >= 1, got 'abc'/],
    ['burst=3', /^Upstash-Flow-Control-Value should be either rate=X or parallelism=Y, or both as comma-separated values, got 'burst=3'/],
    ['period=1m', /should be either rate=X or parallelism=Y/],
    ['rate=2, period=500ms', /period must be a whole number of seconds >= 1 .* got '500ms'/],
    ['rate=2, period=soon', /period must be .* got 'soon'/],
    ['rate=2, rate=3', /rate is given twice/],
  ])('Upstash-Flow-Control-Value: %s', async (value, error) => {
    const res = await publishWith({ 'Upstash-Flow-Control-Key': 'k', 'Upstash-Flow-Control-Value': value });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(error);
  });

  it('a key without a value, and a value without a key', async () => {
    const noValue = await publishWith({ 'Upstash-Flow-Control-Key': 'k' });
    expect(noValue.status).toBe(400);
    expect(noValue.json.error).toMatch(/^Upstash-Flow-Control-Value header is missing for Upstash-Flow-Control-Key 'k'/);
    const noKey = await publishWith({ 'Upstash-Flow-Control-Value': 'parallelism=1' });
    expect(noKey.status).toBe(400);
    expect(noKey.json.error).toMatch(/^Upstash-Flow-Control-Key header is missing/);
  });

  it('the SDK surfaces the refusal as a QstashError', async () => {
    const err = await client.publish({ url: `${dest.url}/bad`, body: 'x', flowControl: { key: 'k', parallelism: 0 } }).catch((e) => e);
    expect(err).toBeInstanceOf(QstashError);
    expect(String(err.message)).toMatch(/parallelism must be a whole number >= 1/);
  });

  it('management: unknown key, bad pin and unpin values', async () => {
    const unknown = await api('/v2/flowControl/never-published');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatch(/^flowControl key never-published not found/);
    const pin0 = await api('/v2/flowControl/k/pin?parallelism=0', { method: 'POST' });
    expect(pin0).toMatchObject({ status: 400, json: { error: "invalid parallelism '0': it must be a whole number >= 1" } });
    const pinNothing = await api('/v2/flowControl/k/pin', { method: 'POST' });
    expect(pinNothing.status).toBe(400);
    expect(pinNothing.json.error).toMatch(/^nothing to pin/);
    const unpinBad = await api('/v2/flowControl/k/unpin?rate=yes', { method: 'POST' });
    expect(unpinBad).toMatchObject({ status: 400, json: { error: "invalid rate 'yes': use true or false" } });
    const unpinNothing = await api('/v2/flowControl/k/unpin', { method: 'POST' });
    expect(unpinNothing.status).toBe(400);
    expect((await api('/v2/flowControl/k/explode', { method: 'POST' })).status).toBe(404);
  });
});

describe('durability', () => {
  let internal: EmbeddedRedis;
  let restartDest: Destination;
  let q: RunningPlatform | undefined;
  beforeAll(async () => {
    internal = await startEmbeddedRedis({ password: null });
    restartDest = await startDestination();
  });
  afterAll(async () => {
    await q?.stop();
    await restartDest?.close();
    await internal?.stop();
  });

  it('a restart in the middle of a wait loses nothing, delivers each once, keeps the limit and the pause', async () => {
    const token = p.token;
    const start = () => startTestPlatform({ token, internalRedisUrl: `redis://127.0.0.1:${internal.endpoint.port}` });
    q = await start();
    let sdk = new Client({ baseUrl: `${q.url}/queue`, token, enableTelemetry: false, retry: false });
    const key = freshKey('restart');
    const pausedKey = freshKey('restart-paused');
    let inFlight = 0;
    let maxInFlight = 0;
    const successes = new Map<string, number>();
    restartDest.respond = async (r) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 100));
      inFlight--;
      const id = r.headers['upstash-message-id'] as string;
      successes.set(id, (successes.get(id) ?? 0) + 1);
      return { status: 200 };
    };
    await sdk.flowControl.pause(pausedKey);
    const held = await sdk.publish({ url: `${restartDest.url}/held`, body: 'h', flowControl: { key: pausedKey, parallelism: 1 } });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await sdk.publish({ url: `${restartDest.url}/r/${i}`, body: `${i}`, flowControl: { key, parallelism: 1 } })).messageId);
    await restartDest.waitFor(2);
    await q.stop();
    q = undefined;
    expect(successes.size).toBeLessThan(6);

    q = await start();
    sdk = new Client({ baseUrl: `${q.url}/queue`, token, enableTelemetry: false, retry: false });
    await until(() => ids.every((id) => successes.get(id) === 1), 'all six delivered after the restart', 10_000);
    for (const id of ids) expect(successes.get(id), id).toBe(1);
    expect(maxInFlight).toBe(1);
    // The paused key is still paused: its message is still waiting.
    expect(await sdk.flowControl.get(pausedKey)).toMatchObject({ isPaused: true, waitListSize: 1 });
    expect(successes.has(held.messageId)).toBe(false);
    await sdk.flowControl.resume(pausedKey);
    await until(() => successes.get(held.messageId) === 1, 'the held message after resume', 3000);
  });
});
