// Durability: the platform restarts (on a kept internal redis-server) in the middle of delays and
// retries; every message is still delivered, successfully once, and nothing completed is redone.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateToken } from '../../src/config.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let internal: EmbeddedRedis;
let dest: Destination;
let p: RunningPlatform | undefined;
const token = generateToken();

beforeAll(async () => {
  internal = await startEmbeddedRedis({ password: null });
  dest = await startDestination();
});
afterAll(async () => {
  await p?.stop();
  await dest?.close();
  await internal?.stop();
});

const start = () => startTestPlatform({ token, internalRedisUrl: `redis://127.0.0.1:${internal.endpoint.port}` });

async function publish(path: string, headers: Record<string, string>, body: string) {
  const res = await fetch(`${p!.url}/queue/v2/publish/${dest.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, ...headers },
    body,
  });
  return (await res.json()) as { messageId: string; deduplicated?: boolean };
}

it('a restart in the middle of delays and retries loses nothing and delivers completed messages once', async () => {
  // First attempts of /flaky/* fail; everything else succeeds.
  const attempts = new Map<string, number>();
  const successes = new Map<string, number>();
  dest.respond = (r) => {
    const n = (attempts.get(r.path) ?? 0) + 1;
    attempts.set(r.path, n);
    if (r.path.startsWith('/flaky/') && n === 1) return { status: 500 };
    const id = r.headers['upstash-message-id'] as string;
    successes.set(id, (successes.get(id) ?? 0) + 1);
    return { status: 200 };
  };
  p = await start();
  const keysBefore = await (await fetch(`${p.url}/queue/v2/keys`, { headers: { Authorization: `Bearer ${token}` } })).json();
  const done = await Promise.all([1, 2, 3, 4, 5].map((i) => publish(`/done/${i}`, {}, `done ${i}`)));
  await dest.waitFor(5);
  const delayed = await Promise.all([1, 2, 3, 4, 5].map((i) => publish(`/delayed/${i}`, { 'Upstash-Delay': '2s' }, `delayed ${i}`)));
  const flaky = await Promise.all(
    [1, 2, 3, 4, 5].map((i) =>
      publish(`/flaky/${i}`, { 'Upstash-Retry-Delay': '2000', 'Upstash-Deduplication-Id': `flaky-${i}` }, `flaky ${i}`),
    ),
  );
  // Wait until every flaky message has failed once (its retry is now a delayed job), then restart.
  await dest.waitFor(10);
  await p.stop();
  p = undefined;
  const deliveredBeforeRestart = dest.received.length;
  expect(deliveredBeforeRestart).toBe(10);

  p = await start();
  expect(await (await fetch(`${p.url}/queue/v2/keys`, { headers: { Authorization: `Bearer ${token}` } })).json()).toEqual(keysBefore);
  // Deduplication ids survive the restart too.
  expect(await publish('/flaky/1', { 'Upstash-Deduplication-Id': 'flaky-1' }, 'again')).toMatchObject({
    messageId: flaky[0].messageId,
    deduplicated: true,
  });
  await dest.waitFor(20, 15_000);
  for (const m of [...done, ...delayed, ...flaky]) expect(successes.get(m.messageId), m.messageId).toBe(1);
  expect([...attempts.values()].every((n) => n <= 2)).toBe(true);
  // Nothing is left pending, so nothing can be delivered again.
  // (The last answers may still be completing their jobs: wait for that, bounded.)
  for (const m of [...done, ...delayed, ...flaky]) {
    let status = 0;
    for (let i = 0; i < 100 && status !== 404; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 20));
      status = (await fetch(`${p.url}/queue/v2/messages/${m.messageId}`, { headers: { Authorization: `Bearer ${token}` } })).status;
    }
    expect(status, m.messageId).toBe(404);
  }
  expect(dest.received).toHaveLength(20);
}, 30_000);

it('stopping waits for a destination that never answers only for the grace period (5 s)', async () => {
  const hanging = await startDestination();
  hanging.respond = () => new Promise(() => undefined);
  try {
    await p?.stop(); // the first test's platform would otherwise take the job
    p = await start();
    const res = await fetch(`${p.url}/queue/v2/publish/${hanging.url}/hang`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: 'hang',
    });
    expect(res.status).toBe(200);
    await hanging.waitFor(1);
    const t0 = Date.now();
    await p.stop();
    p = undefined;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
    expect(Date.now() - t0).toBeLessThan(8000);
  } finally {
    await hanging.close();
  }
}, 20_000);
