// Area D publishing rules: authentication, bad input in the service's own words, deduplication,
// webhook receiving with the token in the query, group default headers (PATCH), spellings.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { command, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let base: string;
let dest: Destination;

beforeAll(async () => {
  // The real default backoff (12 s, 2m28s…) scaled to milliseconds for development.
  p = await startTestPlatform({ queueBackoffScale: 0.001 });
  base = `${p.url}/queue`;
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});
beforeEach(async () => {
  await dest?.close();
  dest = await startDestination();
});

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string; token?: string | null } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? p.token : init.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method: init.method ?? 'POST', headers, body: init.body });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

describe('authentication', () => {
  it('401 without a token or with a wrong one; the token never shows in the error', async () => {
    for (const token of [null, 'wrong-token']) {
      const r = await call(`/v2/publish/${dest.url}`, { token, body: 'x' });
      expect(r.status).toBe(401);
      expect(r.json.error).toMatch(/^Unauthorized/);
      expect(r.text).not.toContain(p.token);
    }
    expect((await call('/v2/topics', { method: 'GET', token: 'nope' })).status).toBe(401);
    expect(dest.received).toHaveLength(0);
  });
});

describe('bad input gets the service errors', () => {
  it.each([
    [
      'a destination without scheme',
      'example.com/path',
      {},
      400,
      'invalid destination url: endpoint has invalid scheme, add http:// or https://',
    ],
    ['another scheme', 'ftp://example.com/x', {}, 400, 'invalid destination url: endpoint has invalid scheme, add http:// or https://'],
    ['an unknown URL group', 'no-such-group', {}, 404, 'topic no-such-group not found'],
    ['a bad Upstash-Retries', 'DEST', { 'Upstash-Retries': 'many' }, 400, "invalid Upstash-Retries header value 'many'"],
    ['a bad Upstash-Delay', 'DEST', { 'Upstash-Delay': 'soon' }, 400, "invalid Upstash-Delay header value 'soon'"],
    ['a bad Upstash-Method', 'DEST', { 'Upstash-Method': 'FETCH' }, 400, "invalid Upstash-Method header value 'FETCH'"],
    ['a bad Upstash-Not-Before', 'DEST', { 'Upstash-Not-Before': 'tomorrow' }, 400, "invalid Upstash-Not-Before header value 'tomorrow'"],
    ['a bad Upstash-Timeout', 'DEST', { 'Upstash-Timeout': '-1' }, 400, "invalid Upstash-Timeout header value '-1'"],
    ['a bad retry delay expression', 'DEST', { 'Upstash-Retry-Delay': 'pow(2, tries)' }, 400, "unknown name 'tries'"],
    [
      'a callback without scheme',
      'DEST',
      { 'Upstash-Callback': 'callback.example.com' },
      400,
      'invalid Upstash-Callback url: endpoint has invalid scheme',
    ],
    [
      'a bad callback setting',
      'DEST',
      { 'Upstash-Callback': 'http://127.0.0.1:1/cb', 'Upstash-Callback-Retries': 'x' },
      400,
      "invalid Upstash-Callback-Retries header value 'x'",
    ],
    ['a deduplication id with a colon', 'DEST', { 'Upstash-Deduplication-Id': 'a:b' }, 400, "DeduplicationId cannot contain ':'"],
  ])('%s', async (_what, destination, headers, status, error) => {
    const r = await call(`/v2/publish/${destination === 'DEST' ? dest.url : destination}`, { headers, body: 'x' });
    expect(r.status).toBe(status);
    expect(r.json.error).toContain(error);
  });

  it('unknown messages, DLQ entries, queues, schedules and paths are 404s', async () => {
    for (const path of ['/v2/messages/msg_nope', '/v2/dlq/123-0', '/v2/queues/nope', '/v2/schedules/scd_nope', '/v2/nothing']) {
      const r = await call(path, { method: 'GET' });
      expect(r.status, path).toBe(404);
      expect(r.json.error).toEqual(expect.any(String));
    }
  });
});

describe('spellings', () => {
  it('Service-* headers and service-* query parameters work like Upstash-*', async () => {
    await call(`/v2/publish/${dest.url}/s?service-forward-q-header=fromquery`, {
      headers: { 'Service-Method': 'PATCH', 'Service-Forward-H': 'v' },
      body: 'x',
    });
    const [got] = await dest.waitFor(1);
    expect(got.method).toBe('PATCH');
    expect(got.headers['h']).toBe('v');
    expect(got.headers['q-header']).toBe('fromquery');
  });
});

describe('deduplication', () => {
  it('the same Upstash-Deduplication-Id is accepted once (202 with the first message id)', async () => {
    const first = await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Deduplication-Id': 'order-17' }, body: 'a' });
    const second = await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Deduplication-Id': 'order-17' }, body: 'b' });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ messageId: expect.stringMatching(/^msg_/) });
    expect(second.status).toBe(202);
    expect(second.json).toMatchObject({ messageId: first.json.messageId, deduplicated: true });
    const other = await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Deduplication-Id': 'order-18' }, body: 'c' });
    expect(other.json.messageId).not.toBe(first.json.messageId);
    await dest.waitFor(2);
    expect(dest.received.map((r) => r.body.toString()).sort()).toEqual(['a', 'c']);
  });

  it('content-based deduplication: same body and headers once, another body again', async () => {
    const h = { 'Upstash-Content-Based-Deduplication': 'true', 'Content-Type': 'text/plain' };
    const a = await call(`/v2/publish/${dest.url}/cbd`, { headers: h, body: 'same' });
    const b = await call(`/v2/publish/${dest.url}/cbd`, { headers: h, body: 'same' });
    const c = await call(`/v2/publish/${dest.url}/cbd`, { headers: h, body: 'different' });
    expect(b.json).toMatchObject({ messageId: a.json.messageId, deduplicated: true });
    expect(c.json.deduplicated).toBeUndefined();
    await dest.waitFor(2);
  });
});

describe('webhook receiving', () => {
  it('a third party calls /v2/publish/<group>?qstash_token=… and every endpoint gets the call with its headers', async () => {
    const second = await startDestination();
    try {
      expect(
        (
          await call('/v2/topics/webhooks/endpoints', {
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ endpoints: [{ url: `${dest.url}/w` }, { url: `${second.url}/w` }] }),
          })
        ).status,
      ).toBe(200);
      // Default headers of the group: forward every header, and 0 retries.
      const patched = await call('/v2/topics/webhooks', {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ headers: { 'Upstash-Header-Forward': ['true'], 'Upstash-Retries': '0' } }),
      });
      expect(patched.status).toBe(200);
      expect((await call('/v2/topics/webhooks', { method: 'GET' })).json.headers).toEqual({
        'Upstash-Header-Forward': ['true'],
        'Upstash-Retries': ['0'],
      });
      // The third party knows nothing of the queue: no Authorization header, the token in the query.
      const res = await fetch(`${base}/v2/publish/webhooks?qstash_token=${encodeURIComponent(p.token)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Webhook-Signature': 'sha256=abc' },
        body: '{"event":"paid"}',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toHaveLength(2);
      const [one] = await dest.waitFor(1);
      const [two] = await second.waitFor(1);
      for (const got of [one, two]) {
        expect(got.body.toString()).toBe('{"event":"paid"}');
        expect(got.headers['x-webhook-signature']).toBe('sha256=abc');
        expect(got.headers['upstash-topic-name']).toBe('webhooks');
      }
      // queue_token (the spec's spelling) works too, for a URL destination.
      const direct = await fetch(`${base}/v2/publish/${dest.url}/direct?queue_token=${encodeURIComponent(p.token)}`, {
        method: 'POST',
        body: 'd',
      });
      expect(direct.status).toBe(200);
      expect((await dest.waitFor(2))[1].path).toBe('/direct');
      // Bad group defaults are refused when set, not at publish time.
      const bad = await call('/v2/topics/webhooks', {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ headers: { 'Upstash-Retries': 'x' } }),
      });
      expect(bad.status).toBe(400);
    } finally {
      await second.close();
    }
  });
});

describe('retry timing', () => {
  it('the default backoff e^(2.5n) s applies, scaled by --queue-backoff-scale (12 ms here for the first retry)', async () => {
    dest.respond = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    await call(`/v2/publish/${dest.url}`, { body: 'x' });
    const [first, second] = await dest.waitFor(2);
    expect(second.headers['upstash-retried']).toBe('1');
    expect(second.at - first.at).toBeGreaterThanOrEqual(11);
    expect(second.at - first.at).toBeLessThan(3000);
  });

  it('a Retry-After of the failed response decides the next attempt', async () => {
    dest.respond = (_r, i) => (i === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 200 });
    await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Retry-Delay': '0' }, body: 'x' });
    const [first, second] = await dest.waitFor(2, 5000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(990);
  });
});

describe('isolation', () => {
  it("the queue's records and jobs never show in the key-value (Area B) keyspace", async () => {
    await call(`/v2/publish/${dest.url}`, { headers: { 'Upstash-Delay': '1h', 'Upstash-Deduplication-Id': 'iso' }, body: 'x' });
    await call('/v2/topics/iso/endpoints', {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ endpoints: [{ url: dest.url }] }),
    });
    expect((await command(p, ['DBSIZE'])).json).toEqual({ result: 0 });
    expect((await command(p, ['KEYS', '*'])).json).toEqual({ result: [] });
  });
});

describe('named queues', () => {
  it('parallelism bounds the deliveries in flight of a queue', async () => {
    // In flight and most in flight at once, per queue (the path names the queue).
    const inFlight = new Map<string, number>();
    const most = new Map<string, number>();
    dest.respond = async (r) => {
      const n = (inFlight.get(r.path) ?? 0) + 1;
      inFlight.set(r.path, n);
      most.set(r.path, Math.max(most.get(r.path) ?? 0, n));
      await new Promise((resolve) => setTimeout(resolve, 150));
      inFlight.set(r.path, inFlight.get(r.path)! - 1);
      return { status: 200 };
    };
    for (const [queueName, parallelism] of [
      ['serial', 1],
      ['pair', 2],
    ] as const) {
      const before = dest.received.length;
      expect(
        (await call('/v2/queues', { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ queueName, parallelism }) }))
          .status,
      ).toBe(200);
      const answers = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => call(`/v2/enqueue/${queueName}/${dest.url}/${queueName}`, { body: String(i) })),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const got = (await dest.waitFor(before + 5)).slice(before);
      expect(got.every((r) => r.headers['upstash-queue-name'] === queueName)).toBe(true);
      expect(most.get(`/${queueName}`)).toBe(parallelism);
    }
  });

  it('refuses a bad queue name or parallelism', async () => {
    const bad = await call('/v2/queues', {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ queueName: 'no spaces', parallelism: 1 }),
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("invalid queue name 'no spaces'");
    const zero = await call('/v2/queues', {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ queueName: 'q', parallelism: 0 }),
    });
    expect(zero.status).toBe(400);
    expect(zero.json.error).toContain('parallelism must be a whole number >= 1');
  });
});

describe('event log', () => {
  it('pages through every event once, newest first, with the cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await call(`/v2/publish/${dest.url}/log${i}`, { body: String(i), headers: { 'Upstash-Label': 'paged' } })).json.messageId);
    await dest.waitFor(4);
    // Wait until the four DELIVERED events are in the log (logged after the answers).
    let delivered = 0;
    for (let i = 0; i < 100 && delivered < 4; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 20));
      delivered = (await call('/v2/events?label=paged&state=DELIVERED', { method: 'GET' })).json.events.length;
    }
    const seen: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(`/v2/events?label=paged&count=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { method: 'GET' });
      expect(page.json.events.length).toBeLessThanOrEqual(3);
      seen.push(...page.json.events);
      cursor = page.json.cursor;
    } while (cursor);
    expect(seen).toHaveLength(12);
    expect(seen.map((e) => e.time)).toEqual([...seen.map((e) => e.time)].sort((a, b) => b - a));
    for (const id of ids)
      expect(
        seen
          .filter((e) => e.messageId === id)
          .map((e) => e.state)
          .sort(),
      ).toEqual(['ACTIVE', 'CREATED', 'DELIVERED']);
    expect(seen.every((e) => e.labels?.[0] === 'paged')).toBe(true);
  });
});
