// A client blocked in XREADGROUP whose stream goes away (DEL, SET, a transaction that makes it a set,
// FLUSHALL) or whose group is destroyed: Redis 7.0.15 answers it with an error (blocked.c; the
// scenarios of tests/unit/type/stream-cgroups.tcl). The same scenario runs on a direct redis-server
// and through the proxy; the blocked client's reply must be byte-identical. The same for BLMOVE and
// BRPOPLPUSH blocked while their destination holds another type (Redis answers WRONGTYPE when an
// element arrives; a source of another type keeps them waiting). Then the hub alone: a write
// answered before the blocked client's first poll counts as a write after the command, and clients
// blocked on one key in different groups are served in the order they blocked.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { lookupCommand } from '../../src/commands/table.js';
import { BlockingHub } from '../../src/proxy/blocking-hub.js';
import { planBlocking, type BlockingPlan } from '../../src/proxy/blocking.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

let stack: Stack;
const clients: RawClient[] = [];

beforeAll(async () => {
  stack = await startStack({ blockPollIntervalMs: 50 });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await stack?.stop();
});

async function connect(port: number): Promise<RawClient> {
  const c = await RawClient.connect(port);
  clients.push(c);
  return c;
}

async function infoField(c: RawClient, section: string, field: string): Promise<number> {
  const [reply] = await c.call(['INFO', section]);
  return Number(new RegExp(`${field}:(\\d+)`).exec(reply.toString())![1]);
}

/**
 * Blocks a client in XREADGROUP … BLOCK 0 on `port`, waits until it is blocked (through the proxy: until
 * its first poll has come back empty, i.e. a second poll was made), runs `change` from another
 * connection and returns the blocked client's reply.
 */
async function scenario(
  port: number,
  viaProxy: boolean,
  change: string[][],
  setup: string[][] = [
    ['XADD', 'mystream', '666', 'f', 'v'],
    ['XGROUP', 'CREATE', 'mystream', 'mygroup', '$'],
  ],
  command: string[] = ['XREADGROUP', 'GROUP', 'mygroup', 'Alice', 'BLOCK', '0', 'STREAMS', 'mystream', '>'],
): Promise<string> {
  const [blocked, other] = await Promise.all([connect(port), connect(port)]);
  await other.call(['FLUSHALL'], ...setup);
  const before = viaProxy ? await infoField(other, 'stats', 'total_upstream_calls') : 0;
  blocked.write(encodeCommands([command]));
  await until(async () => (await infoField(other, 'clients', 'blocked_clients')) === 1, 'client blocked');
  if (viaProxy) await until(async () => (await infoField(other, 'stats', 'total_upstream_calls')) >= before + 2, 'first poll answered');
  await other.call(...change);
  const [reply] = await blocked.replies(1);
  return reply.toString('latin1');
}

describe('XREADGROUP blocked when its stream or group goes: the same error as Redis', () => {
  const cases: [string, string[][], string][] = [
    ['key deleted', [['DEL', 'mystream']], '-UNBLOCKED the stream key no longer exists\r\n'],
    ['key type changed with SET', [['SET', 'mystream', 'val1']], '-UNBLOCKED the stream key no longer exists\r\n'],
    [
      'key type changed with a transaction',
      [['MULTI'], ['DEL', 'mystream'], ['SADD', 'mystream', 'e1'], ['EXEC']],
      '-UNBLOCKED the stream key no longer exists\r\n',
    ],
    ['flushed database', [['FLUSHALL']], '-UNBLOCKED the stream key no longer exists\r\n'],
    [
      'group destroyed',
      [['XGROUP', 'DESTROY', 'mystream', 'mygroup']],
      '-NOGROUP the consumer group this client was blocked on no longer exists\r\n',
    ],
  ];
  for (const [name, change, expected] of cases) {
    it(name, async () => {
      const direct = await scenario(stack.oracle.endpoint.port, false, change);
      const proxied = await scenario(stack.proxy.port, true, change);
      expect(direct).toBe(expected);
      expect(proxied).toBe(direct);
    });
  }

  it('XREADGROUP on a stream that is already gone still answers the call-time NOGROUP, and the error is counted', async () => {
    const run = async (port: number) => {
      const c = await connect(port);
      const [, , reply] = await c.call(
        ['FLUSHALL'],
        ['CONFIG', 'RESETSTAT'],
        ['XREADGROUP', 'GROUP', 'mygroup', 'Alice', 'BLOCK', '0', 'STREAMS', 'mystream', '>'],
      );
      const [stats] = await c.call(['INFO', 'commandstats']);
      return [reply.toString(), /cmdstat_xreadgroup:calls=1,.*,rejected_calls=0,failed_calls=1/.test(stats.toString())];
    };
    const direct = await run(stack.oracle.endpoint.port);
    expect(await run(stack.proxy.port)).toEqual(direct);
    expect(direct[0]).toMatch(/^-NOGROUP No such key 'mystream'/);
    expect(direct[1]).toBe(true);
  });
});

describe('BLMOVE / BRPOPLPUSH blocked when the destination holds another type: the same as Redis', () => {
  for (const command of [
    ['BRPOPLPUSH', 'blist', 'target', '0'],
    ['BLMOVE', 'blist', 'target', 'LEFT', 'RIGHT', '0'],
  ]) {
    it(`${command[0]}: an element pushed to the source answers WRONGTYPE and stays in the source`, async () => {
      const run = async (port: number, viaProxy: boolean) => {
        const reply = await scenario(port, viaProxy, [['RPUSH', 'blist', 'foo']], [['SET', 'target', 'nolist']], command);
        const c = await connect(port);
        const [list] = await c.call(['LRANGE', 'blist', '0', '-1']);
        return [reply, list.toString()];
      };
      const direct = await run(stack.oracle.endpoint.port, false);
      expect(direct[0]).toMatch(/^-WRONGTYPE/);
      expect(direct[1]).toBe('*1\r\n$3\r\nfoo\r\n');
      expect(await run(stack.proxy.port, true)).toEqual(direct);
    });
  }

  it('a source that holds another type while blocked keeps the client waiting, as in Redis', async () => {
    const run = async (port: number, viaProxy: boolean) =>
      scenario(
        port,
        viaProxy,
        [
          ['SET', 'blist', 'x'],
          ['DEL', 'blist'],
          ['RPUSH', 'blist', 'foo'],
        ],
        [],
        ['BRPOPLPUSH', 'blist', 'target', '0'],
      );
    const direct = await run(stack.oracle.endpoint.port, false);
    expect(direct).toBe('$3\r\nfoo\r\n');
    expect(await run(stack.proxy.port, true)).toBe(direct);
  });
});

describe('BlockingHub: a write that overtakes the first poll', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());
  const settle = () => vi.advanceTimersByTimeAsync(0);
  const b = (s: string) => Buffer.from(s);
  const xreadgroup = (): BlockingPlan => {
    const words = ['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'];
    const p = planBlocking(lookupCommand(words[0])!, words.map(b));
    if (Buffer.isBuffer(p)) throw new Error(p.toString());
    return p;
  };

  function scripted() {
    const calls: { commands: Buffer[][]; answer: (replies: Buffer[]) => void }[] = [];
    const hub = new BlockingHub((commands) => new Promise<Buffer[]>((answer) => calls.push({ commands, answer })));
    return { calls, hub };
  }

  it('DEL answered while the first poll is in flight: the poll NOGROUP is the stream lost after blocking', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    hub.wait(xreadgroup(), 100, done);
    await settle();
    hub.written([b('DEL'), b('s')]);
    calls[0].answer([b("-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n")]);
    await settle();
    expect(calls[1].commands.map((c) => c.map(String))).toEqual([['TYPE', 's']]);
    calls[1].answer([b('+none\r\n')]);
    await settle();
    expect(String(done.mock.calls[0][0])).toBe('-UNBLOCKED the stream key no longer exists\r\n');
    expect(hub.pollers).toBe(0);
  });

  it('no write before it: the first poll NOGROUP is the call-time error, as is', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    hub.wait(xreadgroup(), 100, done);
    await settle();
    const nogroup = "-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n";
    calls[0].answer([b(nogroup)]);
    await settle();
    expect(calls).toHaveLength(1);
    expect(String(done.mock.calls[0][0])).toBe(nogroup);
  });

  it('BZPOPMIN: a write answered before the first poll makes its WRONGTYPE a key changed after blocking (keeps waiting)', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    const words = ['BZPOPMIN', 'zset', '0'];
    const p = planBlocking(lookupCommand(words[0])!, words.map(b));
    if (Buffer.isBuffer(p)) throw new Error(p.toString());
    hub.wait(p, 100, done);
    await settle();
    hub.written([b('SET'), b('zset'), b('foo')]); // MULTI … SET zset foo … EXEC from another connection
    calls[0].answer([b('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n')]);
    await settle();
    expect(done).not.toHaveBeenCalled();
    hub.written([b('ZADD'), b('zset'), b('1'), b('bar')]);
    await settle();
    calls[1].answer([b('*3\r\n$4\r\nzset\r\n$3\r\nbar\r\n$1\r\n1\r\n')]);
    await settle();
    expect(String(done.mock.calls[0][0])).toBe('*3\r\n$4\r\nzset\r\n$3\r\nbar\r\n$1\r\n1\r\n');
  });

  it('XREAD `$`: a write during its preparing read counts too, and a stream of another type reads from 0-0 once it is a stream again', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    const words = ['XREAD', 'BLOCK', '0', 'STREAMS', 'mystream', '$'];
    const p = planBlocking(lookupCommand(words[0])!, words.map(b));
    if (Buffer.isBuffer(p)) throw new Error(p.toString());
    hub.wait(p, 100, done);
    await settle();
    expect(calls[0].commands[0].map(String)).toEqual(['XREVRANGE', 'mystream', '+', '-', 'COUNT', '1']);
    hub.written([b('SET'), b('mystream'), b('val1')]);
    calls[0].answer([b('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n')]);
    await settle();
    expect(calls[1].commands[0].map(String)).toEqual(['XREAD', 'STREAMS', 'mystream', '0-0']);
    calls[1].answer([b('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n')]);
    await settle();
    expect(done).not.toHaveBeenCalled();
  });

  it('groups woken by one write poll in one call, the group blocked first first (BRPOPLPUSH to two destinations)', async () => {
    const { calls, hub } = scripted();
    const first = vi.fn();
    const second = vi.fn();
    const plan = (dst: string) => {
      const words = ['BRPOPLPUSH', 'blist', dst, '0'];
      const p = planBlocking(lookupCommand(words[0])!, words.map(b));
      if (Buffer.isBuffer(p)) throw new Error(p.toString());
      return p;
    };
    hub.wait(plan('target1'), 100, first);
    await settle();
    calls[0].answer([b('$-1\r\n')]);
    hub.wait(plan('target2'), 100, second);
    await settle();
    calls[1].answer([b('$-1\r\n')]);
    await settle();
    hub.written([b('LPUSH'), b('blist'), b('foo')]);
    await settle();
    expect(calls[2].commands.map((c) => c.map(String))).toEqual([
      ['RPOPLPUSH', 'blist', 'target1'],
      ['RPOPLPUSH', 'blist', 'target2'],
    ]);
    calls[2].answer([b('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n'), b('$3\r\nfoo\r\n')]);
    await settle();
    expect(calls[3].commands.map((c) => c.map(String))).toEqual([['TYPE', 'target1']]);
    calls[3].answer([b('+string\r\n')]); // the WRONGTYPE was target1's
    await settle();
    expect(String(first.mock.calls[0][0])).toMatch(/^-WRONGTYPE/);
    expect(String(second.mock.calls[0][0])).toBe('$3\r\nfoo\r\n');
  });

  it('polls of one key never overlap: a younger group waits for the older group’s poll, then both poll together, oldest first', async () => {
    const { calls, hub } = scripted();
    const plan = (dst: string) => {
      const words = ['BRPOPLPUSH', 'blist', dst, '0'];
      const p = planBlocking(lookupCommand(words[0])!, words.map(b));
      if (Buffer.isBuffer(p)) throw new Error(p.toString());
      return p;
    };
    const first = vi.fn();
    const second = vi.fn();
    hub.wait(plan('target1'), 100, first);
    await settle();
    hub.wait(plan('target2'), 100, second); // blocked after the first, while its poll is in flight
    await settle();
    expect(calls).toHaveLength(1);
    hub.written([b('LPUSH'), b('blist'), b('foo')]); // the push came while the first poll was in flight
    calls[0].answer([b('$-1\r\n')]); // that poll ran before the push
    await settle();
    expect(calls[1].commands.map((c) => c.map(String))).toEqual([
      ['RPOPLPUSH', 'blist', 'target1'],
      ['RPOPLPUSH', 'blist', 'target2'],
    ]);
    calls[1].answer([b('$3\r\nfoo\r\n'), b('$-1\r\n')]);
    await settle();
    expect(String(first.mock.calls[0][0])).toBe('$3\r\nfoo\r\n');
    expect(second).not.toHaveBeenCalled();
  });

  it('a stream still there after NOGROUP lost its group', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    hub.wait(xreadgroup(), 100, done);
    await settle();
    calls[0].answer([b('*-1\r\n')]);
    hub.written([b('XGROUP'), b('DESTROY'), b('s'), b('g')]);
    await settle();
    calls[1].answer([b("-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n")]);
    await settle();
    calls[2].answer([b('+stream\r\n')]);
    await settle();
    expect(String(done.mock.calls[0][0])).toBe('-NOGROUP the consumer group this client was blocked on no longer exists\r\n');
  });
});
