// Area A (account management of the queue instance): HTTP Basic auth, budget validation, the prod
// pack switch, the instance state read back, and the budget enforced on publishing (callbacks count).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

const EMAIL = 'ops@example.com';
const KEY = 'account-key-for-tests';
let p: RunningPlatform;
let dest: Destination;
let instanceId: string;

beforeAll(async () => {
  // $1 per message makes a $20 budget last 20 messages.
  p = await startTestPlatform({ accountEmail: EMAIL, accountKey: KEY, queueMessagePrice: 1 });
  dest = await startDestination();
  const users = await account('/v2/qstash/users', { method: 'GET' });
  instanceId = users.json[0].id;
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});

async function account(path: string, init: { method?: string; body?: string; auth?: string | null } = {}) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const auth = init.auth === undefined ? `${EMAIL}:${KEY}` : init.auth;
  if (auth !== null) headers.Authorization = 'Basic ' + Buffer.from(auth).toString('base64');
  const res = await fetch(`${p.url}/account${path}`, { method: init.method ?? 'POST', headers, body: init.body });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) };
}

const budget = (value: unknown, path = 'queue') =>
  account(`/v2/${path}/update-budget/${instanceId}`, { method: 'PATCH', body: JSON.stringify({ budget: value }) });

describe('Area A', () => {
  it('refuses missing or wrong credentials with 401, before looking at the instance', async () => {
    for (const auth of [null, `${EMAIL}:wrong`, `other@example.com:${KEY}`]) {
      const r = await account(`/v2/queue/disable-prodpack/${instanceId}`, { auth });
      expect(r.status).toBe(401);
      expect(r.json).toMatch(/^Unauthorized/);
      expect(JSON.stringify(r.json)).not.toContain(KEY);
    }
    expect((await account('/v2/queue/disable-prodpack/unknown', { auth: null })).status).toBe(401);
  });

  it('404 for an unknown instance id, 405 for the wrong method', async () => {
    const r = await account('/v2/queue/disable-prodpack/not-an-instance');
    expect(r.status).toBe(404);
    expect(r.json).toContain('queue instance not-an-instance not found');
    expect((await account(`/v2/queue/update-budget/${instanceId}`, { method: 'POST', body: '{"budget":20}' })).status).toBe(405);
  });

  it('budget: 0, 20 and 10000 are OK; anything else is a 400 with a clear error', async () => {
    for (const ok of [0, 20, 10000, 150]) expect(await budget(ok)).toEqual({ status: 200, json: 'OK' });
    for (const bad of [19, 1, 10001, -1, 25.5, '30', null]) {
      const r = await budget(bad);
      expect(r.status, String(bad)).toBe(400);
      expect(r.json).toMatch(/invalid budget .*: it must be a whole number of dollars, 0 \(no limit\) or from 20 to 10000/);
    }
    const noJson = await account(`/v2/queue/update-budget/${instanceId}`, { method: 'PATCH', body: 'budget=30' });
    expect(noJson.status).toBe(400);
    expect(noJson.json).toContain('{"budget": <dollars>}');
    // The state reads back (real Developer API shape: GET /qstash/user/{id}).
    expect((await account(`/v2/qstash/user/${instanceId}`, { method: 'GET' })).json).toMatchObject({ id: instanceId, budget: 150 });
  });

  it('disable-prodpack and enable-prodpack (both spellings) switch the prod pack', async () => {
    expect(await account(`/v2/qstash/enable-prodpack/${instanceId}`)).toEqual({ status: 200, json: 'OK' });
    expect((await account(`/v2/queue/user/${instanceId}`, { method: 'GET' })).json.prod_pack_enabled).toBe(true);
    expect(await account(`/v2/queue/disable-prodpack/${instanceId}`)).toEqual({ status: 200, json: 'OK' });
    expect((await account(`/v2/queue/user/${instanceId}`, { method: 'GET' })).json.prod_pack_enabled).toBe(false);
  });

  it('the budget is enforced on publishing, and callbacks are charged like any message', async () => {
    const before = (await account(`/v2/qstash/user/${instanceId}`, { method: 'GET' })).json.monthly_messages;
    // Budget $20 at $1 per message: room for 20 - before messages this month.
    expect(await budget(20)).toEqual({ status: 200, json: 'OK' });
    const publish = (headers: Record<string, string> = {}) =>
      fetch(`${p.url}/queue/v2/publish/${dest.url}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.token}`, ...headers },
        body: 'paid',
      });
    expect((await publish({ 'Upstash-Callback': `${dest.url}/cb` })).status).toBe(200);
    await dest.waitFor(2); // the message and its callback: two messages charged
    expect((await account(`/v2/qstash/user/${instanceId}`, { method: 'GET' })).json.monthly_messages).toBe(before + 2);
    for (let i = before + 2; i < 20; i++) expect((await publish()).status).toBe(200);
    const refused = await publish();
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as any).error).toMatch(/monthly budget of \$20 reached .*update-budget/);
    const state = (await account(`/v2/qstash/user/${instanceId}`, { method: 'GET' })).json;
    expect(state).toMatchObject({ budget: 20, monthly_messages: 20, monthly_spend: 20 });
    // 0 means no limit.
    expect(await budget(0)).toEqual({ status: 200, json: 'OK' });
    expect((await publish()).status).toBe(200);
  });
});
