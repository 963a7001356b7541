// Retries as the service documents them: a DLQ retry takes the configuration headers of the retry
// request over the original's (Upstash-Retries: 0 retries once), and callback and failure-callback
// deliveries are retried as often as their message (Upstash-Retries), not a fixed 3.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let dest: Destination;
let hooks: Destination;

beforeAll(async () => {
  p = await startTestPlatform({ queueBackoffScale: 0.001 });
});
afterAll(async () => {
  for (const d of [dest, hooks]) await d?.close();
  await p?.stop();
});
beforeEach(async () => {
  for (const d of [dest, hooks]) await d?.close();
  [dest, hooks] = await Promise.all([startDestination(), startDestination()]);
});

async function call(path: string, method = 'POST', headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(`${p.url}/queue${path}`, { method, headers: { Authorization: `Bearer ${p.token}`, ...headers }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function dlqEntryOf(messageId: string): Promise<{ dlqId: string; maxRetries: number }> {
  for (let i = 0; i < 300; i++) {
    const [entry] = (await call(`/v2/dlq?messageId=${messageId}`, 'GET')).json.messages;
    if (entry) return entry;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${messageId} never reached the DLQ`);
}

describe('DLQ retry with override headers', () => {
  it('Upstash-Retries, Upstash-Forward-* and Upstash-Method of the retry request replace the original settings', async () => {
    dest.respond = () => ({ status: 500 });
    const { json } = await call(`/v2/publish/${dest.url}/o`, 'POST', { 'Upstash-Retries': '2', 'Upstash-Forward-X-Tag': 'old' }, 'b');
    const { dlqId } = await dlqEntryOf(json.messageId);
    expect(dest.received).toHaveLength(3);
    const retried = await call(`/v2/dlq/retry/${dlqId}`, 'POST', {
      'Upstash-Retries': '0',
      'Upstash-Forward-X-Tag': 'new',
      'Upstash-Method': 'PUT',
    });
    expect(retried.status).toBe(201);
    const again = await dlqEntryOf(retried.json.messageId);
    // One attempt only (retries 0), with the new header and method; the body is the original's.
    expect(dest.received).toHaveLength(4);
    expect(again.maxRetries).toBe(0);
    expect(dest.received[3]).toMatchObject({ method: 'PUT', body: Buffer.from('b') });
    expect(dest.received[3].headers['x-tag']).toBe('new');
  });

  it('a bulk retry applies the headers to every entry; a bad header is a 400 and nothing is retried', async () => {
    dest.respond = () => ({ status: 500 });
    const ids: string[] = [];
    for (const i of [1, 2])
      ids.push(
        (await call(`/v2/publish/${dest.url}/bulk${i}`, 'POST', { 'Upstash-Retries': '1', 'Upstash-Label': 'bulk' })).json.messageId,
      );
    for (const id of ids) await dlqEntryOf(id);
    const bad = await call('/v2/dlq/retry?label=bulk', 'POST', { 'Upstash-Retries': 'lots' });
    expect(bad).toEqual({ status: 400, json: { error: "invalid Upstash-Retries header value 'lots': it must be a whole number >= 0" } });
    expect((await call('/v2/dlq?label=bulk', 'GET')).json.messages).toHaveLength(2);
    const before = dest.received.length;
    const res = await call('/v2/dlq/retry?label=bulk', 'POST', { 'Upstash-Retries': '0' });
    expect(res.status).toBe(201);
    expect(res.json.responses).toHaveLength(2);
    for (const r of res.json.responses) expect((await dlqEntryOf(r.messageId)).maxRetries).toBe(0);
    expect(dest.received.length - before).toBe(2);
  });
});

describe('callback retries follow the message', () => {
  it.each([
    ['Upstash-Callback', 'retries 0: one callback attempt', '0', 1],
    ['Upstash-Callback', 'retries 1: two callback attempts', '1', 2],
    ['Upstash-Failure-Callback', 'retries 0: one failure-callback attempt', '0', 1],
    ['Upstash-Failure-Callback', 'retries 5: six failure-callback attempts', '5', 6],
  ])('%s, %s', async (header, _what, retries, attempts) => {
    // The message succeeds for a callback and fails for a failure callback (retries 0 then: one attempt).
    dest.respond = () => ({ status: header === 'Upstash-Callback' ? 200 : 500 });
    hooks.respond = () => ({ status: 500 });
    const headers: Record<string, string> = { [header]: hooks.url, 'Upstash-Retries': retries, 'Upstash-Retry-Delay': '1' };
    headers[`${header}-Retry-Delay`] = '1';
    await call(`/v2/publish/${dest.url}`, 'POST', headers, 'x');
    await hooks.waitFor(attempts);
    await new Promise((r) => setTimeout(r, 300));
    expect(hooks.received).toHaveLength(attempts);
  });

  it('Upstash-Callback-Retries still overrides the message count', async () => {
    hooks.respond = () => ({ status: 500 });
    await call(`/v2/publish/${dest.url}`, 'POST', {
      'Upstash-Callback': hooks.url,
      'Upstash-Retries': '4',
      'Upstash-Callback-Retries': '1',
      'Upstash-Callback-Retry-Delay': '1',
    });
    await hooks.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(hooks.received).toHaveLength(2);
  });
});
