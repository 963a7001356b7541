// The queue's read-only token (the platform's --readonly-token): every read answers as with the
// full token; publishing, creating, changing, cancelling and the signing keys are 403.
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let readonly: string;
let base: string;

beforeAll(async () => {
  readonly = 'readonly-queue-token-for-tests';
  p = await startTestPlatform({ readonlyToken: readonly });
  base = `${p.url}/queue`;
});
afterAll(async () => {
  await p?.stop();
});

async function call(path: string, token: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...init.headers } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('the read-only token', () => {
  it('reads what the full token reads: messages, groups, queues, schedules, DLQ, logs, workflow runs', async () => {
    const full = new Client({ baseUrl: base, token: p.token });
    const { messageId } = await full.publishJSON({ url: 'http://127.0.0.1:9/never', body: { a: 1 }, delay: 3600 });
    await full.queue({ queueName: 'ro-q' }).upsert({ parallelism: 1 });
    const ro = new Client({ baseUrl: base, token: readonly });
    expect((await ro.messages.get(messageId)).messageId).toBe(messageId);
    expect((await ro.queue({ queueName: 'ro-q' }).get()).name).toBe('ro-q');
    expect(await ro.urlGroups.list()).toEqual([]);
    expect(await ro.schedules.list()).toEqual([]);
    expect((await ro.dlq.listMessages()).messages).toEqual([]);
    expect((await ro.logs({ filter: { messageId } })).logs.length).toBeGreaterThan(0);
    expect((await call('/v2/workflows/events', readonly)).status).toBe(200);
    expect(await call('/v2/waiters/some-event', readonly)).toEqual({ status: 200, json: [] });
  });

  it('refuses every change with 403 and says which token is needed', async () => {
    const attempts: Array<[string, RequestInit]> = [
      ['/v2/publish/http://127.0.0.1:9/x', { method: 'POST', body: 'x' }],
      ['/v2/batch', { method: 'POST', body: '[]' }],
      ['/v2/messages/msg_x', { method: 'DELETE' }],
      ['/v2/queues', { method: 'POST', body: '{"queueName":"x"}' }],
      ['/v2/topics/g/endpoints', { method: 'POST', body: '{"endpoints":[{"url":"http://127.0.0.1:9"}]}' }],
      ['/v2/schedules/http://127.0.0.1:9/x', { method: 'POST', headers: { 'Upstash-Cron': '* * * * *' } }],
      ['/v2/dlq', { method: 'DELETE' }],
      ['/v2/notify/e', { method: 'POST', body: 'd' }],
      ['/v2/workflows/runs/wfr_x', { method: 'DELETE' }],
      ['/v2/keys/rotate', { method: 'POST' }],
      ['/v2/keys', {}],
    ];
    for (const [path, init] of attempts) {
      const { status, json } = await call(path, readonly, init);
      expect(status, path).toBe(403);
      expect(json.error, path).toMatch(
        /^Forbidden: the read-only token can only read \(GET\) and not the signing keys; .* needs QSTASH_TOKEN$/,
      );
    }
    const ro = new Client({ baseUrl: base, token: readonly });
    await expect(ro.publishJSON({ url: 'http://127.0.0.1:9/x', body: {} })).rejects.toThrow(/read-only token/);
    // Nothing was created by the refused calls.
    await expect(ro.queue({ queueName: 'x' }).get()).rejects.toThrow(/not found/);
    expect(await ro.urlGroups.list()).toEqual([]);
  });

  it('a wrong token is still 401, and the full token still changes things', async () => {
    expect((await call('/v2/messages', 'not-a-token')).status).toBe(401);
    expect((await call('/v2/queues', p.token, { method: 'POST', body: '{"queueName":"ro-full"}' })).status).toBe(200);
  });
});
