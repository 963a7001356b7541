// Area D delivery against real HTTP destinations: what arrives (body, headers, signature), retries
// with callbacks, exhausted retries into the DLQ with the failure callback, 489, delays.
import { Receiver } from '@upstash/qstash';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let base: string;
let dest: Destination;
let callbacks: Destination;
let failures: Destination;
const SIGNING = { current: 'sig_testCurrentKey0000000000000000', next: 'sig_testNextKey000000000000000000' };

beforeAll(async () => {
  p = await startTestPlatform({ signingKey: SIGNING.current, nextSigningKey: SIGNING.next });
  base = `${p.url}/queue`;
});
afterAll(async () => {
  await p?.stop();
});
beforeEach(async () => {
  for (const d of [dest, callbacks, failures]) await d?.close();
  [dest, callbacks, failures] = await Promise.all([startDestination(), startDestination(), startDestination()]);
});

async function publish(destination: string, init: { headers?: Record<string, string>; body?: string; query?: string } = {}) {
  const res = await fetch(`${base}/v2/publish/${destination}${init.query ?? ''}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${p.token}`, ...init.headers },
    body: init.body ?? '',
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe('publish to a URL', () => {
  it('delivers the body with the service headers, and the signature verifies with the SDK Receiver', async () => {
    const { status, json } = await publish(`${dest.url}/hook?x=1`, {
      headers: {
        'Content-Type': 'application/json',
        'Upstash-Forward-My-Header': 'hello',
        'Service-Forward-Other': 'two',
        'X-Not-Forwarded': 'no',
      },
      body: '{"hello":"world"}',
    });
    expect(status).toBe(200);
    expect(json.messageId).toMatch(/^msg_/);
    const [got] = await dest.waitFor(1);
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/hook?x=1');
    expect(got.body.toString()).toBe('{"hello":"world"}');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['my-header']).toBe('hello');
    expect(got.headers['other']).toBe('two');
    expect(got.headers['x-not-forwarded']).toBeUndefined();
    expect(got.headers['upstash-message-id']).toBe(json.messageId);
    expect(got.headers['upstash-retried']).toBe('0');
    expect(got.headers['user-agent']).toBe('Upstash-QStash');
    const receiver = new Receiver({ currentSigningKey: SIGNING.current, nextSigningKey: SIGNING.next });
    const signature = got.headers['upstash-signature'] as string;
    expect(await receiver.verify({ signature, body: got.body.toString(), url: `${dest.url}/hook?x=1` })).toBe(true);
    // A tampered body, or another URL, is refused by the same Receiver.
    await expect(receiver.verify({ signature, body: '{"hello":"mallory"}' })).rejects.toThrow(/body hash does not match/);
    await expect(receiver.verify({ signature, body: got.body.toString(), url: 'http://elsewhere/' })).rejects.toThrow(/invalid subject/);
  });

  it('uses Upstash-Method and the settings given as lowercase query parameters', async () => {
    await publish(dest.url, { query: '?upstash-method=PUT&upstash-forward-from-query=q', body: 'b' });
    const [got] = await dest.waitFor(1);
    expect(got.method).toBe('PUT');
    expect(got.headers['from-query']).toBe('q');
  });

  it('forwards every header with Upstash-Header-Forward: true', async () => {
    await publish(dest.url, { headers: { 'Upstash-Header-Forward': 'true', 'Stripe-Signature': 't=1,v1=abc' }, body: 'x' });
    const [got] = await dest.waitFor(1);
    expect(got.headers['stripe-signature']).toBe('t=1,v1=abc');
    expect(got.headers['authorization']).toBeUndefined();
  });
});

describe('retries and callbacks', () => {
  it('a destination failing twice then succeeding: callbacks with retried 0, 1, 2', async () => {
    dest.respond = (_r, i) => (i < 2 ? { status: 500, body: `fail ${i}` } : { status: 200, headers: { 'X-Done': 'yes' }, body: 'done' });
    const { json } = await publish(dest.url, {
      headers: {
        'Upstash-Retries': '3',
        'Upstash-Retry-Delay': '50',
        'Upstash-Callback': callbacks.url,
        'Upstash-Callback-Forward-Cb-Extra': 'e',
        'Content-Type': 'text/plain',
      },
      body: 'payload',
    });
    const got = await dest.waitFor(3);
    expect(got.map((r) => r.headers['upstash-retried'])).toEqual(['0', '1', '2']);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(40);
    const cbs = await callbacks.waitFor(3);
    const bodies = cbs.map((r) => JSON.parse(r.body.toString())).sort((a, b) => a.retried - b.retried);
    expect(bodies.map((b) => [b.retried, b.status])).toEqual([
      [0, 500],
      [1, 500],
      [2, 200],
    ]);
    const last = bodies[2];
    expect(last).toMatchObject({ maxRetries: 3, sourceMessageId: json.messageId, url: dest.url, method: 'POST', callerIP: '127.0.0.1' });
    expect(Buffer.from(last.body, 'base64').toString()).toBe('done');
    expect(last.header['X-Done']).toEqual(['yes']);
    expect(Buffer.from(last.sourceBody, 'base64').toString()).toBe('payload');
    expect(last.sourceHeader['Content-Type']).toBe('text/plain');
    expect(typeof last.notBefore).toBe('string');
    expect(typeof last.createdAt).toBe('string');
    expect(last.dlqId).toBeUndefined();
    expect(cbs[0].headers['cb-extra']).toBe('e');
    expect(cbs[0].headers['content-type']).toBe('application/json');
    // The callback is a signed message of its own.
    const receiver = new Receiver({ currentSigningKey: SIGNING.current, nextSigningKey: SIGNING.next });
    expect(
      await receiver.verify({ signature: cbs[0].headers['upstash-signature'] as string, body: cbs[0].body.toString(), url: callbacks.url }),
    ).toBe(true);
  });

  it('retries exhausted: failure callback with dlqId, the message in the DLQ, and a DLQ retry delivers it', async () => {
    dest.respond = () => ({ status: 503, body: 'down' });
    const { json } = await publish(dest.url, {
      headers: { 'Upstash-Retries': '2', 'Upstash-Retry-Delay': 'pow(2, retried) * 10', 'Upstash-Failure-Callback': failures.url },
      body: 'lost?',
    });
    await dest.waitFor(3);
    const [fcb] = await failures.waitFor(1);
    const body = JSON.parse(fcb.body.toString());
    expect(body).toMatchObject({ status: 503, retried: 2, maxRetries: 2, sourceMessageId: json.messageId });
    expect(body.dlqId).toEqual(expect.any(String));
    expect(Buffer.from(body.body, 'base64').toString()).toBe('down');

    const auth = { Authorization: `Bearer ${p.token}` };
    const entry = (await (await fetch(`${base}/v2/dlq/${body.dlqId}`, { headers: auth })).json()) as any;
    expect(entry).toMatchObject({
      dlqId: body.dlqId,
      messageId: json.messageId,
      url: dest.url,
      body: 'lost?',
      responseStatus: 503,
      responseBody: 'down',
      maxRetries: 2,
    });
    expect(dest.received).toHaveLength(3);

    dest.respond = () => ({ status: 200 });
    const retried = (await (await fetch(`${base}/v2/dlq/retry/${body.dlqId}`, { method: 'POST', headers: auth })).json()) as any;
    expect(retried.messageId).toMatch(/^msg_/);
    const all = await dest.waitFor(4);
    expect(all[3].body.toString()).toBe('lost?');
    expect(all[3].headers['upstash-message-id']).toBe(retried.messageId);
    expect((await fetch(`${base}/v2/dlq/${body.dlqId}`, { headers: auth })).status).toBe(404);
  });

  it('status 489 with Upstash-NonRetryable-Error ends the retries at once', async () => {
    dest.respond = () => ({ status: 489, headers: { 'Upstash-NonRetryable-Error': 'true' }, body: 'never' });
    await publish(dest.url, { headers: { 'Upstash-Retries': '3', 'Upstash-Retry-Delay': '10', 'Upstash-Failure-Callback': failures.url } });
    const [fcb] = await failures.waitFor(1);
    expect(JSON.parse(fcb.body.toString())).toMatchObject({ status: 489, retried: 0, maxRetries: 3 });
    expect(dest.received).toHaveLength(1);
  });
});

describe('callback settings and timeouts', () => {
  it('callback and failure callback take their own method and forwarded headers', async () => {
    dest.respond = () => ({ status: 500 });
    await publish(dest.url, {
      headers: {
        'Upstash-Retries': '0',
        'Upstash-Callback': `${callbacks.url}/cb`,
        'Upstash-Callback-Method': 'PUT',
        'Upstash-Callback-Forward-Who': 'callback',
        'Upstash-Failure-Callback': `${failures.url}/fcb`,
        'Upstash-Failure-Callback-Method': 'PATCH',
        'Service-Failure-Callback-Forward-Who': 'failure',
      },
      body: 'x',
    });
    const [cb] = await callbacks.waitFor(1);
    const [fcb] = await failures.waitFor(1);
    expect([cb.method, cb.path, cb.headers['who']]).toEqual(['PUT', '/cb', 'callback']);
    expect([fcb.method, fcb.path, fcb.headers['who']]).toEqual(['PATCH', '/fcb', 'failure']);
    expect(JSON.parse(cb.body.toString()).dlqId).toBeUndefined();
    expect(JSON.parse(fcb.body.toString()).dlqId).toEqual(expect.any(String));
  });

  it('Upstash-Timeout cuts a slow endpoint: the attempt fails, and the failure callback says status 0', async () => {
    dest.respond = () => new Promise(() => undefined); // never answers
    const t0 = Date.now();
    const { json } = await publish(dest.url, {
      headers: { 'Upstash-Timeout': '1s', 'Upstash-Retries': '0', 'Upstash-Failure-Callback': failures.url },
      body: 'slow',
    });
    const [fcb] = await failures.waitFor(1, 8000);
    expect(fcb.at - t0).toBeGreaterThanOrEqual(950);
    const body = JSON.parse(fcb.body.toString());
    expect(body).toMatchObject({ status: 0, retried: 0, maxRetries: 0, sourceMessageId: json.messageId, body: '' });
    const entry = (await (await fetch(`${base}/v2/dlq/${body.dlqId}`, { headers: { Authorization: `Bearer ${p.token}` } })).json()) as any;
    expect(entry).toMatchObject({ messageId: json.messageId, body: 'slow' });
    expect(entry.responseStatus).toBeUndefined();
  });
});

describe('delays', () => {
  it('Upstash-Delay and Upstash-Not-Before hold the delivery back', async () => {
    const t0 = Date.now();
    await publish(`${dest.url}/delay`, { headers: { 'Upstash-Delay': '1s' } });
    await publish(`${dest.url}/not-before`, { headers: { 'Upstash-Not-Before': String(Math.ceil(t0 / 1000) + 2) } });
    const got = await dest.waitFor(2, 6000);
    const delayed = got.find((r) => r.path === '/delay')!;
    const notBefore = got.find((r) => r.path === '/not-before')!;
    expect(delayed.at - t0).toBeGreaterThanOrEqual(950);
    expect(delayed.at - t0).toBeLessThan(4000); // generous: the test machine may be busy
    expect(notBefore.at).toBeGreaterThanOrEqual((Math.ceil(t0 / 1000) + 2) * 1000 - 50);
    expect(notBefore.at).toBeLessThan((Math.ceil(t0 / 1000) + 2) * 1000 + 3000);
  });
});
