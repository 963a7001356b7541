// Prometheus metrics: the platform serves every role's metrics of its process on GET /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { kv, startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { startMetricsServer } from '../../src/metrics.js';

let p: RunningPlatform;
let proxy: RunningProxy;
beforeAll(async () => {
  p = await startTestPlatform();
  proxy = await startTestProxy(p);
});
afterAll(async () => {
  await proxy?.stop();
  await p?.stop();
});

function value(text: string, line: RegExp): number {
  const m = text.split('\n').find((l) => line.test(l));
  if (!m) throw new Error(`no metric line matching ${line}`);
  return Number(m.split(' ').pop());
}

describe('/metrics', () => {
  it('counts platform requests by area and status, and proxy traffic, without auth', async () => {
    await kv(p, '/set/m/1');
    await kv(p, '/get/m', { token: 'wrong' });
    const c = await RawClient.connect(proxy.port);
    await c.call(['SET', 'a', '1'], ['GET', 'a']);
    const res = await fetch(`${p.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(value(text, /^respgate_platform_http_requests_total\{area="kv",status="200"\}/)).toBeGreaterThanOrEqual(2);
    expect(value(text, /^respgate_platform_http_requests_total\{area="kv",status="401"\}/)).toBe(1);
    expect(value(text, /^respgate_proxy_connections /)).toBe(1);
    expect(value(text, /^respgate_proxy_forwarded_commands_total /)).toBeGreaterThanOrEqual(2);
    expect(value(text, /^respgate_platform_event_streams /)).toBe(0);
    expect(text).not.toContain(p.token);
    c.close();
  });

  it('is served on its own port for a standalone proxy', async () => {
    const m = await startMetricsServer('127.0.0.1', 0);
    try {
      const text = await (await fetch(`http://127.0.0.1:${m.port}/metrics`)).text();
      expect(text).toContain('respgate_proxy_upstream_calls_total');
      expect((await fetch(`http://127.0.0.1:${m.port}/other`)).status).toBe(404);
    } finally {
      await m.stop();
    }
  });
});
