// What an operator gets from the proxy: SLOWLOG, /healthz and /readyz, the check of the upstream at
// start (and in the background), upstream errors logged once per interval with a count, the metrics
// and INFO fields, CLIENT KILL on the proxy's own clients, and the request-size hint.
import { Writable } from 'node:stream';
import { Redis as IORedis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyConfig } from '../../src/config.js';
import { prettyLine } from '../../src/logger.js';
import { metricsText, startMetricsServer } from '../../src/metrics.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { restartablePort } from '../helpers/ports.js';
import { until } from '../helpers/wait.js';

let platform: RunningPlatform;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  platform = await startTestPlatform({ maxRequestSize: 64 * 1024 });
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await platform?.stop();
});

/** A proxy whose log lines (JSON objects) are kept for the test to read. */
async function proxyWithLog(upstream: { url: string; token: string }, overrides: Partial<ProxyConfig> = {}) {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const proxy = await startProxy(
    {
      host: '127.0.0.1',
      port: 0,
      upstreamUrl: upstream.url,
      upstreamToken: upstream.token,
      upstreamTimeoutMs: 2000,
      upstreamConnections: 4,
      maxBatch: 100,
      maxBulkLength: 512 * 1024 * 1024,
      ...overrides,
    },
    pino({ level: 'debug', base: undefined }, stream),
  );
  cleanups.push(() => proxy.stop());
  return { proxy, lines };
}

function client(proxy: RunningProxy): IORedis {
  const c = new IORedis({
    port: proxy.port,
    host: '127.0.0.1',
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  cleanups.push(async () => c.disconnect());
  return c;
}

describe('SLOWLOG', () => {
  it('records commands at or over --slowlog-log-slower-than (local ones too, as Redis), newest first, with Redis entry layout', async () => {
    const { proxy } = await proxyWithLog(platform, { slowlogLogSlowerThanUs: 0 });
    const c = client(proxy);
    // Redis logs SLOWLOG RESET itself once the log is empty, and every later command (SLOWLOG LEN too).
    expect(await c.call('SLOWLOG', 'RESET')).toBe('OK');
    await c.set('slow:a', 'x'.repeat(200));
    await c.get('slow:a');
    expect(await c.call('SLOWLOG', 'LEN')).toBe(3);
    const entries = (await c.call('SLOWLOG', 'GET')) as any[];
    expect(entries.map((e) => e[3][0])).toEqual(['SLOWLOG', 'get', 'set', 'SLOWLOG']);
    const [, newest, older] = entries;
    expect(newest[0]).toBe(older[0] + 1);
    expect(Math.abs(newest[1] - Date.now() / 1000)).toBeLessThan(5);
    expect(newest[2]).toBeGreaterThanOrEqual(0);
    expect(newest[3]).toEqual(['get', 'slow:a']); // the arguments as the client sent them
    // Arguments longer than 128 bytes are trimmed as Redis trims them.
    expect(older[3][2]).toBe('x'.repeat(128) + '... (72 more bytes)');
    expect(newest[4]).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(newest[5]).toBe('');
    expect(await c.call('SLOWLOG', 'GET', '1')).toHaveLength(1);
    expect(((await c.call('SLOWLOG', 'GET', '-1')) as unknown[]).length).toBeGreaterThanOrEqual(5);
    await expect(c.call('SLOWLOG', 'GET', '-2')).rejects.toThrow('ERR count should be greater than or equal to -1');
    await expect(c.call('SLOWLOG', 'GET', 'x')).rejects.toThrow('ERR count should be greater than or equal to -1');
    await expect(c.call('SLOWLOG', 'GET', '1', '2')).rejects.toThrow(
      "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.",
    );
    expect(((await c.call('SLOWLOG', 'HELP')) as string[])[0]).toBe('SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:');
    expect(await c.call('SLOWLOG', 'RESET')).toBe('OK');
    expect(await c.call('SLOWLOG', 'LEN')).toBe(1);
  });

  it('records nothing with a negative threshold, and keeps at most --slowlog-max-len entries', async () => {
    const off = client((await proxyWithLog(platform, { slowlogLogSlowerThanUs: -1 })).proxy);
    await off.set('slow:b', '1');
    expect(await off.call('SLOWLOG', 'LEN')).toBe(0);
    const short = client((await proxyWithLog(platform, { slowlogLogSlowerThanUs: 0, slowlogMaxLen: 2 })).proxy);
    for (let i = 0; i < 5; i++) await short.incr('slow:c');
    const entries = (await short.call('SLOWLOG', 'GET')) as any[];
    expect(entries.map((e) => e[3][0])).toEqual(['incr', 'incr']);
    expect(entries[0][0]).toBe(entries[1][0] + 1);
  });
});

describe('the upstream check at start and upstream errors', () => {
  it('says the upstream refuses the token, logs the errors of commands once per interval with a count, and counts them by kind', async () => {
    const { proxy, lines } = await proxyWithLog(
      { url: platform.url, token: 'wrong-token' },
      { upstreamErrorLogIntervalMs: 2000, upstreamRecheckMs: 60_000 },
    );
    expect(await proxy.upstreamChecked).toBe(false);
    expect(proxy.upstream.ready).toBe(false);
    expect(proxy.upstream.problem).toMatch(/authentication failed.*--upstream-token/);
    const failed = lines.find((l) => l.msg.startsWith('upstream check failed'));
    expect(failed?.level).toBe(50);
    expect(JSON.stringify(lines)).not.toContain('wrong-token');

    const c = client(proxy);
    // Sent together (one window, whatever the machine's load): 1 warn line at once, then 1 summary of the other 4.
    await Promise.all([0, 1, 2, 3, 4].map((i) => expect(c.get(`k${i}`)).rejects.toThrow(/upstream authentication failed/)));
    const warns = () => lines.filter((l) => l.level === 40 && l.kind === 'auth');
    expect(warns()).toHaveLength(1); // the first at once; the rest are counted
    expect(warns()[0].command).toBe('get');
    await until(() => warns().length === 2, 'the summary line of the interval');
    expect(warns()[1]).toMatchObject({ kind: 'auth', count: 4, commands: { get: 4 } });
    // Each one at debug, with the command name and never its arguments.
    const debug = lines.filter((l) => l.level === 20 && l.msg === 'upstream error');
    expect(debug).toHaveLength(5);
    expect(JSON.stringify(debug)).not.toContain('k1');
    expect((await metricsText()).body).toMatch(/respgate_proxy_upstream_errors_total\{kind="auth"\} 5/);
  });

  it('logs an unreachable upstream at start, keeps checking in the background, and turns ready once it answers', async () => {
    const port = await restartablePort();
    const { proxy, lines } = await proxyWithLog({ url: `http://127.0.0.1:${port}`, token: 'later' }, { upstreamRecheckMs: 50 });
    expect(await proxy.upstreamChecked).toBe(false);
    expect(proxy.upstream.problem).toMatch(/upstream unavailable/);
    const metrics = await startMetricsServer('127.0.0.1', 0, async () => ({
      ready: proxy.upstream.ready,
      problem: proxy.upstream.problem,
    }));
    cleanups.push(() => metrics.stop());
    const base = `http://127.0.0.1:${metrics.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as any).problem).toMatch(/unavailable/);

    const late = await startTestPlatform({ httpPort: port, token: 'later' });
    cleanups.push(() => late.stop());
    await until(() => proxy.upstream.ready, 'the background check to find the upstream');
    expect(lines.some((l) => l.msg === 'upstream reachable again')).toBe(true);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await client(proxy).set('back', '1')).toBe('OK');
  });

  it('names the request-size limit of the platform and the flag that raises it', async () => {
    const { proxy } = await proxyWithLog(platform);
    await expect(client(proxy).set('big', 'v'.repeat(100 * 1024))).rejects.toThrow(/max request size exceeded.*--max-request-size/);
  });
});

describe('health routes of the platform', () => {
  it('answers /healthz and /readyz without a token', async () => {
    const h = await fetch(`${platform.url}/healthz`);
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: 'ok' });
    const r = await fetch(`${platform.url}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ready' });
  });
});

describe('metrics, INFO, logs and CLIENT KILL', () => {
  it('exposes latency histograms, batch sizes, connections by state, bytes, and INFO net bytes and blocked clients', async () => {
    const { proxy, lines } = await proxyWithLog(platform);
    const c = client(proxy);
    const blocked = client(proxy);
    await c.set('m:a', '1');
    const waiting = blocked.blpop('m:list', 0);
    await until(async () => /blocked_clients:1/.test(await c.info('clients')), 'a client blocked in BLPOP');
    const body = (await metricsText()).body;
    expect(body).toMatch(/respgate_proxy_command_duration_seconds_count [1-9]/);
    expect(body).toMatch(/respgate_proxy_upstream_call_duration_seconds_bucket\{le="\+Inf"\} [1-9]/);
    expect(body).toMatch(/respgate_proxy_batch_size_bucket\{le="1"\} [1-9]/);
    expect(body).toContain('respgate_proxy_connections_by_state{state="blocked"} 1');
    expect(body).toContain('respgate_proxy_connections_by_state{state="normal"} 1');
    expect(body).toMatch(/respgate_proxy_net_bytes_total\{direction="in"\} [1-9]/);
    expect(body).toContain('respgate_proxy_event_streams 0');
    const stats = await c.info('stats');
    expect(Number(/total_net_input_bytes:(\d+)/.exec(stats)![1])).toBeGreaterThan(0);
    expect(Number(/total_net_output_bytes:(\d+)/.exec(stats)![1])).toBeGreaterThan(0);
    await c.rpush('m:list', 'x');
    expect(await waiting).toEqual(['m:list', 'x']);
    expect(lines.filter((l) => l.msg === 'connection opened')).toHaveLength(2);
  });

  it("CLIENT KILL closes the proxy's own matching connections and counts them", async () => {
    const { proxy, lines } = await proxyWithLog(platform);
    const killer = client(proxy);
    const victim = client(proxy);
    await victim.ping();
    const victimId = (await victim.client('ID')) as number;
    const closed = new Promise((resolve) => victim.once('end', resolve));
    expect(await killer.call('CLIENT', 'KILL', 'ID', String(victimId))).toBe(1);
    await closed;
    expect(await killer.call('CLIENT', 'KILL', 'ID', String(victimId))).toBe(0);
    // SKIPME yes (the default) spares the caller.
    expect(await killer.call('CLIENT', 'KILL', 'TYPE', 'normal')).toBe(0);
    await until(() => lines.some((l) => l.msg === 'connection closed' && l.conn === victimId), 'the close logged');
  });
});

describe('pretty log lines (stderr is a terminal)', () => {
  it('turns a JSON line into time, level, message and fields', () => {
    const line = prettyLine(
      JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 1, 12, 3, 4, 5), msg: 'upstream error (auth)', kind: 'auth', count: 3 }),
      false,
    );
    expect(line).toBe('12:03:04.005 WARN  upstream error (auth)  kind=auth count=3\n');
  });
});
