// CONFIG for what the proxy owns (issue 22): CONFIG GET and SET of slowlog-log-slower-than,
// slowlog-max-len, timeout and maxclients read and change the live values, with redis-server's ranges
// and error texts; SLOWLOG follows them; the timeout and maxclients take effect at once; CONFIG
// RESETSTAT resets INFO's stats as Redis does. Each step is compared with a direct redis-server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, replayOnBoth, startStack, type DifferentialSide, type Stack } from '../helpers/stack.js';

let stack: Stack;
let side: DifferentialSide;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const DEFAULTS = [['CONFIG', 'SET', 'slowlog-log-slower-than', '10000', 'slowlog-max-len', '128', 'timeout', '0', 'maxclients', '10000']];

async function connectBoth(): Promise<DifferentialSide> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
  side = { oracle, proxy };
  return side;
}

afterEach(async () => {
  await replayOnBoth(side, DEFAULTS, false);
  side.oracle.close();
  side.proxy.close();
});

const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));

describe('CONFIG GET and SET of the proxy-owned parameters', () => {
  it('values, ranges, parse errors, duplicates, case, all-or-nothing: byte for byte with redis-server', async () => {
    const [oracle, proxy] = await replayOnBoth(
      await connectBoth(),
      [
        ['CONFIG', 'SET', 'slowlog-log-slower-than', 'x'],
        ['CONFIG', 'SET', 'slowlog-log-slower-than', '-2'],
        ['CONFIG', 'SET', 'slowlog-log-slower-than', '9223372036854775808'],
        ['CONFIG', 'SET', 'slowlog-max-len', '-1'],
        ['CONFIG', 'SET', 'timeout', '-1'],
        ['CONFIG', 'SET', 'timeout', '1.5'],
        ['CONFIG', 'SET', 'timeout', '2147483648'],
        ['CONFIG', 'SET', 'maxclients', '0'],
        ['CONFIG', 'SET', 'maxclients', '4294967296'],
        ['CONFIG', 'SET', 'slowlog-max-len', '5', 'slowlog-max-len', '6'],
        ['CONFIG', 'SET', 'slowlog-max-len', '7', 'timeout', 'x'],
        ['CONFIG', 'GET', 'slowlog-max-len'],
        ['CONFIG', 'SET', 'SLOWLOG-MAX-LEN', '7', 'slowlog-log-slower-than', '-1'],
        ['CONFIG', 'GET', 'SLOWLOG-MAX-LEN'],
        ['CONFIG', 'GET', 'slowlog-log-slower-than'],
        ['CONFIG', 'SET', 'timeout', '300', 'maxclients', '500'],
        ['CONFIG', 'GET', 'timeout'],
        ['CONFIG', 'GET', 'maxclients'],
        ['CONFIG', 'GET', 'maxcl*'],
      ],
      false,
    );
    expect(text(proxy)).toEqual(text(oracle));
    // A pattern lists Redis' hash-table order (its seed is random per process): compare the pairs.
    const [[o], [p]] = await replayOnBoth(side, [['CONFIG', 'GET', 'slowlog-*']], false);
    const pairs = (r: Buffer) => {
      const parts = r
        .toString()
        .split('\r\n')
        .filter((_, i) => i % 2 === 0 && i > 0);
      return [0, 2].map((i) => `${parts[i]}=${parts[i + 1]}`).sort();
    };
    expect(pairs(p)).toEqual(pairs(o));
    expect(pairs(p)).toEqual(['slowlog-log-slower-than=-1', 'slowlog-max-len=7']);
  });

  it('SLOWLOG follows: slower-than 0 logs every command (local and forwarded), max-len trims, -1 stops logging', async () => {
    const steps = [
      ['CONFIG', 'SET', 'slowlog-log-slower-than', '0'],
      ['SLOWLOG', 'RESET'],
      ['PING'],
      ['SET', 'cfg:k', 'v'],
      ['ECHO', 'x'],
      ['SLOWLOG', 'LEN'],
      ['CONFIG', 'SET', 'slowlog-max-len', '3'],
      ['PING'],
      ['PING'],
      ['SLOWLOG', 'LEN'],
      ['CONFIG', 'SET', 'slowlog-log-slower-than', '-1'],
      ['SLOWLOG', 'RESET'],
      ['PING'],
      ['SLOWLOG', 'LEN'],
    ];
    const [oracle, proxy] = await replayOnBoth(await connectBoth(), steps, false);
    expect(text(proxy)).toEqual(text(oracle));
    expect(text(proxy)[5]).toBe(':4\r\n');
    // The entries' arguments, newest first (ids, times and durations differ).
    await replayOnBoth(
      side,
      [
        ['CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '128'],
        ['SLOWLOG', 'RESET'],
      ],
      false,
    );
    await replayOnBoth(
      side,
      [
        ['CLIENT', 'SETNAME', 'cfg-client'],
        ['SET', 'cfg:k', 'v2'],
      ],
      false,
    );
    const [[o], [p]] = await Promise.all([side.oracle.call(['SLOWLOG', 'GET', '2']), side.proxy.call(['SLOWLOG', 'GET', '2'])]);
    const args = (r: Buffer) =>
      [...r.toString('latin1').matchAll(/\*\d+\r\n((?:\$\d+\r\n[^\r\n]*\r\n)+)\$\d+\r\n[\d.:]+\r\n/g)].map((m) => m[1]);
    expect(args(p)).toEqual(args(o));
    expect(args(p)[0]).toContain('cfg:k');
  });

  it('CONFIG SET timeout closes idle clients from then on; 0 turns it off again', async () => {
    await connectBoth();
    for (const c of [side.oracle, side.proxy]) expect(text(await c.call(['CONFIG', 'SET', 'timeout', '1']))).toEqual(['+OK\r\n']);
    const [idleO, idleP] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
    // The controlling connections stay active; the idle ones are closed (Redis checks in its cron).
    const busy = setInterval(() => {
      for (const c of [side.oracle, side.proxy]) void c.call(['PING']).catch(() => undefined);
    }, 300);
    try {
      await Promise.all([idleO.untilClosed(6000), idleP.untilClosed(6000)]);
    } finally {
      clearInterval(busy);
    }
    await new Promise((r) => setTimeout(r, 400)); // the last PINGs answered
    for (const c of [side.oracle, side.proxy]) expect(text(await c.call(['CONFIG', 'SET', 'timeout', '0']))).toEqual(['+OK\r\n']);
  }, 20_000);

  it('CONFIG SET maxclients refuses the next connection with Redis error, at once', async () => {
    await connectBoth();
    const [[clients]] = [await side.proxy.call(['INFO', 'clients'])];
    const connected = Number(/connected_clients:(\d+)/.exec(clients.toString())![1]);
    expect(text(await side.proxy.call(['CONFIG', 'SET', 'maxclients', String(connected)]))).toEqual(['+OK\r\n']);
    const refused = await RawClient.connect(stack.proxy.port);
    expect((await refused.untilClosed()).toString()).toBe('-ERR max number of clients reached\r\n');
    expect(text(await side.proxy.call(['CONFIG', 'SET', 'maxclients', '10000']))).toEqual(['+OK\r\n']);
    const admitted = await RawClient.connect(stack.proxy.port);
    expect(text(await admitted.call(['PING']))).toEqual(['+PONG\r\n']);
    admitted.close();
  });
});

describe('CONFIG RESETSTAT', () => {
  it('resets total_commands_processed, total_connections_received, commandstats and errorstats as Redis does', async () => {
    await connectBoth();
    const stat = (info: Buffer, name: string) => new RegExp(`${name}:(\\d+)`).exec(info.toString())?.[1];
    for (const c of [side.oracle, side.proxy]) await c.call(['PING'], ['GET', 'cfg:none'], ['NOSUCH'], ['INCR']);
    const [oracle, proxy] = await replayOnBoth(
      side,
      [
        ['CONFIG', 'RESETSTAT'],
        ['PING'],
        ['SET', 'cfg:n', '1'],
        ['INCR', 'cfg:n', 'x'],
        ['INFO', 'stats'],
        ['INFO', 'commandstats', 'errorstats'],
      ],
      false,
    );
    for (const name of ['total_commands_processed', 'total_connections_received', 'total_error_replies']) {
      expect(stat(proxy[4], name), name).toBe(stat(oracle[4], name));
    }
    expect(stat(proxy[4], 'total_commands_processed')).toBe('3');
    const names = (info: Buffer) =>
      [...info.toString().matchAll(/^(cmdstat_[^:]+|errorstat_[^:]+):(calls=\d+|count=\d+)/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
    expect(names(proxy[5])).toEqual(names(oracle[5]));
  });
});
