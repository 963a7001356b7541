// INFO commandstats and errorstats (Redis 7.0's fields): one known command sequence goes to a direct
// redis-server and through the proxy, each after CONFIG RESETSTAT; the cmdstat_* and errorstat_*
// lines must name the same commands and errors with the same counts (calls, rejected_calls,
// failed_calls, count), and total_error_replies must agree. usec values differ (a forwarded command's
// time includes its HTTP call): only their shape is compared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** Commands that run, fail (WRONGTYPE, NOGROUP, NOSCRIPT, inside EXEC) and are rejected (arity, unknown, inside MULTI). */
const SEQUENCE: string[][] = [
  ['CONFIG', 'RESETSTAT'],
  ['SET', 'k', 'v'],
  ['GET', 'k'],
  ['GET'], // wrong arity: rejected
  ['LPUSH', 'k', 'x'], // WRONGTYPE: failed
  ['NOSUCHCOMMAND', 'a'], // unknown: only errorstat ERR
  ['CLIENT', 'NOSUCHSUB'], // unknown subcommand
  ['MULTI'],
  ['SET', 'n', '1'],
  ['INCR', 'n'],
  ['LPUSH', 'n', 'a'], // fails inside EXEC: lpush failed, exec not
  ['EXEC'],
  ['MULTI'],
  ['GET'], // rejected inside MULTI: EXEC answers EXECABORT (exec failed)
  ['EXEC'],
  ['XADD', 's', '*', 'f', 'v'],
  ['XGROUP', 'CREATECONSUMER', 's', 'nogroup', 'c'], // NOGROUP
  ['EVALSHA', 'ffffffffffffffffffffffffffffffffffffffff', '0'], // NOSCRIPT
  ['WATCH', 'k'],
  ['UNWATCH'],
  ['PING'],
  ['ECHO', 'hi'],
  ['CLIENT', 'GETNAME'],
  ['EXEC'], // EXEC without MULTI: failed
  ['BLPOP', 'emptylist', '0.05'], // times out: one call
  ['INCR', 'k'], // not an integer
];

interface Stat {
  calls: number;
  rejected_calls: number;
  failed_calls: number;
  usec: number;
  usec_per_call: number;
}

function parseSection(text: string, prefix: string): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const line of text.split('\r\n')) {
    if (!line.startsWith(prefix)) continue;
    const [name, fields] = line.split(':');
    out.set(name, Object.fromEntries(fields.split(',').map((f) => f.split('=') as [string, string])));
  }
  return out;
}

function bulkText(reply: Buffer): string {
  const text = reply.toString('latin1');
  return text.slice(text.indexOf('\r\n') + 2, -2);
}

async function runSequence(port: number): Promise<{ commands: Map<string, Stat>; errors: Map<string, number>; total: number }> {
  const client = await RawClient.connect(port);
  try {
    for (const command of SEQUENCE) await client.call(command);
    const [commandstats, errorstats, stats] = await client.call(['INFO', 'commandstats'], ['INFO', 'errorstats'], ['INFO', 'stats']);
    const commands = new Map<string, Stat>();
    for (const [name, fields] of parseSection(bulkText(commandstats), 'cmdstat_')) {
      expect(Object.keys(fields), name).toEqual(['calls', 'usec', 'usec_per_call', 'rejected_calls', 'failed_calls']);
      expect(fields.usec_per_call, name).toMatch(/^\d+\.\d\d$/);
      commands.set(name, {
        calls: Number(fields.calls),
        rejected_calls: Number(fields.rejected_calls),
        failed_calls: Number(fields.failed_calls),
        usec: Number(fields.usec),
        usec_per_call: Number(fields.usec_per_call),
      });
    }
    const errors = new Map([...parseSection(bulkText(errorstats), 'errorstat_')].map(([k, v]) => [k, Number(v.count)]));
    const total = Number(/total_error_replies:(\d+)/.exec(bulkText(stats))?.[1]);
    return { commands, errors, total };
  } finally {
    client.close();
  }
}

const statOf = (fields: Record<string, string>): Stat => ({
  calls: Number(fields.calls),
  rejected_calls: Number(fields.rejected_calls),
  failed_calls: Number(fields.failed_calls),
  usec: Number(fields.usec),
  usec_per_call: Number(fields.usec_per_call),
});

/** The counts only (usec differs: the shape is checked in runSequence). */
function counts(commands: Map<string, Stat>): Record<string, string> {
  return Object.fromEntries(
    [...commands]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([n, s]) => [n, `calls=${s.calls},rejected=${s.rejected_calls},failed=${s.failed_calls}`]),
  );
}

describe('INFO commandstats and errorstats', () => {
  it('count the same calls, rejections, failures and errors as a direct redis-server', async () => {
    const oracle = await runSequence(stack.oracle.endpoint.port);
    const proxy = await runSequence(stack.proxy.port);
    expect(counts(proxy.commands)).toEqual(counts(oracle.commands));
    expect(Object.fromEntries(proxy.errors)).toEqual(Object.fromEntries(oracle.errors));
    expect(proxy.total).toBe(oracle.total);
    // The sequence did reach each kind of count.
    expect(proxy.commands.get('cmdstat_get')).toMatchObject({ calls: 1, rejected_calls: 2 });
    expect(proxy.commands.get('cmdstat_lpush')).toMatchObject({ calls: 2, failed_calls: 2 });
    expect(proxy.commands.get('cmdstat_exec')).toMatchObject({ calls: 3, failed_calls: 2 });
    expect(proxy.errors.get('errorstat_EXECABORT')).toBe(1);
    // A forwarded command's time is counted (its HTTP call).
    expect(proxy.commands.get('cmdstat_set')!.usec).toBeGreaterThan(0);
  });

  it('count every command of a pipeline, runs of one command counted together included, like a direct redis-server', async () => {
    // One write without an error reply (the proxy then counts each run of range replies at once), then one with one.
    const pipeline: string[][] = [
      ['CONFIG', 'RESETSTAT'],
      ['SET', 'pk', 'v'],
      ['SET', 'pl', 'x'],
    ];
    for (let i = 0; i < 16; i++) pipeline.push(['GET', 'pk']);
    for (let i = 0; i < 5; i++) pipeline.push(['SET', `pk${i}`, 'v']);
    pipeline.push(['GET', 'pl']);
    const withError = [
      ['LPUSH', 'pk', 'a'],
      ['GET', 'pk'],
      ['GET', 'pl'],
    ];
    const stats = async (port: number) => {
      const client = await RawClient.connect(port);
      try {
        await client.call(...pipeline);
        await client.call(...withError);
        const [commandstats, latency] = await client.call(['INFO', 'commandstats'], ['INFO', 'latencystats']);
        const counted = counts(new Map([...parseSection(bulkText(commandstats), 'cmdstat_')].map(([k, v]) => [k, statOf(v)])));
        const listed = [...parseSection(bulkText(latency), 'latency_percentiles_usec_').keys()].sort();
        return { counted, listed };
      } finally {
        client.close();
      }
    };
    const oracle = await stats(stack.oracle.endpoint.port);
    const proxy = await stats(stack.proxy.port);
    expect(proxy.counted).toEqual(oracle.counted);
    expect(proxy.counted.cmdstat_get).toBe('calls=19,rejected=0,failed=0');
    expect(proxy.counted.cmdstat_lpush).toBe('calls=1,rejected=0,failed=1');
    expect(proxy.listed).toEqual(oracle.listed);
  });

  it('are cleared by CONFIG RESETSTAT, which then counts itself', async () => {
    const client = await RawClient.connect(stack.proxy.port);
    try {
      await client.call(['GET'], ['SET', 'a', 'b']);
      const [ok, info] = await client.call(['CONFIG', 'RESETSTAT'], ['INFO', 'commandstats', 'errorstats']);
      expect(ok.toString()).toBe('+OK\r\n');
      const text = bulkText(info);
      expect(text).toMatch(
        /^# Commandstats\r\ncmdstat_config\|resetstat:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0\r\n\r\n# Errorstats\r\n$/,
      );
    } finally {
      client.close();
    }
  });

  it('are in INFO all and everything but not in INFO default', async () => {
    const client = await RawClient.connect(stack.proxy.port);
    try {
      const [all, everything, deflt] = await client.call(['INFO', 'all'], ['INFO', 'everything'], ['INFO']);
      expect(bulkText(all)).toMatch(/\r\ncmdstat_info:calls=\d+,usec=\d+,usec_per_call=[\d.]+,rejected_calls=0,failed_calls=0\r\n/);
      expect(bulkText(everything)).toMatch(/rejected_calls=/);
      expect(bulkText(deflt)).not.toMatch(/rejected_calls=/);
    } finally {
      client.close();
    }
  });
});
