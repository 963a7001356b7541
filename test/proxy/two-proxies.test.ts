// Scale-out as docs/scaling.md describes it: two `respgate proxy` processes (sidecars of two app
// instances) in front of one upstream, with clients on both. The proxy keeps no state that the two must
// share: what one writes the other reads, a PUBLISH through one reaches a subscriber of the other, a
// BLPOP blocked on one wakes on an LPUSH through the other, and WATCH sees a write made through the other.
import type { ChildProcess } from 'node:child_process';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startTestPlatform } from '../helpers/platform.js';
import { startRespgate, stopRespgate } from '../helpers/respgate-cli.js';

interface ProxyProcess {
  child: ChildProcess;
  port: number;
}

async function startProxyProcess(platform: RunningPlatform): Promise<ProxyProcess> {
  const { child, output } = await startRespgate(
    ['proxy', '--port', '0', '--upstream-url', platform.url, '--block-poll-interval', '20'],
    /proxy ready on redis:\/\/[^:]+:\d+/,
    // The token through the environment, as a deployment would give it (never on the command line).
    { RESPGATE_UPSTREAM_TOKEN: platform.token, RESPGATE_LOG_LEVEL: 'silent' },
  );
  const port = Number(/proxy ready on redis:\/\/[^:]+:(\d+)/.exec(output)![1]);
  return { child, port };
}

describe('two proxies on one upstream', () => {
  let platform: RunningPlatform;
  let a: ProxyProcess;
  let b: ProxyProcess;
  const clients = new Map<ProxyProcess, IORedis[]>();
  const client = (p: ProxyProcess): IORedis => {
    const c = new IORedis({ port: p.port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    clients.set(p, [...(clients.get(p) ?? []), c]);
    return c;
  };
  const disconnectClients = (p: ProxyProcess): void => {
    for (const c of clients.get(p) ?? []) c.disconnect();
    clients.delete(p);
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    [a, b] = await Promise.all([startProxyProcess(platform), startProxyProcess(platform)]);
  }, 60_000);

  afterAll(async () => {
    for (const p of [...clients.keys()]) disconnectClients(p);
    await Promise.all([a && stopRespgate(a.child), b && stopRespgate(b.child)]);
    await platform?.stop();
  });

  it('are two processes on two ports', () => {
    expect(a.port).not.toBe(b.port);
    expect(a.child.pid).not.toBe(b.child.pid);
  });

  it('a write through one is read through the other', async () => {
    const [ca, cb] = [client(a), client(b)];
    expect(await ca.set('scale:k', 'from-a')).toBe('OK');
    expect(await cb.get('scale:k')).toBe('from-a');
    expect(await cb.incrby('scale:n', 5)).toBe(5);
    expect(await ca.incrby('scale:n', 2)).toBe(7);
  });

  it('a PUBLISH through one reaches a subscriber on the other (channel and pattern)', async () => {
    const subscriber = client(b);
    const publisher = client(a);
    const got: string[] = [];
    subscriber.on('message', (ch: string, msg: string) => got.push(`message ${ch} ${msg}`));
    subscriber.on('pmessage', (pat: string, ch: string, msg: string) => got.push(`pmessage ${pat} ${ch} ${msg}`));
    await subscriber.subscribe('scale:news');
    await subscriber.psubscribe('scale:*');
    // Each subscription is one stream of the upstream's, so PUBLISH counts both, as Redis counts
    // one client subscribed to a channel and to a pattern that matches it. Probe until both streams
    // are open upstream, then publish once.
    await expect.poll(() => publisher.publish('scale:news', 'probe'), { timeout: 10_000 }).toBe(2);
    await expect
      .poll(() => got.includes('pmessage scale:* scale:news probe') && got.includes('message scale:news probe'), { timeout: 10_000 })
      .toBe(true);
    got.length = 0;
    expect(await publisher.publish('scale:news', 'hello')).toBe(2);
    await expect.poll(() => got.length, { timeout: 10_000 }).toBe(2);
    expect(got).toContain('message scale:news hello');
    expect(got).toContain('pmessage scale:* scale:news hello');
    // message before pmessage, as from Redis.
    expect(got.indexOf('message scale:news hello')).toBeLessThan(got.indexOf('pmessage scale:* scale:news hello'));
  });

  it('a BLPOP blocked on one wakes on an LPUSH through the other', async () => {
    const blocked = client(a);
    const pusher = client(b);
    const started = Date.now();
    const pop = blocked.blpop('scale:jobs', 10);
    await new Promise((r) => setTimeout(r, 300));
    expect(await pusher.lpush('scale:jobs', 'job-1')).toBe(1);
    expect(await pop).toEqual(['scale:jobs', 'job-1']);
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(await pusher.llen('scale:jobs')).toBe(0);
  });

  it('WATCH on one sees a write made through the other (EXEC answers null)', async () => {
    const watcher = client(a);
    const writer = client(b);
    await watcher.set('scale:w', '1');
    expect(await watcher.watch('scale:w')).toBe('OK');
    expect(await writer.set('scale:w', '2')).toBe('OK');
    expect(await watcher.multi().set('scale:w', 'from-watcher').exec()).toBeNull();
    expect(await writer.get('scale:w')).toBe('2');
    // Without a concurrent write the same transaction runs.
    expect(await watcher.watch('scale:w')).toBe('OK');
    expect(await watcher.multi().set('scale:w', 'from-watcher').exec()).toEqual([[null, 'OK']]);
    expect(await writer.get('scale:w')).toBe('from-watcher');
  });

  it('MONITOR and CLIENT LIST are per proxy: each sees its own clients only', async () => {
    const ca = client(a);
    const cb = client(b);
    await ca.client('SETNAME', 'on-a');
    await cb.client('SETNAME', 'on-b');
    const listA = (await ca.client('LIST')) as string;
    const listB = (await cb.client('LIST')) as string;
    expect(listA).toContain('name=on-a');
    expect(listA).not.toContain('name=on-b');
    expect(listB).toContain('name=on-b');
    expect(listB).not.toContain('name=on-a');
  });

  it('a proxy that stops leaves the other serving', async () => {
    const cb = client(b);
    disconnectClients(a);
    await stopRespgate(a.child);
    expect(await cb.set('scale:after', 'still')).toBe('OK');
    expect(await cb.get('scale:after')).toBe('still');
  });
});
