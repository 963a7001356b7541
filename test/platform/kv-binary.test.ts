// Binary safety: every byte value round-trips through the path form, base64 and resp2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const pct = (b: Buffer) => [...b].map((x) => '%' + x.toString(16).padStart(2, '0')).join('');

describe('all 256 byte values', () => {
  it('round-trip as key and value through percent-encoded path segments and base64', async () => {
    expect((await kv(p, `/set/${pct(allBytes)}/${pct(allBytes)}`)).json).toEqual({ result: 'OK' });
    const r = await kv(p, `/get/${pct(allBytes)}`, { headers: { 'Upstash-Encoding': 'base64' } });
    expect(Buffer.from(r.json.result, 'base64')).toEqual(allBytes);
    const keys = await kv(p, '/keys/*', { headers: { 'Upstash-Encoding': 'base64' } });
    expect(keys.json.result.map((k: string) => Buffer.from(k, 'base64'))).toContainEqual(allBytes);
  });

  it('round-trip as a raw body and through resp2', async () => {
    expect((await kv(p, '/set/bin:body', { method: 'POST', body: allBytes })).json).toEqual({ result: 'OK' });
    const r = await kv(p, '/get/bin:body', { headers: { 'Upstash-Response-Format': 'resp2' } });
    expect(r.bytes).toEqual(Buffer.concat([Buffer.from('$256\r\n'), allBytes, Buffer.from('\r\n')]));
    const pipe = await kv(p, '/pipeline', {
      headers: { 'Upstash-Response-Format': 'resp2' },
      body: JSON.stringify([
        ['GET', 'bin:body'],
        ['STRLEN', 'bin:body'],
      ]),
    });
    expect(pipe.bytes).toEqual(Buffer.concat([Buffer.from('$256\r\n'), allBytes, Buffer.from('\r\n:256\r\n')]));
  });

  it('survive in hashes and lists read back with base64', async () => {
    await kv(p, `/hset/bin:h/${pct(allBytes)}/${pct(allBytes.subarray(128))}`);
    const r = await kv(p, '/hgetall/bin:h', { headers: { 'Upstash-Encoding': 'base64' } });
    expect(r.json.result.map((x: string) => Buffer.from(x, 'base64'))).toEqual([allBytes, allBytes.subarray(128)]);
  });
});
