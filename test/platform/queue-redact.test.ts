// Upstash-Redact-Fields (qstash/howto/redact-fields): the API shows redacted parts as
// REDACTED:<SHA-256> in messages, the DLQ, logs and schedules, while the endpoint gets the original
// values (and a DLQ retry delivers them again). Upstash-Callback-Delay is refused: callbacks take a
// method, timeout, retries and retry delay only.
import { createHash } from 'node:crypto';
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let client: Client;
let dest: Destination;
const sha = (v: string) => `REDACTED:${createHash('sha256').update(v).digest('hex')}`;

beforeAll(async () => {
  p = await startTestPlatform({ queueBackoffScale: 0.001 });
  client = new Client({ baseUrl: `${p.url}/queue`, token: p.token, enableTelemetry: false, retry: false });
  dest = await startDestination();
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});

async function call(path: string, method: string, headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(`${p.url}/queue${path}`, { method, headers: { Authorization: `Bearer ${p.token}`, ...headers }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function until<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await get();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Upstash-Redact-Fields', () => {
  it('body and one header: the message shows their hashes, the endpoint gets the originals', async () => {
    const { messageId } = await client.publish({
      url: `${dest.url}/secret`,
      body: 'card=4111',
      headers: { Authorization: 'Bearer s3cret', 'X-Plain': 'visible' },
      redact: { body: true, header: ['Authorization'] },
      delay: 600,
    });
    const m = await client.messages.get(messageId);
    expect(m.body).toBe(sha('card=4111'));
    expect(m.header?.Authorization).toEqual([sha('Bearer s3cret')]);
    expect(m.header?.['X-Plain']).toEqual(['visible']);
    await client.messages.cancel(messageId);
  });

  it('the DLQ keeps them redacted; a DLQ retry delivers the original values', async () => {
    dest.respond = () => ({ status: 500 });
    const { messageId } = await client.publish({
      url: `${dest.url}/dead`,
      body: 'pin=1234',
      headers: { 'X-Token': 'tok' },
      redact: { body: true, header: true },
      retries: 0,
    });
    const entry = await until(
      async () => (await client.dlq.listMessages({ filter: { messageId } })).messages[0],
      (e) => e !== undefined,
      'the DLQ entry',
    );
    expect(entry.body).toBe(sha('pin=1234'));
    expect(entry.header?.['X-Token']).toEqual([sha('tok')]);
    expect(dest.received.at(-1)!.body.toString()).toBe('pin=1234');
    dest.respond = () => ({ status: 200 });
    const before = dest.received.length;
    await client.dlq.retry(entry.dlqId);
    const [again] = (await dest.waitFor(before + 1)).slice(before);
    expect(again.body.toString()).toBe('pin=1234');
    expect(again.headers['x-token']).toBe('tok');
  });

  it('a schedule shows its redacted parts', async () => {
    const { scheduleId } = await client.schedules.create({
      destination: `${dest.url}/sched`,
      cron: '0 0 1 1 *',
      body: 'secret-body',
      headers: { Authorization: 'Basic abc' },
      redact: { body: true, header: ['Authorization'] },
    });
    const s = await client.schedules.get(scheduleId);
    expect(s.body).toBe(sha('secret-body'));
    expect(s.header?.Authorization).toEqual([sha('Basic abc')]);
    await client.schedules.delete(scheduleId);
  });

  it('an unknown part is a 400', async () => {
    const r = await call(`/v2/publish/${dest.url}`, 'POST', { 'Upstash-Redact-Fields': 'body,cookies' });
    expect(r).toEqual({
      status: 400,
      json: {
        error: "invalid Upstash-Redact-Fields header value 'body,cookies': use body, headers or headers[Header-Name], comma-separated",
      },
    });
  });
});

describe('Upstash-Callback-Delay', () => {
  it.each(['Upstash-Callback-Delay', 'Upstash-Failure-Callback-Delay'])(
    '%s is refused with 400 and nothing is published',
    async (header) => {
      const before = dest.received.length;
      const kind = header.replace(/^Upstash-|-Delay$/g, '');
      const r = await call(`/v2/publish/${dest.url}/cb`, 'POST', { [`Upstash-${kind}`]: `${dest.url}/hook`, [header]: '10s' });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe(`${header} is not supported: a ${kind.toLowerCase()} is sent as soon as the response is known`);
      await new Promise((res) => setTimeout(res, 100));
      expect(dest.received.length).toBe(before);
    },
  );
});
