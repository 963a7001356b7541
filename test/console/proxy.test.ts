// The console's Proxy page in a real browser, on a platform and a proxy wired as the dev stack wires
// them: a client connected through the proxy is listed by name, its commands raise the per-command
// calls and the upstream calls while the page refreshes itself, its upstream cost (INFO clientcost)
// rises by what it sent while another name's stays put, and the slowlog shows them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Redis } from 'ioredis';
import { startTestPlatform } from '../helpers/platform.js';
import { startTestProxy } from '../helpers/stack.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { hasChromium, launch, openConsole } from './browser.js';

describe.skipIf(!hasChromium)('console: proxy', () => {
  let p: RunningPlatform;
  let proxy: RunningProxy;
  let browser: Browser;
  let page: Page;
  let client: Redis;
  const errors: string[] = [];
  const cell = (row: string, column: number) =>
    page.$$eval(
      '#proxy-commands tbody tr',
      (trs, [name, col]) => trs.find((tr) => tr.children[0].textContent === name)?.children[col as number].textContent ?? '0',
      [row, column] as const,
    );

  /** A row of an upstream cost table, as numbers: commands, requests, bytes sent, bytes received, errors. */
  const costRow = (table: 'clients' | 'commands', name: string) =>
    page.$$eval(
      `#proxy-cost-${table} tbody tr`,
      (trs, n) => {
        const tr = trs.find((r) => r.children[0].textContent === n);
        return tr && [...tr.children].slice(1).map((td) => Number(td.textContent));
      },
      name,
    );

  beforeAll(async () => {
    [p, browser] = await Promise.all([startTestPlatform(), launch()]);
    proxy = await startTestProxy(p, { slowlogLogSlowerThanUs: 0 });
    p.attachProxy({ host: proxy.host, port: proxy.port });
    client = new Redis({ host: proxy.host, port: proxy.port, connectionName: 'worker-1', lazyConnect: true });
    await client.connect();
    await client.set('a', '1');
    page = await openConsole(browser, p, p.readonlyToken, errors);
  });
  afterAll(async () => {
    client?.disconnect();
    await browser?.close();
  });

  it('lists the proxy client by name, not the console own connection', async () => {
    await page.click('#nav a[data-page=proxy]');
    await page.waitForSelector('#proxy-clients table');
    const names = await page.$$eval('#proxy-clients tbody tr td:nth-child(3)', (tds) => tds.map((t) => t.textContent));
    expect(names).toEqual(['worker-1']);
    expect(await page.textContent('#proxy-summary')).toContain(`${proxy.host}:${proxy.port}`);
  });

  it('shows the calls of a command rise as the client sends more, without a reload', async () => {
    await page.waitForSelector('#proxy-commands table');
    const before = Number(await cell('set', 1));
    const upstreamBefore = Number(await page.$eval('#proxy-summary tbody td:nth-child(6)', (td) => td.textContent));
    for (let i = 0; i < 5; i++) await client.set(`k${i}`, String(i));
    await expect.poll(async () => Number(await cell('set', 1)), { timeout: 8000 }).toBe(before + 5);
    expect(Number(await page.$eval('#proxy-summary tbody td:nth-child(6)', (td) => td.textContent))).toBeGreaterThan(upstreamBefore);
    await page.waitForSelector('#proxy-chart svg polyline');
  });

  it("shows a command's latency percentiles after traffic, p50 ≤ p99 ≤ p99.9", async () => {
    await expect.poll(async () => Number(await cell('set', 4)), { timeout: 8000 }).toBeGreaterThan(0);
    const [p50, p99, p999] = await Promise.all([4, 5, 6].map((c) => cell('set', c)));
    for (const v of [p50, p99, p999]) expect(v).toMatch(/^\d+\.\d{3}$/);
    expect(Number(p99)).toBeGreaterThanOrEqual(Number(p50));
    expect(Number(p999)).toBeGreaterThanOrEqual(Number(p99));
    const headers = await page.$$eval('#proxy-commands thead th', (ths) => ths.map((th) => th.textContent));
    expect(headers.slice(4, 7)).toEqual(['p50 µs', 'p99 µs', 'p99.9 µs']);
  });

  it('shows the slowlog', async () => {
    await page.waitForFunction(() => document.querySelector('#proxy-slowlog')?.textContent?.includes('set k4 4'));
  });

  it("charts a command's latency over the last minutes: p50, p99 and each interval's mean", async () => {
    await page.waitForSelector('#latency-command option[value=set]', { state: 'attached' });
    await page.selectOption('#latency-command', 'set');
    for (let i = 0; i < 5; i++) await client.set(`lat${i}`, String(i));
    const points = (series: string) =>
      page.$eval(`#proxy-latency polyline[data-series="${series}"]`, (el) => el.getAttribute('points') ?? '');
    await expect.poll(async () => (await points('p99')).split(' ').length, { timeout: 8000 }).toBeGreaterThan(1);
    await expect.poll(async () => (await points('mean')).length, { timeout: 8000 }).toBeGreaterThan(0);
    expect(await page.getAttribute('#proxy-latency svg', 'aria-label')).toBe('latency of set');
    const legend = await page.textContent('#proxy-latency .legend [data-series=p50]');
    expect(legend).toMatch(/^p50: \d+\.\d µs/);
    expect(Number(legend!.slice(5, -4))).toBeCloseTo(Number(await cell('set', 4)), 0);
  });

  it("shows a named client's upstream cost rise after it sends commands, and only its own", async () => {
    const other = new Redis({ host: proxy.host, port: proxy.port, connectionName: 'billing', lazyConnect: true });
    await other.connect();
    await other.set('b', '2');
    await expect.poll(() => costRow('clients', 'billing'), { timeout: 8000 }).toBeTruthy();
    const before = (await costRow('clients', 'worker-1'))!;
    const billing = (await costRow('clients', 'billing'))!;
    const getBefore = (await costRow('commands', 'get')) || [0, 0, 0, 0, 0];
    expect(before[0]).toBeGreaterThanOrEqual(6); // the SETs of the tests before
    expect(billing[0]).toBeGreaterThanOrEqual(1); // its SET (ioredis' ready check INFO asks upstream for the keyspace too)

    await client.get('a');
    await client.get('k0');
    await client.get('k1');
    await client.mset('m1', 'x', 'm2', 'y');
    await expect(client.lpush('a', 'x')).rejects.toThrow('WRONGTYPE'); // an error reply from upstream

    await expect.poll(async () => (await costRow('clients', 'worker-1'))?.[0], { timeout: 8000 }).toBe(before[0] + 5);
    const after = (await costRow('clients', 'worker-1'))!;
    expect(after[1]).toBeGreaterThan(before[1]); // requests
    expect(after[2]).toBeGreaterThan(before[2] + 40); // bytes sent: at least the five commands' RESP
    expect(after[3]).toBeGreaterThan(before[3]); // bytes received
    expect(after[4]).toBe(before[4] + 1); // the WRONGTYPE reply
    expect(await costRow('clients', 'billing')).toEqual(billing);
    expect((await costRow('commands', 'get'))![0]).toBe(getBefore[0] + 3);
    expect(await costRow('clients', 'respgate-console')).toBeUndefined();
    other.disconnect();
  });

  it('counts and lists the subscribed and the blocked clients', async () => {
    const sub = new Redis({ host: proxy.host, port: proxy.port, connectionName: 'listener', lazyConnect: true });
    const blocker = new Redis({ host: proxy.host, port: proxy.port, connectionName: 'waiter', lazyConnect: true });
    await Promise.all([sub.connect(), blocker.connect()]);
    await sub.subscribe('news');
    const popped = blocker.blpop('empty-list', 0);
    const summary = () => page.$$eval('#proxy-summary tbody td', (tds) => [tds[2].textContent, tds[3].textContent]);
    await expect.poll(summary, { timeout: 8000 }).toEqual(['1', '1']);
    const rows = await page.$$eval('#proxy-clients tbody tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.children[2].textContent, [tr.children[6].textContent, tr.children[7].textContent]])),
    );
    expect(rows.listener).toEqual(['P', '1']); // flags, sub
    expect(rows.waiter[0]).toContain('b');
    await client.rpush('empty-list', 'x');
    expect(await popped).toEqual(['empty-list', 'x']);
    await expect.poll(summary, { timeout: 8000 }).toEqual(['1', '0']);
    sub.disconnect();
    blocker.disconnect();
  });

  it('lets the Standard token kill a client and reset the slowlog; the Read Only token sees no action and is refused one', async () => {
    expect(await page.locator('#proxy-clients button.kill').count()).toBe(0);
    expect(await page.locator('#slowlog-reset').count()).toBe(0);
    const refused = await fetch(`${p.url}/console/api/proxy/action`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.readonlyToken}` },
      body: JSON.stringify({ action: 'slowlog-reset' }),
    });
    expect(refused.status).toBe(403);
    const bad = await fetch(`${p.url}/console/api/proxy/action`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.token}` },
      body: JSON.stringify({ action: 'client-kill' }),
    });
    expect([bad.status, ((await bad.json()) as { error: string }).error]).toEqual([
      400,
      'client-kill needs the client id: {"action": "client-kill", "id": "12"}',
    ]);

    const victim = new Redis({
      host: proxy.host,
      port: proxy.port,
      connectionName: 'victim',
      lazyConnect: true,
      retryStrategy: () => null,
    });
    await victim.connect();
    const closed = new Promise((resolve) => victim.once('end', resolve));
    const admin = await openConsole(browser, p, p.token, errors);
    await admin.click('#nav a[data-page=proxy]');
    await admin.waitForSelector('#proxy-slowlog table');
    await admin.click('#slowlog-reset');
    await admin.waitForFunction(() => !document.querySelector('#proxy-slowlog')?.textContent?.includes('set k4 4'));
    const row = admin.locator('#proxy-clients tbody tr', { hasText: 'victim' });
    await row.locator('button.kill').click();
    await closed;
    await admin.waitForFunction(() => ![...document.querySelectorAll('#proxy-clients td')].some((td) => td.textContent === 'victim'));
    expect(await client.ping()).toBe('PONG'); // the other client is untouched
    await admin.close();
  });

  it('answers 401 without a token, and tells a platform without a proxy', async () => {
    expect((await fetch(`${p.url}/console/api/proxy`)).status).toBe(401);
    const alone = await startTestPlatform();
    const res = await fetch(`${alone.url}/console/api/proxy`, { headers: { Authorization: `Bearer ${alone.token}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error).toContain('dev stack');
    await alone.stop();
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
