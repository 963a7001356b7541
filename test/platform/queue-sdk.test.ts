// The official @upstash/qstash Client, unchanged, against the local platform: publish,
// publishJSON, batch, URL groups, DLQ, messages, queues, schedules, logs and signing keys.
import { Client, Receiver } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
let client: Client;
let a: Destination;
let b: Destination;

beforeAll(async () => {
  p = await startTestPlatform();
  client = new Client({ baseUrl: `${p.url}/queue`, token: p.token, enableTelemetry: false, retry: false });
  [a, b] = await Promise.all([startDestination(), startDestination()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await p?.stop();
});

describe('@upstash/qstash Client', () => {
  it('publish and publishJSON deliver, and the keys endpoint gives keys the Receiver accepts', async () => {
    const res = await client.publish({ url: `${a.url}/plain`, body: 'text body', headers: { 'X-Custom': 'c' } });
    expect(res.messageId).toMatch(/^msg_/);
    const json = await client.publishJSON({ url: `${a.url}/json`, body: { n: 1 } });
    const got = await a.waitFor(2);
    const plain = got.find((r) => r.path === '/plain')!;
    const asJson = got.find((r) => r.path === '/json')!;
    expect(plain.body.toString()).toBe('text body');
    expect(plain.headers['x-custom']).toBe('c'); // the SDK sends it as Upstash-Forward-X-Custom
    expect(asJson.headers['content-type']).toBe('application/json');
    expect(JSON.parse(asJson.body.toString())).toEqual({ n: 1 });
    expect(asJson.headers['upstash-message-id']).toBe(json.messageId);
    const keys = (await (await fetch(`${p.url}/queue/v2/keys`, { headers: { Authorization: `Bearer ${p.token}` } })).json()) as any;
    const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    expect(
      await receiver.verify({ signature: plain.headers['upstash-signature'] as string, body: 'text body', url: `${a.url}/plain` }),
    ).toBe(true);
  });

  it('rotating the signing keys: next becomes current, deliveries are signed with it', async () => {
    const auth = { Authorization: `Bearer ${p.token}` };
    const before = (await (await fetch(`${p.url}/queue/v2/keys`, { headers: auth })).json()) as any;
    const rotated = (await (await fetch(`${p.url}/queue/v2/keys/rotate`, { method: 'POST', headers: auth })).json()) as any;
    expect(rotated.current).toBe(before.next);
    expect(rotated.next).toMatch(/^sig_/);
    expect(rotated.next).not.toBe(before.next);
    expect(await (await fetch(`${p.url}/queue/v2/keys`, { headers: auth })).json()).toEqual(rotated);
    const n = a.received.length;
    await client.publish({ url: `${a.url}/after-rotation`, body: 'r' });
    const [got] = (await a.waitFor(n + 1)).slice(n);
    const signature = got.headers['upstash-signature'] as string;
    // A receiver still configured with the old pair accepts it through its "next" key, as rotation intends.
    expect(await new Receiver({ currentSigningKey: before.current, nextSigningKey: before.next }).verify({ signature, body: 'r' })).toBe(
      true,
    );
    await expect(
      new Receiver({ currentSigningKey: before.current, nextSigningKey: before.current }).verify({ signature, body: 'r' }),
    ).rejects.toThrow();
  });

  it('URL groups: add endpoints, get, list, publish fans out with group and endpoint names, remove, delete', async () => {
    await client.urlGroups.addEndpoints({ name: 'team', endpoints: [{ name: 'first', url: `${a.url}/g` }, { url: `${b.url}/g` }] });
    const group = await client.urlGroups.get('team');
    expect(group).toMatchObject({ name: 'team', endpoints: [{ name: 'first', url: `${a.url}/g` }, { url: `${b.url}/g` }] });
    expect(group.createdAt).toBeGreaterThan(0);
    expect((await client.urlGroups.list()).map((g) => g.name)).toContain('team');
    const before = [a.received.length, b.received.length];
    const res = await client.publish({ urlGroup: 'team', body: 'fan-out' });
    expect(res).toHaveLength(2);
    expect(res.map((r) => r.url).sort()).toEqual([`${a.url}/g`, `${b.url}/g`].sort());
    const [ra] = (await a.waitFor(before[0] + 1)).slice(before[0]);
    const [rb] = (await b.waitFor(before[1] + 1)).slice(before[1]);
    expect(ra.body.toString()).toBe('fan-out');
    expect(ra.headers['upstash-topic-name']).toBe('team');
    expect(ra.headers['upstash-endpoint-name']).toBe('first');
    expect(rb.headers['upstash-topic-name']).toBe('team');
    await client.urlGroups.removeEndpoints({ name: 'team', endpoints: [{ name: 'first' }] });
    expect((await client.urlGroups.get('team')).endpoints).toEqual([{ url: `${b.url}/g` }]);
    await client.urlGroups.delete('team');
    await expect(client.urlGroups.get('team')).rejects.toThrow(/topic team not found/);
  });

  it('batch publishes several messages', async () => {
    const before = a.received.length;
    const res = await client.batch([
      { url: `${a.url}/b1`, body: 'one' },
      { url: `${a.url}/b2`, body: 'two' },
    ]);
    expect(res).toHaveLength(2);
    const got = (await a.waitFor(before + 2)).slice(before);
    expect(got.map((r) => r.body.toString()).sort()).toEqual(['one', 'two']);
  });

  it('messages: get a delayed message, then cancel it; bulk cancel by id', async () => {
    const { messageId } = await client.publish({ url: `${a.url}/later`, body: 'later', delay: 600, label: 'lbl' });
    const m = await client.messages.get(messageId);
    expect(m).toMatchObject({ messageId, url: `${a.url}/later`, body: 'later', method: 'POST', maxRetries: 3, labels: ['lbl'] });
    expect(m.notBefore).toBeGreaterThan(Date.now() + 590_000);
    expect(await client.messages.cancel(messageId)).toEqual({ cancelled: 1 });
    await expect(client.messages.get(messageId)).rejects.toThrow(/not found/);
    const two = await Promise.all([1, 2].map((i) => client.publish({ url: `${a.url}/x${i}`, delay: 600 })));
    expect(await client.messages.cancel(two.map((r) => r.messageId))).toEqual({ cancelled: 2 });
  });

  it('DLQ: list with filters and cursor, get, delete, bulk delete, retry', async () => {
    b.respond = () => ({ status: 500, body: 'nope' });
    const published = await Promise.all([1, 2, 3].map((i) => client.publish({ url: `${b.url}/dead${i}`, body: `d${i}`, retries: 0 })));
    // Wait (bounded) until the three failed messages are in the DLQ.
    for (let i = 0; i < 250; i++) {
      const all = await client.dlq.listMessages();
      if (all.messages.filter((m) => m.url.startsWith(`${b.url}/dead`)).length === 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const list = await client.dlq.listMessages({ filter: { url: `${b.url}/dead1` } });
    expect(list.messages).toHaveLength(1);
    expect(list.messages[0]).toMatchObject({ messageId: published[0].messageId, responseStatus: 500, responseBody: 'nope', body: 'd1' });
    const page1 = await client.dlq.listMessages({ count: 2 });
    expect(page1.messages).toHaveLength(2);
    expect(page1.cursor).toBeDefined();
    const page2 = await client.dlq.listMessages({ count: 2, cursor: page1.cursor });
    expect(page2.messages.length).toBeGreaterThanOrEqual(1);
    expect(page2.messages.map((m) => m.dlqId)).not.toContain(page1.messages[0].dlqId);

    const [first, second, third] = (await client.dlq.listMessages()).messages.filter((m) => m.url.startsWith(`${b.url}/dead`));
    await client.dlq.delete(first.dlqId);
    await expect(client.dlq.delete(first.dlqId)).rejects.toThrow();
    expect(await client.dlq.delete({ dlqIds: [second.dlqId] })).toMatchObject({ deleted: 1 });
    b.respond = () => ({ status: 200 });
    const before = b.received.length;
    const retried = await client.dlq.retry(third.dlqId);
    expect(retried.responses).toHaveLength(1);
    const [again] = (await b.waitFor(before + 1)).slice(before);
    expect(again.headers['upstash-message-id']).toBe(retried.responses[0].messageId);
  });

  it('queues: upsert, get, list, enqueue, pause, resume, delete', async () => {
    const queue = client.queue({ queueName: 'orders' });
    await queue.upsert({ parallelism: 2 });
    expect(await queue.get()).toMatchObject({ name: 'orders', parallelism: 2, paused: false, lag: 0 });
    await queue.pause();
    expect((await queue.get()).paused).toBe(true);
    const before = a.received.length;
    const { messageId } = await queue.enqueue({ url: `${a.url}/queued`, body: 'q' });
    expect(messageId).toMatch(/^msg_/);
    expect((await queue.get()).lag).toBe(1);
    expect((await client.queue().list()).map((q) => q.name)).toContain('orders');
    await queue.resume();
    const [got] = (await a.waitFor(before + 1)).slice(before);
    expect(got.body.toString()).toBe('q');
    expect(got.headers['upstash-queue-name']).toBe('orders');
    await queue.delete();
    await expect(queue.get()).rejects.toThrow(/queue orders not found/);
  });

  it('schedules: create, get, list, pause, resume, delete; a schedule delivers', async () => {
    const { scheduleId } = await client.schedules.create({ destination: `${a.url}/cron`, cron: '*/5 * * * *', body: 'tick', retries: 1 });
    expect(scheduleId).toMatch(/^scd_/);
    const s = await client.schedules.get(scheduleId);
    expect(s).toMatchObject({ scheduleId, cron: '*/5 * * * *', destination: `${a.url}/cron`, body: 'tick', retries: 1, isPaused: false });
    expect(s.nextScheduleTime).toBeGreaterThan(Date.now());
    expect((await client.schedules.list()).map((x) => x.scheduleId)).toContain(scheduleId);
    await client.schedules.pause({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(true);
    await client.schedules.resume({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);
    await client.schedules.delete(scheduleId);
    await expect(client.schedules.get(scheduleId)).rejects.toThrow(/not found/);
    await expect(client.schedules.create({ destination: a.url, cron: 'not a cron' })).rejects.toThrow(/invalid cron expression/);

    // Six fields (with seconds) are refused, as the service (minute resolution) refuses them.
    await expect(client.schedules.create({ destination: a.url, cron: '* * * * * *' })).rejects.toThrow(/must have 5 fields/);
  });

  it('logs: events of a message with filters', async () => {
    const { messageId } = await client.publish({ url: `${a.url}/logged`, body: 'l' });
    let states: string[] = [];
    for (let i = 0; i < 200 && !states.includes('DELIVERED'); i++) {
      const { logs } = await client.logs({ filter: { messageId } as any });
      states = logs.map((l) => l.state);
      if (!states.includes('DELIVERED')) await new Promise((r) => setTimeout(r, 20));
    }
    expect(states).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    const page = await client.logs({ count: 1 } as any);
    expect(page.logs).toHaveLength(1);
    expect(page.cursor).toBeDefined();
  });
});
