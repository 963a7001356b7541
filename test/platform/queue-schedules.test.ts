// Schedules as the service keeps them (REST reference, the SDK's schedules.test.ts): minute
// resolution (a six-field cron is refused), schedule ids of letters, digits, '-', '.' and '_',
// lastScheduleStates of the last tick's messages, header names in Go's canonical form, no body
// field for an empty body. A tick is made due now by promoting the scheduler's delayed job in the
// platform's own internal store, so a test does not wait for the next minute.
import { Client } from '@upstash/qstash';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/config.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let internal: EmbeddedRedis;
let p: RunningPlatform;
let client: Client;
let dest: Destination;
let ticks: Queue;
const token = generateToken();

beforeAll(async () => {
  internal = await startEmbeddedRedis({ password: null });
  p = await startTestPlatform({ token, internalRedisUrl: `redis://127.0.0.1:${internal.endpoint.port}`, queueBackoffScale: 0.001 });
  client = new Client({ baseUrl: `${p.url}/queue`, token, enableTelemetry: false, retry: false });
  dest = await startDestination();
  ticks = new Queue('schedules', { connection: { port: internal.endpoint.port }, prefix: 'respgate:bull' });
});
afterAll(async () => {
  await ticks?.close();
  await dest?.close();
  await p?.stop();
  await internal?.stop();
});

/** Makes the schedule's next tick due now. */
async function tickNow(scheduleId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const job = (await ticks.getDelayed()).find((j) => (j.data as { scheduleId: string }).scheduleId === scheduleId);
    if (job) return job.promote();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no pending tick for ${scheduleId}`);
}

async function until<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await get();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function create(cron: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/queue/v2/schedules/${dest.url}/x`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Upstash-Cron': cron, ...headers },
  });
  return { status: res.status, json: (await res.json()) as { error?: string; scheduleId?: string } };
}

describe('schedules', () => {
  it('a six-field (seconds) cron is refused with 400; five fields, with or without CRON_TZ, are taken', async () => {
    const six = await create('*/10 * * * * *');
    expect(six.status).toBe(400);
    expect(six.json.error).toMatch(/^invalid cron expression '\*\/10 \* \* \* \* \*': it must have 5 fields/);
    expect((await create('* * * *')).status).toBe(400);
    expect((await create('CRON_TZ=Europe/Berlin 0 9 * * * *')).status).toBe(400);
    const ok = await create('CRON_TZ=Europe/Berlin 0 9 * * *');
    expect(ok.status).toBe(200);
    await client.schedules.delete(ok.json.scheduleId!);
    expect((await client.schedules.list()).length).toBe(0);
  });

  it('an invalid schedule id is refused with 400; ids with - . _ are taken', async () => {
    for (const id of ['has space', 'slash/id', 'star*', 'ümlaut']) {
      const r = await create('* * * * *', { 'Upstash-Schedule-Id': encodeURIComponent(id) === id ? id : id.replace(/[^\x20-\x7e]/g, '?') });
      expect(r.status, id).toBe(400);
      expect(r.json.error, id).toMatch(/Schedule IDs can only contain alphanumeric characters, hyphens, periods, and underscores/);
    }
    const good = await create('* * * * *', { 'Upstash-Schedule-Id': 'my-schedule_1.v2' });
    expect(good.json).toEqual({ scheduleId: 'my-schedule_1.v2' });
    await client.schedules.delete('my-schedule_1.v2');
  });

  it('the SDK round trip: canonical header names, trimmed cron, no body when empty', async () => {
    const { scheduleId } = await client.schedules.create({
      destination: `${dest.url}/sdk`,
      headers: { 'test-header': 'test-value', 'Upstash-Forward-bypass-tunnel-reminder': 'client-test' },
      method: 'GET',
      retries: 5,
      cron: '*/10 * * * * ',
    });
    const s = await client.schedules.get(scheduleId);
    expect(s).toMatchObject({
      cron: '*/10 * * * *',
      method: 'GET',
      retries: 5,
      header: { 'Bypass-Tunnel-Reminder': ['client-test'], 'Content-Type': ['application/json'], 'Test-Header': ['test-value'] },
      lastScheduleStates: {},
    });
    expect(s.body).toBeUndefined();
    await client.schedules.delete(scheduleId);
  });

  it("lastScheduleStates: the last tick's messages, IN_PROGRESS, then SUCCESS or FAIL", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    dest.respond = async (r) => {
      if (r.path === '/ok') await held;
      return { status: r.path === '/ok' ? 200 : 500 };
    };
    await client.urlGroups.addEndpoints({ name: 'tick-group', endpoints: [{ url: `${dest.url}/ok` }, { url: `${dest.url}/bad` }] });
    const { scheduleId } = await client.schedules.create({ destination: 'tick-group', cron: '* * * * *', retries: 0 });
    await tickNow(scheduleId);
    const running = await until(
      async () => (await client.schedules.get(scheduleId)).lastScheduleStates ?? {},
      (states) => Object.keys(states).length === 2,
      'the tick',
    );
    expect(Object.values(running)).toContain('IN_PROGRESS');
    release();
    const done = await until(
      async () => (await client.schedules.get(scheduleId)).lastScheduleStates ?? {},
      (states) => !Object.values(states).includes('IN_PROGRESS'),
      'the outcomes',
    );
    expect(Object.values(done).sort()).toEqual(['FAIL', 'SUCCESS']);
    const logs = await client.logs({ filter: { scheduleId } });
    expect(new Set(logs.logs.map((l) => l.messageId))).toEqual(new Set(Object.keys(done)));
    await client.schedules.delete(scheduleId);
  });
});
