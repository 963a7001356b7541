// Concurrent transactions stay atomic: each /multi-exec runs on a Redis connection of its own.
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

describe('concurrent transactions', () => {
  it('50 clients × 20 INCR-in-MULTI transactions give the exact total, each seeing consecutive values', async () => {
    const clients = 50;
    const rounds = 20;
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = 0; i < rounds; i++) {
          const r = await kv(p, '/multi-exec', {
            body: JSON.stringify([
              ['INCR', 'tx:counter'],
              ['INCR', 'tx:counter'],
              ['GET', 'tx:counter'],
            ]),
          });
          expect(r.status).toBe(200);
          const [a, b, c] = r.json.map((x: { result: unknown }) => x.result);
          // Atomic: nobody else's INCR lands between ours.
          expect(b).toBe(a + 1);
          expect(Number(c)).toBe(b);
          seen.push(b);
        }
      }),
    );
    expect((await kv(p, '/get/tx:counter')).json).toEqual({ result: String(clients * rounds * 2) });
    expect(new Set(seen).size).toBe(clients * rounds);
  });

  it('pipelines interleave with each other but keep their own order', async () => {
    await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        const key = `tx:list:${c}`;
        const body = JSON.stringify(Array.from({ length: 50 }, (_, i) => ['RPUSH', key, String(i)]));
        const r = await kv(p, '/pipeline', { body });
        expect(r.json.map((x: { result: number }) => x.result)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      }),
    );
    const r = await kv(p, '/lrange/tx:list:7/0/-1');
    expect(r.json.result).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
  });
});
