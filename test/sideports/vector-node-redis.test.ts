// node-redis' own vector-set API (written for Redis 8) against the vector side port, in RESP2 and RESP3:
// its argument encoding and reply transforms work unchanged. Plus VRANGE (Redis 8.4).
// Whole programs for Redis 8 (node-redis and redis-py) against the dev stack: test/clients/vector-sets.test.ts.
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { rawText, vectorPort } from './harness.js';

let platform: RunningPlatform;
let port: RunningSideport;

beforeAll(async () => {
  platform = await startTestPlatform({ vectorIndexes: [{ name: 'small', type: 'DENSE', dimension: 2, similarityFunction: 'COSINE' }] });
  port = await vectorPort({ url: `${platform.url}/vector/small`, token: platform.token });
});
afterAll(async () => {
  await port?.stop();
  await platform?.stop();
});

describe.each([2, 3] as const)('node-redis vector-set API, RESP%i', (RESP) => {
  it('vAdd, vCard, vDim, vEmb, vEmbRaw, vSetAttr/vGetAttr, vInfo, vSim, vSimWithScores, vRandMember, vRange, vRem', async () => {
    const client = createClient({ socket: { port: port.port }, RESP });
    await client.connect();
    const key = `points${RESP}`;
    try {
      expect(await client.vAdd(key, [1, 1], 'pt:A')).toBe(true);
      expect(await client.vAdd(key, [-1, -1], 'pt:B')).toBe(true);
      expect(await client.vAdd(key, [-1, 1], 'pt:C', { SETATTR: { name: 'C' } })).toBe(true);
      expect(await client.vAdd(key, [1, -1], 'pt:D', { CAS: true, QUANT: 'Q8' as never, EF: 100, M: 16 })).toBe(true);
      await expect(client.vAdd(key, [1, -1], 'pt:X', { QUANT: 'NOQUANT' as never })).rejects.toThrow(/quantization mismatch/);
      expect(await client.vAdd(key, [1, 0], 'pt:E')).toBe(true);
      expect(await client.vAdd(key, [1, 0.5], 'pt:E')).toBe(false);
      expect(await client.vCard(key)).toBe(5);
      expect(await client.vDim(key)).toBe(2);
      // int8 by default, as Redis 8 (values recorded from Redis 8.8.0: VADD k VALUES 2 1 0.5 e, VEMB k e).
      expect(await client.vEmb(key, 'pt:E')).toEqual([1, 0.4960629642009735]);
      const raw = await client.vEmbRaw(key, 'pt:A');
      expect(String(raw.quantization)).toBe('int8');
      expect(raw.l2Norm).toBeCloseTo(Math.SQRT2, 5);
      expect(raw.quantizationRange).toBeCloseTo(Math.SQRT1_2, 5);
      expect(await client.vGetAttr(key, 'pt:C')).toEqual({ name: 'C' });
      expect(await client.vSetAttr(key, 'pt:A', { size: 'big' })).toBe(true);
      expect(await client.vGetAttr(key, 'pt:A')).toEqual({ size: 'big' });
      expect(await client.vGetAttr(key, 'pt:B')).toBeNull();
      const info = (await client.vInfo(key)) as Record<string, unknown>;
      expect(Number(info['vector-dim'])).toBe(2);
      expect(Number(info.size)).toBe(5);
      expect(await client.vSim(key, [0.9, 0.1], { COUNT: 2 })).toEqual(['pt:E', 'pt:A']);
      expect(await client.vSim(key, 'pt:A', { FILTER: '.size == "big"' })).toEqual(['pt:A']);
      const scored = (await client.vSimWithScores(key, [1, 1], { COUNT: 1 })) as Record<string, number>;
      expect(Object.keys(scored)).toEqual(['pt:A']);
      expect(scored['pt:A']).toBeCloseTo(1, 6);
      expect(['pt:A', 'pt:B', 'pt:C', 'pt:D', 'pt:E']).toContain(await client.vRandMember(key));
      expect(await client.vRange(key, '[pt:B', '(pt:E')).toEqual(['pt:B', 'pt:C', 'pt:D']);
      expect(await client.vRange(key, '-', '+', 2)).toEqual(['pt:A', 'pt:B']);
      expect(await client.vRem(key, 'pt:A')).toBe(true);
      expect(await client.vRem(key, 'pt:A')).toBe(false);
      expect(await client.vCard(key)).toBe(4);
    } finally {
      await client.sendCommand(['DEL', key]);
      await client.quit();
    }
  });
});

describe('VRANGE', () => {
  it('refuses bad bounds and extra arguments like Redis', async () => {
    // Redis 8.8.0's texts (test/fixtures/vector-redis8/replies.json has them recorded).
    const [bound, end, swapped, extra, count] = await rawText(port.port, [
      ['VRANGE', 'k', 'a', '+'],
      ['VRANGE', 'k', '-', '['],
      ['VRANGE', 'k', '+', '-'],
      ['VRANGE', 'k', '-', '+', '1', '2'],
      ['VRANGE', 'k', '-', '+', 'x'],
    ]);
    expect(bound).toBe('-ERR invalid start range format\r\n');
    expect(end).toBe('-ERR invalid end range format\r\n');
    expect(swapped).toBe("-ERR '-' can only be used as first argument, '+' only as second\r\n");
    expect(extra).toBe("-ERR wrong number of arguments for 'VRANGE' command\r\n");
    expect(count).toBe('-ERR invalid COUNT value\r\n');
  });
});
