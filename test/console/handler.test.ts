// The console's HTTP side without a browser: its files come with a strict Content-Security-Policy,
// nothing outside its folder is served, and /console/api/session tells a token's role or answers 401.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform } from '../helpers/platform.js';
import type { RunningPlatform } from '../../src/platform/platform.js';

/** GET with the path sent as written (fetch would resolve `..` and `%2e%2e` before sending). */
function rawGet(p: RunningPlatform, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: p.port, path }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('console: HTTP', () => {
  let p: RunningPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  it('serves the page with a CSP that allows no inline script, and redirects /console to /console/', async () => {
    const page = await fetch(`${p.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self';/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('js/app.js');
    const js = await fetch(`${p.url}/console/js/dom.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const bare = await fetch(`${p.url}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/console/']);
  });

  it('serves nothing outside its folder, and only GET', async () => {
    for (const path of [
      '/console/%2e%2e/handler.ts',
      '/console/..%2f..%2fplatform.ts',
      '/console/js/nope.js',
      '/console/%E0%A4%A',
      '/console/x.ts',
    ])
      expect(await rawGet(p, path), path).toBe(404);
    const post = await fetch(`${p.url}/console/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('tells the role of a token, and answers 401 without one or with a wrong one', async () => {
    const ask = (token?: string) => fetch(`${p.url}/console/api/session`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    expect((await ask()).status).toBe(401);
    expect((await ask('wrong')).status).toBe(401);
    expect(await (await ask(p.token)).json()).toEqual({
      role: 'standard',
      user: 'default',
      vectorIndexes: ['dense', 'dense-data', 'sparse', 'hybrid'],
      proxy: false,
      actions: [],
    });
    expect(await (await ask(p.readonlyToken)).json()).toMatchObject({ role: 'readonly', user: 'default_ro' });
  });

  it("lists the queue's pending messages and its depth behind the queue tokens, read only", async () => {
    const ask = (path: string, token?: string, method = 'GET') =>
      fetch(`${p.url}/console/api/queue/${path}`, { method, headers: token ? { Authorization: `Bearer ${token}` } : {} });
    for (const path of ['depth', 'messages', 'messages/msg_x'])
      for (const token of [undefined, 'wrong']) expect((await ask(path, token)).status, `${path} ${token}`).toBe(401);
    const published = await fetch(`${p.url}/queue/v2/publish/http://127.0.0.1:9/later`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.token}`, 'Upstash-Delay': '1h', 'Upstash-Forward-X-Trace': 'abc' },
      body: 'later',
    });
    const { messageId } = (await published.json()) as { messageId: string };
    for (const token of [p.token, p.readonlyToken]) {
      expect(await (await ask('depth', token)).json()).toMatchObject({ inFlight: 0, waiting: 0, delayed: 1, dlq: 0 });
      const { messages } = (await (await ask('messages', token)).json()) as { messages: Record<string, unknown>[] };
      expect(messages).toEqual([expect.objectContaining({ messageId, state: 'scheduled', attempts: 0, maxRetries: 3 })]);
      const one = (await (await ask(`messages/${messageId}`, token)).json()) as Record<string, any>;
      expect(one).toMatchObject({ pending: true, state: 'CREATED', attempts: [], callbacks: [] });
      expect(one.message.header).toMatchObject({ 'X-Trace': ['abc'] });
    }
    expect((await ask('messages/msg_unknown', p.token)).status).toBe(404);
    expect((await ask('nothing', p.token)).status).toBe(404);
    expect((await ask('messages', p.token, 'POST')).status).toBe(405);
    expect((await ask('messages', p.token, 'DELETE')).status).toBe(405);
  });

  it('takes the queue token for the queue calls when --queue-token differs from the platform token', async () => {
    const q = await startTestPlatform({ queueToken: 'separate-queue-token' });
    try {
      const ask = (token: string) => fetch(`${q.url}/console/api/queue/depth`, { headers: { Authorization: `Bearer ${token}` } });
      expect((await ask(q.token)).status).toBe(401);
      expect((await ask('separate-queue-token')).status).toBe(200);
      expect((await ask(q.readonlyToken)).status).toBe(200);
    } finally {
      await q.stop();
    }
  });

  it("refuses the Proxy page's actions to any token but the Standard one, and without a proxy answers 404", async () => {
    const act = (token: string | undefined, body: string) =>
      fetch(`${p.url}/console/api/proxy/action`, {
        method: 'POST',
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        body,
      });
    const kill = JSON.stringify({ action: 'client-kill', id: '1' });
    expect((await act(undefined, kill)).status).toBe(401);
    expect((await act('wrong', kill)).status).toBe(401);
    expect((await act(p.readonlyToken, kill)).status).toBe(403);
    expect((await act(p.token, kill)).status).toBe(404);

    expect((await fetch(`${p.url}/console/api/proxy/action`, { headers: { Authorization: `Bearer ${p.token}` } })).status).toBe(405);
  });
});
