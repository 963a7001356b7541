// The smaller differences, each against the service's documented answer: publish answers 200
// (202 for a duplicate), batch 200, DLQ retry 201 (qstash/openapi.yaml, features/deduplication);
// a batch with a bad later item publishes nothing; a deduplication id is the account's, not a
// URL's; the content-based hash covers destination, body and headers but not the method; the
// flow-control /reset spelling of resetRate.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let dest: Destination;

beforeAll(async () => {
  p = await startTestPlatform({ queueBackoffScale: 0.001 });
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});
beforeEach(async () => {
  await dest?.close();
  dest = await startDestination();
});

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${p.url}/queue${path}`, {
    method: init.method ?? 'POST',
    headers: { Authorization: `Bearer ${p.token}`, ...init.headers },
    body: init.body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const pending = async (label: string) => {
  const r = await call(`/v2/messages?label=${label}`, { method: 'DELETE' });
  return r.json.cancelled as number;
};

describe('status codes', () => {
  it('publish 200, duplicate 202, enqueue 200, batch 200', async () => {
    const first = await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Deduplication-Id': 's1' }, body: 'a' });
    expect(first.status).toBe(200);
    expect((await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Deduplication-Id': 's1' } })).status).toBe(202);
    expect((await call(`/v2/enqueue/status-q/${dest.url}`, { body: 'q' })).status).toBe(200);
    const batch = await call('/v2/batch', { body: JSON.stringify([{ destination: dest.url, body: 'b' }]) });
    expect(batch.status).toBe(200);
    expect(batch.json).toEqual([{ messageId: expect.stringMatching(/^msg_/) }]);
  });
});

describe('batch', () => {
  it('a bad later item publishes nothing, the earlier items included', async () => {
    const items = [
      { destination: `${dest.url}/one`, body: '1', headers: { 'Upstash-Delay': '10m', 'Upstash-Label': 'atomic' } },
      { destination: `${dest.url}/two`, body: '2', headers: { 'Upstash-Delay': '10m', 'Upstash-Label': 'atomic' } },
      { destination: `${dest.url}/three`, headers: { 'Upstash-Retries': 'x' } },
    ];
    const r = await call('/v2/batch', { body: JSON.stringify(items) });
    expect(r).toEqual({
      status: 400,
      json: { error: "batch item 2: invalid Upstash-Retries header value 'x': it must be a whole number >= 0" },
    });
    const unknownGroup = await call('/v2/batch', { body: JSON.stringify([items[0], { destination: 'no-such-group' }]) });
    expect(unknownGroup.status).toBe(404);
    expect(await pending('atomic')).toBe(0);
  });

  it('a batch item with a deduplication id taken by an earlier item is a duplicate', async () => {
    const item = { destination: `${dest.url}/d`, body: 'x', headers: { 'Upstash-Deduplication-Id': 'in-batch' } };
    const r = await call('/v2/batch', { body: JSON.stringify([item, item]) });
    expect(r.json[1]).toEqual({ messageId: r.json[0].messageId, deduplicated: true });
  });
});

describe('deduplication', () => {
  it("a deduplication id is the account's: the same id to another URL is a duplicate", async () => {
    const a = await call(`/v2/publish/${dest.url}/a`, { headers: { 'Upstash-Deduplication-Id': 'global-1' }, body: 'a' });
    const b = await call(`/v2/publish/${dest.url}/b`, { headers: { 'Upstash-Deduplication-Id': 'global-1' }, body: 'b' });
    expect(b).toEqual({ status: 202, json: { messageId: a.json.messageId, deduplicated: true } });
    await dest.waitFor(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(dest.received.map((r) => r.path)).toEqual(['/a']);
  });

  it('content-based: the method is not part of the hash; destination, body and headers are', async () => {
    const h = { 'Upstash-Content-Based-Deduplication': 'true', 'Content-Type': 'text/plain' };
    const post = await call(`/v2/publish/${dest.url}/cb`, { headers: h, body: 'same' });
    const put = await call(`/v2/publish/${dest.url}/cb`, { headers: { ...h, 'Upstash-Method': 'PUT' }, body: 'same' });
    expect(put).toEqual({ status: 202, json: { messageId: post.json.messageId, deduplicated: true } });
    const otherHeader = await call(`/v2/publish/${dest.url}/cb`, { headers: { ...h, 'Upstash-Forward-X': '1' }, body: 'same' });
    const otherUrl = await call(`/v2/publish/${dest.url}/cb2`, { headers: h, body: 'same' });
    expect([otherHeader.status, otherUrl.status]).toEqual([200, 200]);
  });

  it('a URL group publish and its duplicate answer the same messages for every endpoint', async () => {
    const second = await startDestination();
    await call('/v2/topics/dedup-group/endpoints', { body: JSON.stringify({ endpoints: [{ url: dest.url }, { url: second.url }] }) });
    const h = { 'Upstash-Deduplication-Id': 'group-1' };
    const first = await call('/v2/publish/dedup-group', { headers: h, body: 'g' });
    const again = await call('/v2/publish/dedup-group', { headers: h, body: 'g' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(202);
    expect(again.json).toEqual(first.json.map((r: object) => ({ ...r, deduplicated: true })));
    await second.close();
  });
});

describe('flow control', () => {
  it('POST /v2/flowControl/{key}/reset is resetRate', async () => {
    await call(`/v2/publish/${dest.url}`, {
      headers: { 'Upstash-Flow-Control-Key': 'rk', 'Upstash-Flow-Control-Value': 'rate=1,period=1h' },
    });
    await dest.waitFor(1);
    const auth = { method: 'GET' };
    expect((await call('/v2/flowControl/rk', auth)).json.rateCount).toBe(1);
    expect((await call('/v2/flowControl/rk/reset')).status).toBe(200);
    expect((await call('/v2/flowControl/rk', auth)).json.rateCount).toBe(0);
  });
});
