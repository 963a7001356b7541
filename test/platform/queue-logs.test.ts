// The log (GET /v2/logs, /v2/events) as the reference's LogEntry: the states CREATED, ACTIVE,
// ERROR, RETRY, FAILED, DELIVERED, CANCEL_REQUESTED and CANCELLED in the order a message goes
// through them; the message's header, base64 body, method and settings on each entry (redacted as
// Upstash-Redact-Fields says); the response of a failed attempt on ERROR; state=IN_PROGRESS
// selects ACTIVE, RETRY and ERROR.
import { createHash } from 'node:crypto';
import { Client } from '@upstash/qstash';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { QueueRecords } from '../../src/platform/queue/records.js';
import { startEmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
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

type Entry = Record<string, any>;
async function entriesOf(messageId: string, until: (states: string[]) => boolean): Promise<Entry[]> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${p.url}/queue/v2/logs?messageId=${messageId}`, { headers: { Authorization: `Bearer ${p.token}` } });
    const logs = ((await res.json()) as { logs: Entry[] }).logs.reverse();
    if (until(logs.map((l) => l.state))) return logs;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the log of ${messageId} never got there`);
}

describe('log states and fields', () => {
  it('a failing then delivered message: CREATED, ACTIVE, ERROR, RETRY, ACTIVE, DELIVERED with its fields', async () => {
    let n = 0;
    dest.respond = () => (n++ === 0 ? { status: 503, body: 'busy', headers: { 'X-Why': 'load' } } : { status: 200 });
    const { messageId } = await client.publish({
      url: `${dest.url}/twice`,
      body: 'payload',
      method: 'PUT',
      headers: { 'X-Custom': 'c' },
      retries: 2,
      retryDelay: '10',
      callback: `${dest.url}/cb`,
    });
    const logs = await entriesOf(messageId, (s) => s.includes('DELIVERED'));
    expect(logs.map((l) => l.state)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'RETRY', 'ACTIVE', 'DELIVERED']);
    for (const l of logs) {
      expect(l).toMatchObject({ messageId, method: 'PUT', maxRetries: 2, retryDelayExpression: '10', callback: `${dest.url}/cb` });
      expect(Buffer.from(l.body, 'base64').toString()).toBe('payload');
      expect(l.header['X-Custom']).toEqual(['c']);
    }
    const error = logs[2];
    expect(error).toMatchObject({ responseStatus: 503, error: 'the endpoint answered with status 503' });
    expect(Buffer.from(error.responseBody, 'base64').toString()).toBe('busy');
    expect(error.responseHeaders['X-Why']).toEqual(['load']);
    expect(logs[3].nextDeliveryTime).toBeGreaterThan(logs[2].time - 1);
  });

  it('CREATED comes first in the log of every message and callback, even when delivery is immediate', async () => {
    // The callbacks are queued by the engine and delivered by a worker of the same process at
    // once; a CREATED logged only after the add's reply came after the DELIVERED of a fast one.
    dest.respond = () => ({ status: 200, body: 'ok' });
    const sent = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        client.publish({ url: `${dest.url}/fast${i}`, body: 'x', retries: 0, callback: `${dest.url}/cb` }),
      ),
    );
    for (const { messageId } of sent) {
      expect((await entriesOf(messageId, (s) => s.includes('DELIVERED'))).map((l) => l.state)).toEqual(['CREATED', 'ACTIVE', 'DELIVERED']);
      const callback = await entriesOf(`${messageId}_cb0`, (s) => s.includes('DELIVERED'));
      expect(callback.map((l) => l.state)).toEqual(['CREATED', 'ACTIVE', 'DELIVERED']);
    }
  });

  it('retries exhausted: ERROR then FAILED with the response', async () => {
    dest.respond = () => ({ status: 500, body: 'no' });
    const { messageId } = await client.publish({ url: `${dest.url}/fails`, body: 'x', retries: 0 });
    const logs = await entriesOf(messageId, (s) => s.includes('FAILED'));
    expect(logs.map((l) => l.state)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'FAILED']);
    expect(logs[3]).toMatchObject({ responseStatus: 500, responseBody: Buffer.from('no').toString('base64') });
  });

  it('a cancel of a pending message logs CANCEL_REQUESTED then CANCELLED', async () => {
    const { messageId } = await client.publish({ url: `${dest.url}/later`, body: 'x', delay: 600 });
    await client.messages.cancel(messageId);
    const logs = await entriesOf(messageId, (s) => s.includes('CANCELLED'));
    expect(logs.map((l) => l.state)).toEqual(['CREATED', 'CANCEL_REQUESTED', 'CANCELLED']);
  });

  it('a cancel while the message holds its queue waiting for a retry: CANCEL_REQUESTED, then CANCELLED when honoured', async () => {
    dest.respond = () => ({ status: 500 });
    await client.queue({ queueName: 'log-cancel' }).upsert({ parallelism: 1 });
    const { messageId } = await client
      .queue({ queueName: 'log-cancel' })
      .enqueue({ url: `${dest.url}/held`, body: 'x', retries: 3, retryDelay: '60000' });
    await entriesOf(messageId, (s) => s.includes('RETRY'));
    await client.messages.cancel(messageId);
    const logs = await entriesOf(messageId, (s) => s.includes('CANCELLED'));
    expect(logs.map((l) => l.state)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'RETRY', 'CANCEL_REQUESTED', 'CANCELLED']);
  });

  it('state=IN_PROGRESS selects ACTIVE, RETRY and ERROR entries', async () => {
    dest.respond = () => ({ status: 500 });
    const { messageId } = await client.publish({ url: `${dest.url}/ip`, body: 'x', retries: 1, retryDelay: '1' });
    await entriesOf(messageId, (s) => s.includes('FAILED'));
    const res = await fetch(`${p.url}/queue/v2/events?messageId=${messageId}&state=IN_PROGRESS`, {
      headers: { Authorization: `Bearer ${p.token}` },
    });
    const states = ((await res.json()) as { events: Entry[] }).events.map((e) => e.state).sort();
    expect(states).toEqual(['ACTIVE', 'ACTIVE', 'ERROR', 'ERROR', 'RETRY']);
  });

  it('redacted parts stay redacted in the log', async () => {
    dest.respond = () => ({ status: 200 });
    const { messageId } = await client.publish({
      url: `${dest.url}/red`,
      body: 'secret',
      headers: { Authorization: 'Bearer x' },
      redact: { body: true, header: ['Authorization'] },
    });
    const logs = await entriesOf(messageId, (s) => s.includes('DELIVERED'));
    const hash = (v: string) => `REDACTED:${createHash('sha256').update(v).digest('hex')}`;
    for (const l of logs) {
      expect(Buffer.from(l.body, 'base64').toString()).toBe(hash('secret'));
      expect(l.header.Authorization).toEqual([hash('Bearer x')]);
    }
    expect(dest.received.at(-1)!.body.toString()).toBe('secret');
  });
});

describe('the log of an add that failed', () => {
  it('withdrawEvents takes back the events still waiting for their batch, and only those', async () => {
    const server = await startEmbeddedRedis({ password: null });
    const redis = new Redis({ host: server.endpoint.host, port: server.endpoint.port });
    try {
      const records = new QueueRecords(redis);
      const event = (messageId: string) => records.logEvent({ time: Date.now(), state: 'CREATED', messageId, url: 'http://127.0.0.1:9/' });
      const kept = event('msg_kept');
      await records.flushEvents(); // already in the stream: a later withdraw cannot reach it
      const failed = [event('msg_failed_1'), event('msg_failed_2')];
      event('msg_other');
      records.withdrawEvents([...failed, kept]);
      const { events } = await records.readEvents(undefined, 10, () => true);
      expect(events.map((e) => e.messageId)).toEqual(['msg_other', 'msg_kept']);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
