// The filters of the list and bulk endpoints select exactly what the service selects (REST reference
// qstash/openapi.yaml, the SDK's src/client/dlq.ts, messages.ts and their tests): the DLQ's messageId
// and multi-value responseStatus, the callerIP alias, count on a bulk cancel, cursors that survive a
// bulk delete, and unknown fields or malformed values refused with 400 before anything is touched.
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let client: Client;
let dest: Destination;

beforeAll(async () => {
  p = await startTestPlatform({ queueBackoffScale: 0.001 });
  client = new Client({ baseUrl: `${p.url}/queue`, token: p.token, enableTelemetry: false, retry: false });
  dest = await startDestination();
  // /s<status>/… answers that status: the DLQ entries get different response statuses.
  dest.respond = (r) => {
    const m = /^\/s(\d{3})\//.exec(r.path);
    return { status: m ? Number(m[1]) : 200, body: 'x' };
  };
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});

async function call(path: string, method = 'GET', headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/queue${path}`, { method, headers: { Authorization: `Bearer ${p.token}`, ...headers } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Publishes failing messages (retries 0) and waits until all are in the DLQ. */
async function dead(paths: string[], extra: { label?: string; headers?: Record<string, string> } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (const path of paths) ids.push((await client.publish({ url: `${dest.url}${path}`, body: path, retries: 0, ...extra })).messageId);
  await until(async () => {
    const all = (await call('/v2/dlq')).json.messages as Array<{ messageId: string }>;
    return ids.every((id) => all.some((m) => m.messageId === id));
  }, 'the DLQ entries');
  return ids;
}

describe('DLQ filters', () => {
  it('messageId selects one entry: list, delete and retry act on it alone', async () => {
    const [one, other, third] = await dead(['/s500/m1', '/s500/m2', '/s500/m3']);
    const listed = await client.dlq.listMessages({ filter: { messageId: one } });
    expect(listed.messages.map((m) => m.messageId)).toEqual([one]);
    // Before the fix this deleted up to 100 unrelated entries.
    expect(await client.dlq.delete({ filter: { messageId: one } })).toEqual({ deleted: 1 });
    const left = (await client.dlq.listMessages()).messages.map((m) => m.messageId);
    expect(left).not.toContain(one);
    expect(left).toEqual(expect.arrayContaining([other, third]));
    const retried = await client.dlq.retry({ filter: { messageId: other } });
    expect(retried.responses).toHaveLength(1);
    expect(retried.cursor).toBeUndefined();
    expect((await client.dlq.listMessages()).messages.map((m) => m.messageId)).toContain(third);
    // A messageId nobody has selects nothing.
    expect(await client.dlq.delete({ filter: { messageId: 'msg_nobody' } })).toEqual({ deleted: 0 });
    await client.dlq.delete({ all: true });
  });

  it('responseStatus takes several values (repeated or comma-separated), ORed', async () => {
    const [a, b, c] = await dead(['/s500/r', '/s404/r', '/s418/r']);
    const ids = async (q: string) =>
      ((await call(`/v2/dlq?${q}`)).json.messages as Array<{ messageId: string }>).map((m) => m.messageId).sort();
    expect(await ids('responseStatus=500&responseStatus=404')).toEqual([a, b].sort());
    expect(await ids('responseStatus=404,418')).toEqual([b, c].sort());
    expect(await ids('responseStatus=418')).toEqual([c]);
    const bad = await call('/v2/dlq?responseStatus=teapot');
    expect(bad).toEqual({ status: 400, json: { error: "invalid responseStatus 'teapot': a whole number is expected" } });
    await client.dlq.delete({ all: true });
  });

  it('callerIP (deprecated) filters like callerIp', async () => {
    const [id] = await dead(['/s500/ip']);
    const { callerIp } = (await client.dlq.listMessages()).messages.find((m) => m.messageId === id)! as unknown as { callerIp: string };
    expect(callerIp).toBeTruthy();
    for (const field of ['callerIp', 'callerIP']) {
      expect((await call(`/v2/dlq?${field}=${callerIp}`)).json.messages.map((m: { messageId: string }) => m.messageId)).toEqual([id]);
      expect((await call(`/v2/dlq?${field}=10.9.9.9`)).json.messages).toEqual([]);
    }
    await client.dlq.delete({ all: true });
  });

  it('an unknown field (a typo) is refused and nothing is deleted; host/path are not DLQ filters', async () => {
    await dead(['/s500/typo']);
    await expect(client.dlq.delete({ filter: { labeel: 'x' } } as never)).rejects.toThrow(/unknown query parameter 'labeel'/);
    expect((await call('/v2/dlq?host=127.0.0.1', 'DELETE')).status).toBe(400);
    expect((await call('/v2/dlq/retry?labeel=x', 'POST')).status).toBe(400);
    expect((await client.dlq.listMessages()).messages).toHaveLength(1);
    await client.dlq.delete({ all: true });
  });

  it('pages earliest first by default; a bulk delete loop with the cursor empties the selection', async () => {
    const ids = await dead(['/s500/p1', '/s500/p2', '/s500/p3', '/s500/p4', '/s500/p5'], { label: 'paged' });
    const first = await client.dlq.listMessages({ count: 2, filter: { label: 'paged' } });
    expect(first.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 2));
    const latest = await call('/v2/dlq?label=paged&order=latestFirst&count=1');
    expect(latest.json.messages[0].messageId).toBe(ids[4]);
    // The SDK's documented loop: the cursor names an entry the call itself deleted.
    let cursor: string | undefined;
    let deleted = 0;
    let calls = 0;
    do {
      const r = await client.dlq.delete({ filter: { label: 'paged' }, count: 2, cursor });
      deleted += r.deleted;
      cursor = r.cursor;
      calls++;
    } while (cursor);
    expect(deleted).toBe(5);
    expect(calls).toBe(3);
    expect((await client.dlq.listMessages({ filter: { label: 'paged' } })).messages).toEqual([]);
  });

  it('malformed cursor, count, dates and order answer 400 instead of 500', async () => {
    for (const q of ['cursor=abc', 'count=0', 'count=many', 'fromDate=yesterday', 'toDate=1.5', 'order=random']) {
      const r = await call(`/v2/dlq?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.error, q).toMatch(/^invalid /);
    }
  });

  it('dlqIds ignore the other filters; a bulk retry of an unknown dlqId is a 404', async () => {
    const [id] = await dead(['/s500/ids']);
    const { dlqId } = (await client.dlq.listMessages({ filter: { messageId: id } })).messages[0];
    expect((await call(`/v2/dlq?dlqIds=${dlqId}&url=https://elsewhere.example`)).json.messages).toHaveLength(1);
    const missing = await call(`/v2/dlq/retry?dlqIds=${dlqId}&dlqIds=1-1`, 'POST');
    expect(missing.status).toBe(404);
    expect((await call(`/v2/dlq/${dlqId}`)).status).toBe(200);
    await client.dlq.delete(dlqId);
  });
});

describe('bulk cancel of messages', () => {
  it('count bounds a filtered cancel and an all-cancel, earliest first', async () => {
    const later = (i: number, label: string) => client.publish({ url: `${dest.url}/later${i}`, delay: 600, label });
    const ids: string[] = [];
    for (const i of [1, 2, 3]) ids.push((await later(i, 'cancel-me')).messageId);
    const keep = (await later(9, 'keep-me')).messageId;
    expect(await client.messages.cancel({ filter: { label: 'cancel-me' }, count: 1 })).toEqual({ cancelled: 1 });
    await expect(client.messages.get(ids[0])).rejects.toThrow(/not found/);
    expect((await client.messages.get(ids[1])).messageId).toBe(ids[1]);
    // No count: every match (and only the matches).
    expect(await client.messages.cancel({ filter: { label: 'cancel-me' } } as never)).toEqual({ cancelled: 2 });
    expect((await client.messages.get(keep)).messageId).toBe(keep);
    expect(await client.messages.cancel({ all: true, count: 1 })).toEqual({ cancelled: 1 });
  });

  it('refuses unknown fields and counts out of 1..500; host and path filter the destination', async () => {
    const { messageId } = await client.publish({ url: `${dest.url}/hp/one`, delay: 600 });
    expect((await call('/v2/messages?labeel=x', 'DELETE')).status).toBe(400);
    expect((await call('/v2/messages?cursor=1', 'DELETE')).status).toBe(400);
    expect((await call('/v2/messages?count=501', 'DELETE')).status).toBe(400);
    expect((await call('/v2/messages?path=/hp/other', 'DELETE')).json).toEqual({ cancelled: 0 });
    const host = new URL(dest.url).host;
    expect((await call(`/v2/messages?host=${host}&path=/hp/one`, 'DELETE')).json).toEqual({ cancelled: 1 });
    await expect(client.messages.get(messageId)).rejects.toThrow(/not found/);
  });
});

describe('logs filters', () => {
  it('label filters and each entry carries label; a bad cursor or state is a 400; /v2/logs answers logs', async () => {
    const label = `log-label-${Date.now()}`;
    const { messageId } = await client.publish({ url: `${dest.url}/log`, body: 'l', label });
    // Wait for the delivery's last entry, so the later reads see the same entries.
    await until(async () => (await client.logs({ filter: { label } })).logs.some((l) => l.state === 'DELIVERED'), 'the log entries');
    const { logs } = await client.logs({ filter: { label } });
    expect(logs.every((l) => l.messageId === messageId && l.label === label)).toBe(true);
    expect((await call('/v2/events?cursor=not-a-cursor')).status).toBe(400);
    expect((await call('/v2/events?state=DONE')).status).toBe(400);
    expect((await call('/v2/events?labeel=x')).status).toBe(400);
    const viaLogs = await call(`/v2/logs?label=${label}`);
    expect(viaLogs.json.logs.length).toBe(logs.length);
    // A time cursor (the SDK documents cursor = Date.now()) starts before that time.
    expect((await call(`/v2/events?label=${label}&cursor=${Date.now() + 1000}`)).json.events.length).toBe(logs.length);
    expect((await call(`/v2/events?label=${label}&cursor=1000`)).json.events).toEqual([]);
  });
});
