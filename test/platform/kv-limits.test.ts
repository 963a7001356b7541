// Max request size and daily request limit, with the real service's error texts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

describe('max request size', () => {
  let p: RunningPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ maxRequestSize: 1024 });
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('refuses a larger body with the limit and the actual size, and executes nothing', async () => {
    const body = 'x'.repeat(5000);
    const r = await kv(p, '/set/big', { method: 'POST', body });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^ERR max request size exceeded\. Limit: 1024 bytes, Actual: 50\d\d bytes\./);
    expect((await kv(p, '/exists/big')).json).toEqual({ result: 0 });
  });

  it('discards a whole transaction that is too large', async () => {
    const r = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['SET', 'a', '1'],
        ['SET', 'b', 'y'.repeat(2000)],
      ]),
    });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^ERR max request size exceeded/);
    expect((await kv(p, '/exists/a')).json).toEqual({ result: 0 });
  });

  it('accepts requests within the limit', async () => {
    expect((await kv(p, '/set/small', { method: 'POST', body: 'x'.repeat(500) })).json).toEqual({ result: 'OK' });
  });
});

describe('daily request limit', () => {
  let p: RunningPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ dailyRequestLimit: 5 });
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('counts every command, then refuses with the real text', async () => {
    expect((await command(p, ['PING'])).status).toBe(200);
    expect((await kv(p, '/pipeline', { body: JSON.stringify([['PING'], ['PING'], ['PING']]) })).status).toBe(200);
    expect((await command(p, ['PING'])).status).toBe(200);
    const over = await command(p, ['PING']);
    expect(over.status).toBe(400);
    expect(over.json).toEqual({ error: 'ERR max daily request limit exceeded' });
    const tx = await kv(p, '/multi-exec', { body: JSON.stringify([['SET', 'x', '1']]) });
    expect(tx.json).toEqual({ error: 'ERR max daily request limit exceeded' });
  });
});
