// What each client costs, end to end: two named clients (CLIENT SETNAME through ioredis, CLIENT
// SETINFO lib-name on a raw connection) send known commands through a running proxy; a live
// /metrics scrape and INFO clientcost must charge each exactly its commands, requests and bytes
// (the reply bytes measured on a direct redis-server, the oracle); and the Grafana dashboard in
// docs/dashboards/ must pass its JSON schema and name only metrics the running proxy exports.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/metrics.js';
import { requestBytes } from '../../src/proxy/client-cost.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let metrics: { port: number; stop(): Promise<void> };

beforeAll(async () => {
  stack = await startStack();
  metrics = await startMetricsServer('127.0.0.1', 0);
}, 60_000);

afterAll(async () => {
  await metrics?.stop();
  await stack?.stop();
});

const BILLING: string[][] = [
  ['SET', 'cost:a', 'hello'],
  ['GET', 'cost:a'],
  ['INCR', 'cost:n'],
  ['LPUSH', 'cost:a', 'x'], // WRONGTYPE: an error reply, charged to the client
  ['GET', 'cost:missing'],
];
const REPORTS: string[][] = [
  ['SET', 'cost:r', 'v'.repeat(300)],
  ['GET', 'cost:r'],
  ['STRLEN', 'cost:r'],
];

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${metrics.port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one series (`name{labels}`) in a Prometheus text scrape. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The replies a direct redis-server gives to `commands`, in a fresh key space. */
async function oracleReplies(commands: string[][]): Promise<Buffer[]> {
  const direct = await RawClient.connect(stack.oracle.endpoint.port);
  try {
    await direct.call(['FLUSHALL']);
    return await direct.call(...commands);
  } finally {
    direct.close();
  }
}

describe('cost per client', () => {
  it('charges each named client its commands, requests, bytes and errors in /metrics and INFO clientcost', async () => {
    const expectedReplies = [...(await oracleReplies(BILLING)), ...(await oracleReplies(REPORTS))];
    const billing = new IORedis({ port: stack.proxy.port, connectionName: 'billing', enableReadyCheck: false, lazyConnect: true });
    await billing.connect();
    for (const [name, ...args] of BILLING) await billing.call(name, ...args).catch(() => undefined);
    billing.disconnect();

    // A client that only says which library it is (CLIENT SETINFO, Redis 7.2+), sending one command at a time.
    const reports = await RawClient.connect(stack.proxy.port);
    const [setinfo] = await reports.call(['CLIENT', 'SETINFO', 'lib-name', 'reportlib']);
    expect(setinfo.toString()).toBe('+OK\r\n');
    const replies: Buffer[] = [];
    for (const c of REPORTS) replies.push(...(await reports.call(c)));
    expect(replies.map(String)).toEqual(expectedReplies.slice(BILLING.length).map(String));

    const text = await scrape();
    const bytes = (cmds: string[][]) => cmds.reduce((n, c) => n + requestBytes(c.map((a) => Buffer.from(a))), 0);
    const received = (rs: Buffer[]) => rs.reduce((n, r) => n + r.length, 0);
    const metric = (m: string, client: string) => sample(text, `respgate_proxy_client_${m}{client="${client}"}`);
    expect(metric('commands_total', 'billing')).toBe(BILLING.length);
    expect(metric('commands_total', 'reportlib')).toBe(REPORTS.length);
    // One command at a time: each command is one whole request.
    expect(metric('requests_total', 'billing')).toBeCloseTo(BILLING.length, 9);
    expect(metric('requests_total', 'reportlib')).toBeCloseTo(REPORTS.length, 9);
    expect(metric('sent_bytes_total', 'billing')).toBe(bytes(BILLING));
    expect(metric('sent_bytes_total', 'reportlib')).toBe(bytes(REPORTS));
    expect(metric('received_bytes_total', 'billing')).toBe(received(expectedReplies.slice(0, BILLING.length)));
    expect(metric('received_bytes_total', 'reportlib')).toBe(received(expectedReplies.slice(BILLING.length)));
    expect(metric('errors_total', 'billing')).toBe(1);
    expect(metric('errors_total', 'reportlib')).toBe(0);
    // Per command, across both clients.
    expect(sample(text, 'respgate_proxy_upstream_command_calls_total{command="get"}')).toBe(3);
    expect(sample(text, 'respgate_proxy_upstream_command_errors_total{command="lpush"}')).toBe(1);
    // The request shares of all clients add up to the upstream calls the batcher made.
    const shares = [...text.matchAll(/^respgate_proxy_client_requests_total\{client="[^"]*"\} (\S+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    expect(shares).toBeCloseTo(sample(text, 'respgate_proxy_upstream_calls_total')!, 6);

    const [info] = await reports.call(['INFO', 'clientcost']);
    const body = info.toString();
    expect(body).toMatch(/^\$\d+\r\n# Clientcost\r\n/);
    expect(body).toContain(`client_billing:commands=${BILLING.length},requests=${BILLING.length}.000,bytes_sent=${bytes(BILLING)},`);
    expect(body).toContain(`client_reportlib:commands=${REPORTS.length},requests=${REPORTS.length}.000,`);
    expect(body).toMatch(/\r\ncmdcost_get:commands=3,/);
    // Only when named: INFO, INFO all and INFO everything list Redis' own sections.
    for (const form of [['INFO'], ['INFO', 'all'], ['INFO', 'everything']]) {
      const [plain] = await reports.call(form);
      expect(plain.toString()).not.toContain('# Clientcost');
    }
    const [both] = await reports.call(['INFO', 'clientcost', 'errorstats']);
    expect(both.toString()).toMatch(/# Errorstats\r\n[^#]*\r\n# Clientcost\r\n/);
    // CONFIG RESETSTAT clears INFO's totals as Redis does for its own stats; /metrics counters keep counting.
    await reports.call(['CONFIG', 'RESETSTAT']);
    const [after] = await reports.call(['INFO', 'clientcost']);
    expect(after.toString()).not.toContain('client_billing:');
    expect(sample(await scrape(), 'respgate_proxy_client_commands_total{client="billing"}')).toBe(BILLING.length);
    reports.close();
  });

  it("splits requests that carry several clients' commands by command, and charges each its own bytes", async () => {
    const before = await scrape();
    const a = await RawClient.connect(stack.proxy.port);
    const b = await RawClient.connect(stack.proxy.port);
    await a.call(['CLIENT', 'SETNAME', 'burst-a']);
    await b.call(['CLIENT', 'SETINFO', 'lib-name', 'burst-b']);
    const burstA = Array.from({ length: 60 }, (_, i) => ['SET', `burst:a${i}`, 'x'.repeat(i)]);
    const burstB = Array.from({ length: 40 }, (_, i) => ['GET', `burst:a${i}`]);
    // Both pipelines in the same I/O turn: the batcher coalesces them into shared /pipeline calls.
    await Promise.all([a.call(...burstA), b.call(...burstB)]);
    const after = await scrape();
    const bytes = (cmds: string[][]) => cmds.reduce((n, c) => n + requestBytes(c.map((x) => Buffer.from(x))), 0);
    const m = (text: string, name: string, client: string) => sample(text, `respgate_proxy_client_${name}{client="${client}"}`) ?? 0;
    expect(m(after, 'commands_total', 'burst-a')).toBe(60);
    expect(m(after, 'commands_total', 'burst-b')).toBe(40);
    expect(m(after, 'sent_bytes_total', 'burst-a')).toBe(bytes(burstA));
    expect(m(after, 'sent_bytes_total', 'burst-b')).toBe(bytes(burstB));
    // Fewer requests than commands (coalesced), and the shares of all clients still add up to the calls made.
    expect(m(after, 'requests_total', 'burst-a')).toBeLessThan(60);
    const shares = (text: string) =>
      [...text.matchAll(/^respgate_proxy_client_requests_total\{client="[^"]*"\} (\S+)$/gm)].reduce((n, x) => n + Number(x[1]), 0);
    const calls = (text: string) => sample(text, 'respgate_proxy_upstream_calls_total')!;
    expect(shares(after) - shares(before)).toBeCloseTo(calls(after) - calls(before), 6);
    a.close();
    b.close();
  });

  it('answers CLIENT SETINFO bad input with Redis 7.2 errors', async () => {
    const c = await RawClient.connect(stack.proxy.port);
    const replies = await c.call(
      ['CLIENT', 'SETINFO', 'lib-color', 'x'],
      ['CLIENT', 'SETINFO', 'lib-name', 'has space'],
      ['CLIENT', 'SETINFO', 'lib-name'],
      ['CLIENT', 'SETINFO', 'LIB-VER', '1.2.3'],
    );
    expect(replies.map(String)).toEqual([
      "-ERR Unrecognized option 'lib-color'\r\n",
      '-ERR lib-name cannot contain spaces, newlines or special characters.\r\n',
      "-ERR wrong number of arguments for 'client|setinfo' command\r\n",
      '+OK\r\n',
    ]);
    c.close();
  });
});

describe('Grafana dashboard (docs/dashboards/respgate-proxy.json)', () => {
  const dashboard = JSON.parse(readFileSync(new URL('../../docs/dashboards/respgate-proxy.json', import.meta.url), 'utf8'));
  const schema = JSON.parse(readFileSync(new URL('../../docs/dashboards/dashboard.schema.json', import.meta.url), 'utf8'));

  it('passes the dashboard JSON schema, which refuses a broken dashboard', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate(dashboard), JSON.stringify(validate.errors)).toBe(true);
    const broken = structuredClone(dashboard);
    delete broken.panels[0].gridPos;
    broken.panels[1].targets[0].expr = '';
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath).sort()).toEqual(['/panels/0', '/panels/1/targets/0/expr']);
  });

  it('names in every query only metrics that the running proxy exports', async () => {
    const exported = new Set([...(await scrape()).matchAll(/^(respgate_[a-z_]+)[{ ]/gm)].map((m) => m[1]));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const expr of exprs) {
      const names = [...expr.matchAll(/\b(respgate_[a-z_]+)/g)].map((m) => m[1]);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const n of names) if (!exported.has(n)) missing.push(n);
    }
    expect(missing).toEqual([]);
    // The panels the operator needs: rate, cost per client, latency percentiles, errors, blocked clients.
    const all = exprs.join('\n');
    for (const needed of ['client_commands_total', 'histogram_quantile(0.99', 'upstream_errors_total', 'state="blocked"'])
      expect(all).toContain(needed);
  });
});
