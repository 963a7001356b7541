// Browsers (CORS preflights and headers), the unauthenticated health route, base64 of nested statuses
// through the official SDK, and ACL tokens that stop at once when their user's password changes.
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const ORIGIN = 'https://app.example.com';

describe('browsers on another origin', () => {
  it('a preflight for a POST with Authorization and JSON is allowed, then the request carries CORS headers', async () => {
    // What a browser sends before `fetch(url, {method: 'POST', headers: {Authorization, 'Content-Type': 'application/json'}})`.
    const pre = await fetch(p.url + '/', {
      method: 'OPTIONS',
      headers: {
        Origin: ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,upstash-encoding',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('HEAD, GET, POST, PUT');
    expect(pre.headers.get('access-control-allow-headers')).toBe('authorization,content-type,upstash-encoding');
    expect(pre.headers.get('access-control-max-age')).toBe('86400');
    expect(await pre.text()).toBe('');

    const res = await fetch(p.url + '/', {
      method: 'POST',
      headers: { Origin: ORIGIN, Authorization: `Bearer ${p.readonlyToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(['PING']),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('upstash-sync-token');
    expect(await res.json()).toEqual({ result: 'PONG' });
  });

  it('errors carry CORS headers too, so the page can read them', async () => {
    const res = await fetch(p.url + '/get/x', { headers: { Origin: ORIGIN } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a preflight for another method, and an OPTIONS that is no preflight, are refused with 405', async () => {
    const del = await fetch(p.url + '/', { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'DELETE' } });
    expect(del.status).toBe(405);
    expect(del.headers.get('access-control-allow-methods')).toBeNull();
    expect((await del.json()).error).toBe('ERR HTTP method DELETE is not allowed: use HEAD, GET, POST or PUT');
    const plain = await fetch(p.url + '/', { method: 'OPTIONS' });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBe('HEAD, GET, POST, PUT');
  });

  it('requests without Origin get no CORS headers', async () => {
    const res = await kv(p, '/ping');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('health route', () => {
  it('answers without a token while the data store answers', async () => {
    const res = await kv(p, '/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
    const head = await fetch(p.url + '/health', { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('other methods on /health are still requests to the API', async () => {
    const res = await kv(p, '/health', { method: 'POST', body: '', token: null });
    expect(res.status).toBe(401);
  });
});

describe('Upstash-Encoding: base64 nested in arrays', () => {
  it('the SDK reads nested OK statuses and strings from EVAL intact', async () => {
    const redis = new Redis({ url: p.url, token: p.token, enableTelemetry: false });
    const r = await redis.eval(
      "return {redis.call('SET', KEYS[1], 'x'), redis.status_reply('OK'), 'abc', redis.status_reply('QUEUED')}",
      ['b64:k'],
      [],
    );
    expect(r).toEqual(['OK', 'OK', 'abc', 'QUEUED']);
  });

  it('REST: a top-level OK stays plain, a nested one is base64, a nested error stays text', async () => {
    const h = { 'Upstash-Encoding': 'base64' };
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    expect((await command(p, ['SET', 'b64:a', 'v'], { headers: h })).json).toEqual({ result: 'OK' });
    const pipe = await kv(p, '/pipeline', {
      headers: h,
      body: JSON.stringify([['MULTI'], ['SET', 'b64:a', 'w'], ['INCR', 'b64:a'], ['EXEC']]),
    });
    expect(pipe.json).toEqual([
      { result: 'OK' },
      { result: b64('QUEUED') },
      { result: b64('QUEUED') },
      { result: [b64('OK'), 'ERR value is not an integer or out of range'] },
    ]);
  });
});

describe('ACL RESTTOKEN tokens', () => {
  it('stop at once when the password changes or the user is deleted', async () => {
    await command(p, ['ACL', 'SETUSER', 'rotating', 'on', '>pw1', '~*', '+@all']);
    const token = (await command(p, ['ACL', 'RESTTOKEN', 'rotating', 'pw1'])).json.result;
    expect((await kv(p, '/ping', { token })).json).toEqual({ result: 'PONG' });
    expect((await command(p, ['ACL', 'SETUSER', 'rotating', 'resetpass', '>pw2'])).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/ping', { token })).status).toBe(401);
    const token2 = (await command(p, ['ACL', 'RESTTOKEN', 'rotating', 'pw2'])).json.result;
    expect((await kv(p, '/ping', { token: token2 })).json).toEqual({ result: 'PONG' });
    const tx = await kv(p, '/multi-exec', { body: JSON.stringify([['ACL', 'DELUSER', 'rotating']]) });
    expect(tx.json).toEqual([{ result: 1 }]);
    expect((await kv(p, '/ping', { token: token2 })).status).toBe(401);
  });
});
