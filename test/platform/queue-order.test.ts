// A named queue is FIFO like the service's: with parallelism 1 a message waiting for its retries
// keeps the queue, nothing later is delivered until it succeeded or reached the DLQ; a cancel of
// the waiting message frees the queue at once.
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
});
afterAll(async () => {
  await dest?.close();
  await p?.stop();
});

const paths = (prefix: string) => dest.received.filter((r) => r.path.startsWith(prefix)).map((r) => r.path);

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 6000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

describe('named queue order with retries', () => {
  it('parallelism 1: the next message waits until the first succeeded after its retries', async () => {
    await client.queue({ queueName: 'fifo-ok' }).upsert({ parallelism: 1 });
    const tries = new Map<string, number>();
    dest.respond = (r) => {
      const n = (tries.get(r.path) ?? 0) + 1;
      tries.set(r.path, n);
      return { status: r.path === '/ok/0' && n <= 2 ? 500 : 200 };
    };
    const q = client.queue({ queueName: 'fifo-ok' });
    for (const i of [0, 1, 2]) await q.enqueue({ url: `${dest.url}/ok/${i}`, body: String(i), retries: 3, retryDelay: '150' });
    await until(() => paths('/ok/').length === 5, 'five deliveries');
    expect(paths('/ok/')).toEqual(['/ok/0', '/ok/0', '/ok/0', '/ok/1', '/ok/2']);
    const retried = dest.received.filter((r) => r.path === '/ok/0').map((r) => r.headers['upstash-retried']);
    expect(retried).toEqual(['0', '1', '2']);
  });

  it('parallelism 1: the next message waits until the first reached the DLQ', async () => {
    await client.queue({ queueName: 'fifo-dlq' }).upsert({ parallelism: 1 });
    dest.respond = (r) => ({ status: r.path === '/dlq/0' ? 500 : 200 });
    const q = client.queue({ queueName: 'fifo-dlq' });
    const first = await q.enqueue({ url: `${dest.url}/dlq/0`, body: '0', retries: 2, retryDelay: '100' });
    await q.enqueue({ url: `${dest.url}/dlq/1`, body: '1' });
    await until(() => paths('/dlq/').length === 4, 'four deliveries');
    expect(paths('/dlq/')).toEqual(['/dlq/0', '/dlq/0', '/dlq/0', '/dlq/1']);
    const dlq = await client.dlq.listMessages({ filter: { messageId: first.messageId } });
    expect(dlq.messages).toHaveLength(1);
  });

  it('cancelling the message that waits for its retry frees the queue at once', async () => {
    await client.queue({ queueName: 'fifo-cancel' }).upsert({ parallelism: 1 });
    dest.respond = (r) => ({ status: r.path === '/cancel/0' ? 500 : 200 });
    const q = client.queue({ queueName: 'fifo-cancel' });
    // The retry is due in a minute: only the cancel can let the second message go.
    const first = await q.enqueue({ url: `${dest.url}/cancel/0`, body: '0', retries: 3, retryDelay: '60000' });
    await q.enqueue({ url: `${dest.url}/cancel/1`, body: '1' });
    await until(() => paths('/cancel/').length === 1, 'the first attempt');
    await new Promise((r) => setTimeout(r, 300));
    expect(paths('/cancel/')).toEqual(['/cancel/0']);
    expect(await client.messages.cancel(first.messageId)).toEqual({ cancelled: 1 });
    await until(() => paths('/cancel/').length === 2, 'the second message');
    expect(paths('/cancel/')).toEqual(['/cancel/0', '/cancel/1']);
  });
});

describe('deleting a queue', () => {
  it('a message holding the queue for its retry is not delivered again after the queue is deleted', async () => {
    await client.queue({ queueName: 'fifo-delete' }).upsert({ parallelism: 1 });
    dest.respond = (r) => ({ status: r.path === '/del/0' ? 500 : 200 });
    await client.queue({ queueName: 'fifo-delete' }).enqueue({ url: `${dest.url}/del/0`, body: '0', retries: 3, retryDelay: '400' });
    await until(() => paths('/del/').length === 1, 'the first attempt');
    await client.queue({ queueName: 'fifo-delete' }).delete();
    await new Promise((r) => setTimeout(r, 800));
    expect(paths('/del/')).toEqual(['/del/0']);
  });
});
