// Blocking commands emulated by polling (src/proxy/blocking.ts), compared with a direct redis-server
// where the outcome is deterministic: immediate data, timeouts, errors, data pushed during the wait,
// no double pop, XREAD `$`, per-connection order, other connections not blocked, polling stopping on
// disconnect, RESP3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import { settled, until } from '../helpers/wait.js';

let stack: Stack;
const clients: RawClient[] = [];

beforeAll(async () => {
  stack = await startStack({ blockPollIntervalMs: 50 });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await stack?.stop();
});

async function proxyClient(): Promise<RawClient> {
  const c = await RawClient.connect(stack.proxy.port);
  clients.push(c);
  return c;
}
async function oracleClient(): Promise<RawClient> {
  const c = await RawClient.connect(stack.oracle.endpoint.port);
  clients.push(c);
  return c;
}

const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));

/** Runs the same commands on both sides (after FLUSHALL) and returns [proxy, oracle] replies as text. */
async function both(...commands: string[][]): Promise<[string[], string[]]> {
  const [p, o] = await Promise.all([proxyClient(), oracleClient()]);
  await Promise.all([p.call(['FLUSHALL']), o.call(['FLUSHALL'])]);
  const pr = text(await p.call(...commands));
  const or = text(await o.call(...commands));
  return [pr, or];
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const r = await f();
  return [r, Date.now() - t0];
}

/**
 * Upstream calls the proxy made so far (INFO stats' total_upstream_calls counts every poll; INFO stats
 * itself makes none). Tests in this file run one after another, so the count moves only with theirs.
 */
async function upstreamCalls(): Promise<number> {
  const info = await proxyClient();
  const [reply] = await info.call(['INFO', 'stats']);
  info.close();
  return Number(/total_upstream_calls:(\d+)/.exec(reply.toString())![1]);
}

/** Resolves once the upstream has seen `n` more calls than `base` (polls, for a command that waits). */
async function untilCalls(base: number, n: number, what: string): Promise<void> {
  await until(async () => (await upstreamCalls()) >= base + n, what);
}

/**
 * Resolves once connection `id` shows `cmd=<name>` in CLIENT LIST, on the proxy or on redis-server
 * alike: the command was dispatched (redis-server: it is blocked). On the proxy its polling starts
 * in the same turn of the event loop, before any later request from another connection is read.
 */
async function untilRunning(port: number, id: string, name: string): Promise<void> {
  const c = await RawClient.connect(port);
  clients.push(c);
  await until(
    async () => (await c.call(['CLIENT', 'LIST', 'ID', id]))[0].toString().includes(` cmd=${name} `),
    `client ${id} running ${name}`,
  );
  c.close();
}

async function clientId(c: RawClient): Promise<string> {
  return (await c.call(['CLIENT', 'ID']))[0].toString().slice(1, -2);
}

describe('blocking commands with data at once: the same reply as Redis', () => {
  const cases: [string, string[][]][] = [
    [
      'BLPOP from the second of two keys',
      [
        ['RPUSH', 'b', 'x', 'y'],
        ['BLPOP', 'a', 'b', '1'],
        ['LRANGE', 'b', '0', '-1'],
      ],
    ],
    [
      'BRPOP',
      [
        ['RPUSH', 'a', 'x', 'y'],
        ['BRPOP', 'a', 'b', '0'],
      ],
    ],
    [
      'BZPOPMIN with scores',
      [
        ['ZADD', 'z', '1.5', 'm1', '2', 'm2'],
        ['BZPOPMIN', 'nz', 'z', '1'],
        ['BZPOPMAX', 'z', '0'],
      ],
    ],
    [
      'BLMOVE',
      [
        ['RPUSH', 's', '1', '2'],
        ['BLMOVE', 's', 'd', 'LEFT', 'RIGHT', '1'],
        ['LRANGE', 'd', '0', '-1'],
      ],
    ],
    [
      'BRPOPLPUSH',
      [
        ['RPUSH', 's', '1', '2'],
        ['BRPOPLPUSH', 's', 'd', '1'],
        ['LRANGE', 'd', '0', '-1'],
      ],
    ],
    [
      'BLMPOP with COUNT',
      [
        ['RPUSH', 'l2', 'a', 'b', 'c'],
        ['BLMPOP', '1', '2', 'l1', 'l2', 'RIGHT', 'COUNT', '2'],
      ],
    ],
    [
      'BZMPOP',
      [
        ['ZADD', 'z', '1', 'a', '2', 'b'],
        ['BZMPOP', '1', '1', 'z', 'MAX', 'COUNT', '5'],
      ],
    ],
    [
      'XREAD BLOCK with an explicit id',
      [
        ['XADD', 'st', '1-1', 'f', 'v'],
        ['XADD', 'st', '2-1', 'f', 'w'],
        ['XREAD', 'COUNT', '5', 'BLOCK', '100', 'STREAMS', 'st', '1-1'],
      ],
    ],
    [
      'XREADGROUP BLOCK',
      [
        ['XADD', 'st', '1-1', 'f', 'v'],
        ['XGROUP', 'CREATE', 'st', 'g', '0'],
        ['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '100', 'STREAMS', 'st', '>'],
      ],
    ],
    [
      'wrong types at once',
      [
        ['SET', 'k', 'v'],
        ['BLPOP', 'missing', 'k', '0'],
        ['BZPOPMIN', 'k', '0'],
        ['BLMOVE', 'k', 'd', 'LEFT', 'LEFT', '0'],
        ['BLMPOP', '0', '1', 'k', 'LEFT'],
        ['XREAD', 'BLOCK', '0', 'STREAMS', 'k', '0'],
      ],
    ],
    [
      'errors after the timeout is parsed',
      [
        ['BLMPOP', '1', '0', 'a', 'LEFT'],
        ['BLMPOP', '1', '1', 'a', 'UP'],
        ['BZMPOP', '1', 'x', 'a', 'MIN'],
        ['XREADGROUP', 'GROUP', 'nog', 'c', 'BLOCK', '10', 'STREAMS', 'st', '>'],
        ['XREAD', 'BLOCK', '10', 'STREAMS', 'a', 'b', '0'],
      ],
    ],
  ];
  for (const [name, commands] of cases) {
    it(name, async () => {
      const [p, o] = await both(...commands);
      expect(p).toEqual(o);
    });
  }
});

describe('timeouts', () => {
  it('timeout parsing errors as Redis', async () => {
    const commands = [
      ['BLPOP', 'a', 'abc'],
      ['BLPOP', 'a', '-1'],
      ['BLPOP', 'a', '1x'],
      ['BLPOP', 'a', ''],
      ['BLPOP', 'a', ' 1'],
      ['BLPOP', 'a', '-inf'],
      ['BRPOPLPUSH', 'a', 'b', 'x'],
      ['BLMOVE', 'a', 'b', 'UP', 'LEFT', 'x'],
      ['BLMOVE', 'a', 'b', 'LEFT', 'LEFT', '-2'],
      ['BLMPOP', 'x', '1', 'a', 'LEFT'],
      ['BZMPOP', '-1', '1', 'a', 'MIN'],
      ['BZPOPMIN', 'a', 'nan'],
      ['XREAD', 'BLOCK', 'x', 'STREAMS', 'a', '0'],
      ['XREAD', 'BLOCK', '-1', 'STREAMS', 'a', '0'],
      ['XREAD', 'BLOCK', '1.5', 'STREAMS', 'a', '0'],
      ['XREAD', 'COUNT', 'x', 'BLOCK', 'y', 'STREAMS', 'a', '0'],
      ['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '-5', 'STREAMS', 'a', '>'],
    ];
    const [p, o] = await both(...commands);
    expect(p).toEqual(o);
  });

  it('the null reply after about the timeout, as Redis', async () => {
    const commands = [
      ['BLPOP', 'a', 'b', '0.3'],
      ['BZPOPMIN', 'z', '0.2'],
      ['BLMOVE', 'a', 'b', 'LEFT', 'LEFT', '0.2'],
      ['BRPOPLPUSH', 'a', 'b', '0.2'],
      ['BLMPOP', '0.2', '1', 'a', 'LEFT'],
      ['BZMPOP', '0.2', '1', 'z', 'MIN'],
      ['XREAD', 'BLOCK', '200', 'STREAMS', 's', '0'],
    ];
    const [p, o] = await both(...commands);
    expect(p).toEqual(o);
    const c = await proxyClient();
    const [[reply], elapsed] = await timed(() => c.call(['BLPOP', 'nothing', '0.5']));
    expect(reply.toString()).toBe('*-1\r\n');
    // Not before the timeout (an upper bound would only measure the machine's load).
    expect(elapsed).toBeGreaterThanOrEqual(480);
  });
});

describe('waiting', () => {
  it('data pushed by another connection during the wait arrives', async () => {
    const [a, b] = await Promise.all([proxyClient(), proxyClient()]);
    await a.call(['DEL', 'w1']);
    const base = await upstreamCalls();
    const waiting = a.call(['BLPOP', 'w0', 'w1', '5']);
    await untilCalls(base, 2, 'a second poll (the first found nothing)');
    expect(await settled(waiting)).toBe(false);
    await b.call(['RPUSH', 'w1', 'hello']);
    const [reply] = await waiting;
    expect(reply.toString()).toBe('*2\r\n$2\r\nw1\r\n$5\r\nhello\r\n');
  });

  it('a waiting client has the b flag in CLIENT LIST, as in Redis, and loses it once served', async () => {
    const flags = async (port: number, id: string) => {
      const c = await RawClient.connect(port);
      clients.push(c);
      const [line] = await c.call(['CLIENT', 'LIST', 'ID', id]);
      c.close();
      return /flags=(\S+)/.exec(line.toString())![1];
    };
    for (const [port, served] of [
      [stack.proxy.port, await proxyClient()],
      [stack.oracle.endpoint.port, await oracleClient()],
    ] as const) {
      const id = await clientId(served);
      await served.call(['DEL', 'fb']);
      const waiting = served.call(['BLPOP', 'fb', '5']);
      await untilRunning(port, id, 'blpop');
      await until(async () => (await flags(port, id)) === 'b', `client ${id} flagged b on port ${port}`);
      const pusher = await RawClient.connect(port);
      clients.push(pusher);
      await pusher.call(['RPUSH', 'fb', 'x']);
      await waiting;
      expect(await flags(port, id)).toBe('N');
    }
  });

  it('two clients blocked on one list each get one element', async () => {
    const [a, b, c] = await Promise.all([proxyClient(), proxyClient(), proxyClient()]);
    await c.call(['DEL', 'q']);
    const [ida, idb] = await Promise.all([clientId(a), clientId(b)]);
    const wa = a.call(['BRPOP', 'q', '5']);
    const wb = b.call(['BRPOP', 'q', '5']);
    await untilRunning(stack.proxy.port, ida, 'brpop');
    await untilRunning(stack.proxy.port, idb, 'brpop');
    await c.call(['LPUSH', 'q', 'e1', 'e2']);
    const got = text([...(await wa), ...(await wb)]).sort();
    expect(got).toEqual(['*2\r\n$1\r\nq\r\n$2\r\ne1\r\n', '*2\r\n$1\r\nq\r\n$2\r\ne2\r\n']);
    expect(text(await c.call(['LLEN', 'q']))).toEqual([':0\r\n']);
  });

  it('XREAD BLOCK with $ returns only entries added after the call', async () => {
    const [a, b] = await Promise.all([proxyClient(), proxyClient()]);
    await a.call(['DEL', 'xs', 'xm']);
    await a.call(['XADD', 'xs', '5-1', 'old', '1']);
    let base = await upstreamCalls();
    const waiting = a.call(['XREAD', 'BLOCK', '5000', 'STREAMS', 'xs', 'xm', '$', '$']);
    // `$` is resolved by a first call, then the polls start: an entry added after that is new.
    await untilCalls(base, 2, '`$` resolved and a first poll');
    await b.call(['XADD', 'xm', '7-1', 'new', '2']);
    const [reply] = await waiting;
    expect(reply.toString()).toBe('*1\r\n*2\r\n$2\r\nxm\r\n*1\r\n*2\r\n$3\r\n7-1\r\n*2\r\n$3\r\nnew\r\n$1\r\n2\r\n');
    base = await upstreamCalls();
    const w2 = a.call(['XREAD', 'BLOCK', '5000', 'STREAMS', 'xs', '$']);
    await untilCalls(base, 2, '`$` resolved and a first poll');
    await b.call(['XADD', 'xs', '9-1', 'n', '3']);
    expect((await w2)[0].toString()).toContain('9-1');
    expect((await w2)[0].toString()).not.toContain('5-1');
  });

  it('a pipelined command after a blocking one waits for it; other connections go on', async () => {
    const [a, b] = await Promise.all([proxyClient(), proxyClient()]);
    await a.call(['DEL', 'pl']);
    const t0 = Date.now();
    const waiting = a.call(['BLPOP', 'pl', '0.4'], ['RPUSH', 'pl', 'after'], ['LRANGE', 'pl', '0', '-1']);
    const [pong] = await b.call(['PING']);
    expect(pong.toString()).toBe('+PONG\r\n');
    expect(await settled(waiting)).toBe(false); // the other connection was answered while this one waits
    const replies = text(await waiting);
    expect(replies).toEqual(['*-1\r\n', ':1\r\n', '*1\r\n$5\r\nafter\r\n']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
  });

  it('earlier commands of the connection run before the blocking one', async () => {
    const a = await proxyClient();
    await a.call(['DEL', 'pre']);
    const replies = text(await a.call(['RPUSH', 'pre', 'v'], ['BLPOP', 'pre', '0']));
    expect(replies).toEqual([':1\r\n', '*2\r\n$3\r\npre\r\n$1\r\nv\r\n']);
  });

  it('closing a blocked connection stops its polling', async () => {
    const a = await proxyClient();
    const connections = stack.proxy.connections();
    const base = await upstreamCalls();
    void a.call(['BLPOP', 'never', '0']).catch(() => undefined);
    await untilCalls(base, 3, 'polling');
    const during = await upstreamCalls();
    await untilCalls(during, 3, 'still polling');
    a.close();
    await until(() => stack.proxy.connections() < connections, 'the proxy saw the close');
    const after = await upstreamCalls();
    // No event marks "no poll happened": watch for eight poll intervals (50 ms here); one poll may
    // have been in flight at the close.
    await new Promise((r) => setTimeout(r, 400));
    expect(await upstreamCalls()).toBeLessThanOrEqual(after + 1);
  });
});

describe('RESP3', () => {
  it('replies converted like Redis', async () => {
    const commands = [
      ['HELLO', '3'],
      ['ZADD', 'z', '1.5', 'm'],
      ['BZPOPMIN', 'z', '1'],
      ['RPUSH', 'l', 'a'],
      ['BLPOP', 'l', '1'],
      ['BLPOP', 'l', '0.1'],
      ['BLMOVE', 'l', 'm', 'LEFT', 'LEFT', '0.1'],
      ['XADD', 's', '1-1', 'f', 'v'],
      ['XREAD', 'BLOCK', '10', 'STREAMS', 's', '0'],
      ['XREAD', 'BLOCK', '10', 'STREAMS', 's', '$'],
    ];
    const [p, o] = await both(...commands);
    expect(p.slice(1)).toEqual(o.slice(1));
  });
});

describe('queue-style loops', () => {
  it('Sidekiq-style BRPOP queue:a queue:b and BullMQ-style BZPOPMIN marker', async () => {
    const [worker, producer] = await Promise.all([proxyClient(), proxyClient()]);
    await producer.call(['DEL', 'queue:a', 'queue:b', 'bull:q:marker']);
    const id = await clientId(worker);
    const job = worker.call(['BRPOP', 'queue:a', 'queue:b', '5']);
    await untilRunning(stack.proxy.port, id, 'brpop');
    await producer.call(['LPUSH', 'queue:b', 'job1']);
    expect(text(await job)).toEqual(['*2\r\n$7\r\nqueue:b\r\n$4\r\njob1\r\n']);
    expect(text(await worker.call(['BZPOPMIN', 'bull:q:marker', '0.5']))).toEqual(['*-1\r\n']);
    const marker = worker.call(['BZPOPMIN', 'bull:q:marker', '5']);
    await untilRunning(stack.proxy.port, id, 'bzpopmin');
    await producer.call(['ZADD', 'bull:q:marker', '0', '0']);
    expect(text(await marker)).toEqual(['*3\r\n$13\r\nbull:q:marker\r\n$1\r\n0\r\n$1\r\n0\r\n']);
  });
});

describe('CLIENT UNBLOCK', () => {
  /** Blocks one connection in BLPOP, unblocks it from another, returns both sides' replies. */
  async function unblockScenario(port: number, reason: string[]): Promise<string[]> {
    const blocked = await RawClient.connect(port);
    const other = await RawClient.connect(port);
    const id = await clientId(blocked);
    blocked.write(Buffer.from(`*3\r\n$5\r\nBLPOP\r\n$13\r\nunblock:empty\r\n$1\r\n0\r\n`));
    await untilRunning(port, id, 'blpop'); // it is waiting now
    const [answer] = await other.call(['CLIENT', 'UNBLOCK', id, ...reason]);
    const [blockedReply] = await blocked.replies(1);
    const [again] = await other.call(['CLIENT', 'UNBLOCK', id, ...reason]); // nothing blocked any more
    blocked.close();
    other.close();
    return [answer, blockedReply, again].map((b) => b.toString());
  }

  for (const reason of [[], ['TIMEOUT'], ['ERROR']]) {
    it(`ends a waiting BLPOP like redis-server (${reason[0] ?? 'default reason'})`, async () => {
      const viaProxy = await unblockScenario(stack.proxy.port, reason);
      const direct = await unblockScenario(stack.oracle.endpoint.port, reason);
      expect(viaProxy).toEqual(direct);
      expect(direct[0]).toBe(':1\r\n');
      expect(direct[2]).toBe(':0\r\n');
    });
  }
});
