// `respgate proxy`'s own console (issue 26): the Proxy page alone, at /console/ on its --metrics-port,
// behind the proxy's password. A real `respgate proxy` process in front of a test platform; the page,
// logged in with --requirepass, shows a client's upstream cost rise after it sends commands; without
// the password, or with a wrong one, nothing is shown. In pass-through mode the login is a REST token
// the upstream accepts; a proxy that asks no password keeps its console shut.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { Redis } from 'ioredis';
import { startTestPlatform } from '../helpers/platform.js';
import { startRespgate, stopRespgate } from '../helpers/respgate-cli.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { hasChromium, launch } from './browser.js';

const PASSWORD = 'console-s3cret';

/** Starts `respgate proxy` with an operations port; its Redis port and console URL, from the banner. */
async function startProxyProcess(args: string[]): Promise<{ child: ChildProcess; port: number; console: string }> {
  const { child, output } = await startRespgate(
    ['proxy', '--port', '0', '--metrics-port', '0', ...args],
    /console: http:\S+\/console\/.*\n/,
  );
  const port = Number(/proxy ready on redis:\/\/[^:]+:(\d+)/.exec(output)![1]);
  const url = /console: (http:\S+\/console\/)/.exec(output)![1];
  return { child, port, console: url };
}

async function logIn(page: Page, url: string, password: string): Promise<void> {
  await page.goto(url);
  await page.fill('#token', password);
  await page.click('#login button[type=submit]');
}

describe.skipIf(!hasChromium)('console: respgate proxy serves its own Proxy page', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let proxy: Awaited<ReturnType<typeof startProxyProcess>>;
  const errors: string[] = [];

  beforeAll(async () => {
    [p, browser] = await Promise.all([startTestPlatform(), launch()]);
    proxy = await startProxyProcess(['--upstream-url', p.url, '--upstream-token', p.token, '--requirepass', PASSWORD]);
  });
  afterAll(async () => {
    await browser?.close();
    if (proxy) await stopRespgate(proxy.child);
  });

  it('asks for the proxy password and refuses a wrong one', async () => {
    const page = await browser.newPage();
    await page.goto(proxy.console);
    expect(await page.textContent('#login')).toContain("the proxy's password");
    await logIn(page, proxy.console, 'wrong');
    await page.waitForSelector('#login .error');
    expect(await page.textContent('#login .error')).toContain('not accepted by the proxy');
    expect(await page.isHidden('#nav')).toBe(true);
    await page.close();
  });

  it('answers 401 to the API without the password or with a wrong one, and serves no platform API', async () => {
    const tries: Record<string, string>[] = [{}, { Authorization: 'Bearer wrong' }, { Authorization: `Bearer ${p.token}` }];
    for (const headers of tries) {
      for (const api of ['api/session', 'api/proxy']) {
        const res = await fetch(`${proxy.console}${api}`, { headers });
        expect(res.status, `${api} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      }
    }
    const base = new URL(proxy.console).origin;
    expect((await fetch(`${base}/set/a/b`, { method: 'POST', headers: { Authorization: `Bearer ${PASSWORD}` } })).status).toBe(404);
    expect((await fetch(`${proxy.console}..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`)).status).toBe(200); // the operations port still serves /metrics
  });

  it("logged in with the password: the Proxy page alone, and a client's cost rises after it sends commands", async () => {
    const client = new Redis({ port: proxy.port, password: PASSWORD, connectionName: 'worker-7', lazyConnect: true });
    await client.connect();
    await client.set('a', '1');
    const page = await browser.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    await logIn(page, proxy.console, PASSWORD);
    await page.waitForSelector('#nav:not([hidden])');
    const visible = await page.$$eval('#nav a', (as) => (as as HTMLElement[]).filter((a) => !a.hidden).map((a) => a.dataset.page));
    expect(visible).toEqual(['proxy']);
    await page.waitForSelector('#proxy-clients table');
    const names = await page.$$eval('#proxy-clients tbody tr td:nth-child(3)', (tds) => tds.map((t) => t.textContent));
    expect(names).toEqual(['worker-7']); // not the console's own connection

    const cost = () =>
      page.$$eval('#proxy-cost-clients tbody tr', (trs) => {
        const tr = trs.find((r) => r.children[0].textContent === 'worker-7');
        return tr ? Number(tr.children[1].textContent) : 0;
      });
    await expect.poll(cost, { timeout: 8000 }).toBeGreaterThanOrEqual(1);
    const before = await cost();
    for (let i = 0; i < 4; i++) await client.set(`k${i}`, String(i));
    await client.get('k0');
    await expect.poll(cost, { timeout: 8000 }).toBe(before + 5);
    await page.waitForSelector('#proxy-chart svg polyline');
    client.disconnect();
    await page.close();
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });

  it('in pass-through mode the login is a REST token the upstream accepts', async () => {
    const through = await startProxyProcess(['--upstream-url', p.url]);
    try {
      const ask = (token: string, api = 'api/proxy') =>
        fetch(`${through.console}${api}`, { headers: { Authorization: `Bearer ${token}` } });
      expect((await ask('not-a-token')).status).toBe(401);
      const res = await ask(p.token);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { address: string }).address).toContain(String(through.port));
      // Who may act is the upstream's word for the token's user: the Standard token all, the Read Only one nothing.
      expect(await (await ask(p.token, 'api/session')).json()).toMatchObject({
        role: 'proxy',
        actions: ['client-kill', 'slowlog-reset', 'resetstat'],
      });
      expect(await (await ask(p.readonlyToken, 'api/session')).json()).toMatchObject({ role: 'readonly', actions: [] });
      const refused = await fetch(`${through.console}api/proxy/action`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.readonlyToken}` },
        body: JSON.stringify({ action: 'resetstat' }),
      });
      expect(refused.status).toBe(403);
    } finally {
      await stopRespgate(through.child);
    }
  });

  it('a proxy that asks no password keeps its console shut (403), whatever the token', async () => {
    const open = await startProxyProcess(['--upstream-url', p.url, '--upstream-token', p.token]);
    try {
      for (const token of ['', p.token, 'anything']) {
        const res = await fetch(`${open.console}api/proxy`, { headers: { Authorization: `Bearer ${token}` } });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: string }).error).toContain('--requirepass');
      }
    } finally {
      await stopRespgate(open.child);
    }
  });

  describe('with --acl-users: an ACL user logs in; a read-only one sees but cannot act', () => {
    let acl: Awaited<ReturnType<typeof startProxyProcess>>;
    const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

    beforeAll(async () => {
      for (const args of [
        ['ACL', 'SETUSER', 'viewer', 'on', '>viewer-pw', '~*', '&*', '+@read', '+ping'],
        ['ACL', 'SETUSER', 'ops', 'on', '>ops-pw', '~*', '&*', '+@all'],
      ]) {
        const res = await fetch(p.url, { method: 'POST', headers: { Authorization: `Bearer ${p.token}` }, body: JSON.stringify(args) });
        expect(await res.json()).toEqual({ result: 'OK' });
      }
      acl = await startProxyProcess(['--upstream-url', p.url, '--upstream-token', p.token, '--acl-users']);
    });
    afterAll(async () => {
      if (acl) await stopRespgate(acl.child);
    });

    it('asks for a user and its password, and refuses a wrong password or an unknown user', async () => {
      expect(await (await fetch(`${acl.console}api/about`)).json()).toEqual({ kind: 'proxy', pages: ['proxy'], users: true });
      for (const headers of [
        basic('viewer', 'wrong'),
        basic('nobody', 'viewer-pw'),
        { Authorization: 'Bearer viewer-pw' },
        { Authorization: `Basic ${Buffer.from('viewer').toString('base64')}` }, // no colon
        basic('', 'viewer-pw'),
        basic('viewer', ''),
      ])
        expect((await fetch(`${acl.console}api/session`, { headers })).status, JSON.stringify(headers)).toBe(401);
      const page = await browser.newPage();
      await page.goto(acl.console);
      expect(await page.textContent('#login')).toContain('ACL user');
      await page.fill('#user', 'viewer');
      await page.fill('#token', 'wrong');
      await page.click('#login button[type=submit]');
      await page.waitForSelector('#login .error');
      expect(await page.textContent('#login .error')).toContain('not accepted by the proxy');
      await page.close();
    });

    it('a read-only user sees the clients and the slowlog but has no action, and is refused one', async () => {
      const client = new Redis({
        port: acl.port,
        username: 'viewer',
        password: 'viewer-pw',
        connectionName: 'reader-1',
        lazyConnect: true,
      });
      await client.connect();
      await client.get('a');
      const page = await browser.newPage();
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(acl.console);
      await page.fill('#user', 'viewer');
      await page.fill('#token', 'viewer-pw');
      await page.click('#login button[type=submit]');
      await page.waitForSelector('#proxy-clients table');
      expect(await page.textContent('#who')).toBe('read only viewer');
      expect(await page.$$eval('#proxy-clients tbody tr td:nth-child(3)', (tds) => tds.map((t) => t.textContent))).toEqual(['reader-1']);
      await page.waitForSelector('#proxy-slowlog');
      expect(await page.locator('#proxy-clients button.kill, #slowlog-reset, #resetstat').count()).toBe(0);
      const refused = await fetch(`${acl.console}api/proxy/action`, {
        method: 'POST',
        headers: basic('viewer', 'viewer-pw'),
        body: JSON.stringify({ action: 'client-kill', id: '1' }),
      });
      expect(refused.status).toBe(403);
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
      await page.close();
    });

    it('a user the upstream lets run CLIENT KILL kills a client from the page', async () => {
      const victim = new Redis({
        port: acl.port,
        username: 'viewer',
        password: 'viewer-pw',
        connectionName: 'victim',
        lazyConnect: true,
        retryStrategy: () => null,
      });
      await victim.connect();
      const closed = new Promise((resolve) => victim.once('end', resolve));
      const page = await browser.newPage();
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('dialog', (d) => void d.accept());
      await page.goto(acl.console);
      await page.fill('#user', 'ops');
      await page.fill('#token', 'ops-pw');
      await page.click('#login button[type=submit]');
      await page.waitForSelector('#resetstat');
      expect(await page.textContent('#who')).toBe('proxy ops');
      await page.locator('#proxy-clients tbody tr', { hasText: 'victim' }).locator('button.kill').click();
      await closed;
      await page.waitForFunction(() => ![...document.querySelectorAll('#proxy-clients td')].some((td) => td.textContent === 'victim'));
      await page.close();
    });

    it('threw no error in the pages', () => {
      expect(errors).toEqual([]);
    });
  });
});
