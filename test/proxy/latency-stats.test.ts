// INFO latencystats (Redis 7's latency-tracking): after the same commands on a direct redis-server and
// through the proxy, each lists a `latency_percentiles_usec_<cmd>` line for the same commands, with
// the same field names and value format (p50, p99, p99.9, µs with 3 decimals); values differ (a
// forwarded command's time includes its HTTP call). CONFIG RESETSTAT empties it, as in Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

const SEQUENCE: string[][] = [
  ['CONFIG', 'RESETSTAT'],
  ['SET', 'k', 'v'],
  ['GET', 'k'],
  ['GET', 'k'],
  ['LPUSH', 'k', 'x'], // WRONGTYPE: it ran, so it has a line
  ['GET'], // rejected: adds no call
  ['CLIENT', 'GETNAME'],
  ['PING'],
];

function bulkText(reply: Buffer): string {
  const text = reply.toString('latin1');
  return text.slice(text.indexOf('\r\n') + 2, -2);
}

/** name → the line's value with each number replaced by N (the shape). */
async function latencyShape(port: number): Promise<{ section: string; lines: Record<string, string> }> {
  const client = await RawClient.connect(port);
  try {
    for (const command of SEQUENCE) await client.call(command);
    const [info] = await client.call(['INFO', 'latencystats']);
    const text = bulkText(info);
    const lines: Record<string, string> = {};
    for (const line of text.split('\r\n').slice(1)) {
      if (line === '') continue;
      const [name, value] = line.split(':');
      lines[name] = value.replace(/=\d+\.\d{3}(?=,|$)/g, '=N');
    }
    return { section: text.split('\r\n')[0], lines };
  } finally {
    client.close();
  }
}

describe('INFO latencystats', () => {
  it('lists each command that ran, with the lines of a direct redis-server', async () => {
    const oracle = await latencyShape(stack.oracle.endpoint.port);
    const proxy = await latencyShape(stack.proxy.port);
    expect(proxy.section).toBe('# Latencystats');
    expect(proxy).toEqual(oracle);
    expect(Object.keys(proxy.lines).sort()).toEqual(
      [
        'latency_percentiles_usec_client|getname',
        'latency_percentiles_usec_config|resetstat',
        'latency_percentiles_usec_get',
        'latency_percentiles_usec_lpush',
        'latency_percentiles_usec_ping',
        'latency_percentiles_usec_set',
      ].sort(),
    );
    expect(proxy.lines.latency_percentiles_usec_get).toBe('p50=N,p99=N,p99.9=N');
  });

  it('shows a forwarded command its upstream time, p50 ≤ p99 ≤ p99.9', async () => {
    const client = await RawClient.connect(stack.proxy.port);
    try {
      await client.call(['CONFIG', 'RESETSTAT']);
      for (let i = 0; i < 20; i++) await client.call(['SET', `k${i}`, 'v']);
      const [info] = await client.call(['INFO', 'latencystats']);
      const m = /latency_percentiles_usec_set:p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})\r\n/.exec(bulkText(info));
      expect(m).not.toBeNull();
      const [p50, p99, p999] = m!.slice(1).map(Number);
      expect(p50).toBeGreaterThan(0);
      expect(p99).toBeGreaterThanOrEqual(p50);
      expect(p999).toBeGreaterThanOrEqual(p99);
    } finally {
      client.close();
    }
  });

  it('is emptied by CONFIG RESETSTAT, then lists the reset itself, as on redis-server', async () => {
    for (const port of [stack.oracle.endpoint.port, stack.proxy.port]) {
      const client = await RawClient.connect(port);
      try {
        await client.call(['SET', 'a', 'b'], ['GET', 'a']);
        const [, info] = await client.call(['CONFIG', 'RESETSTAT'], ['INFO', 'latencystats']);
        expect(bulkText(info), `port ${port}`).toMatch(
          /^# Latencystats\r\nlatency_percentiles_usec_config\|resetstat:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n$/,
        );
      } finally {
        client.close();
      }
    }
  });

  it('is in INFO all but not in INFO default', async () => {
    const client = await RawClient.connect(stack.proxy.port);
    try {
      const [all, deflt] = await client.call(['INFO', 'all'], ['INFO']);
      expect(bulkText(all)).toContain('# Latencystats\r\nlatency_percentiles_usec_');
      expect(bulkText(deflt)).not.toContain('Latencystats');
    } finally {
      client.close();
    }
  });
});
