// WATCH through the proxy (fingerprints read at WATCH, checked by the EXEC script), compared with a
// direct redis-server: every sequence runs on both, with a second connection making the concurrent
// writes, and the raw replies must be identical. Then the classic optimistic-locking counter with 50
// clients, real client libraries (redis-py's transaction helper, node-redis, ioredis), and the
// documented differences pinned.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import type { Arg } from './differential-cases.js';
import { printable } from './resp3-compare.js';

const run = promisify(execFile);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** A step: a command on the watching connection, or on the other one (`other`), or a wait until a key has expired. */
type Step = Arg[] | { other: Arg[] } | { expired: string };

interface Side {
  main: RawClient;
  other: RawClient;
}

async function side(port: number, protocol: 2 | 3): Promise<Side> {
  const [main, other] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
  await main.call(['FLUSHALL']);
  if (protocol === 3) await main.call(['HELLO', '3']);
  return { main, other };
}

/** Runs the steps on the proxy and on redis-server, and expects the same replies of the watching connection. */
async function expectSameAsRedis(steps: Step[], protocol: 2 | 3 = 2): Promise<string[]> {
  const sides = await Promise.all([side(stack.oracle.endpoint.port, protocol), side(stack.proxy.port, protocol)]);
  try {
    const replies: string[][] = [[], []];
    for (const step of steps) {
      if ('expired' in step) {
        // Each side waits on its own condition: the other connection no longer sees the key.
        await Promise.all(sides.map((s) => untilGone(s.other, step.expired)));
        continue;
      }
      await Promise.all(
        sides.map(async (s, i) => {
          if ('other' in step) await s.other.call(step.other);
          else replies[i].push((await s.main.call(step))[0].toString('latin1'));
        }),
      );
    }
    const [oracle, proxy] = replies;
    for (let i = 0; i < oracle.length; i++) {
      expect(
        proxy[i],
        `RESP${protocol} reply #${i + 1}\n  oracle: ${printable(Buffer.from(oracle[i], 'latin1'))}\n  proxy:  ${printable(Buffer.from(proxy[i], 'latin1'))}`,
      ).toBe(oracle[i]);
    }
    return proxy;
  } finally {
    for (const s of sides) {
      s.main.close();
      s.other.close();
    }
  }
}

async function untilGone(client: RawClient, key: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await client.call(['EXISTS', key]))[0].toString() !== ':0\r\n') {
    if (Date.now() > deadline) throw new Error(`${key} did not expire`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function bothProtocols(steps: Step[]): Promise<void> {
  await expectSameAsRedis(steps, 2);
  await expectSameAsRedis(steps, 3);
}

describe('WATCH semantics, as Redis 7.0 answers them', () => {
  it('an unchanged watched key: EXEC runs the transaction', () =>
    bothProtocols([['SET', 'k', '1'], ['WATCH', 'k'], ['GET', 'k'], ['MULTI'], ['SET', 'k', '2'], ['GET', 'k'], ['EXEC'], ['GET', 'k']]));

  it('a key changed by another client after WATCH: EXEC answers null and nothing runs', () =>
    bothProtocols([
      ['SET', 'k', '1'],
      ['WATCH', 'k'],
      { other: ['SET', 'k', '5'] },
      ['MULTI'],
      ['SET', 'k', '2'],
      ['SET', 'other', 'x'],
      ['EXEC'],
      ['GET', 'k'],
      ['EXISTS', 'other'],
    ]));

  it('a change made while queueing (after MULTI) also aborts', () =>
    bothProtocols([['WATCH', 'k'], ['MULTI'], { other: ['INCR', 'k'] }, ['SET', 'k', '2'], ['EXEC'], ['GET', 'k']]));

  it('a missing key created by another client, a key deleted, a key of another type: null', async () => {
    await bothProtocols([['WATCH', 'k'], { other: ['SET', 'k', 'v'] }, ['MULTI'], ['PING'], ['EXEC']]);
    await bothProtocols([['SET', 'k', 'v'], ['WATCH', 'k'], { other: ['DEL', 'k'] }, ['MULTI'], ['PING'], ['EXEC']]);
    await bothProtocols([
      ['HSET', 'h', 'f', 'v'],
      ['WATCH', 'h'],
      { other: ['HSET', 'h', 'g', 'w'] },
      ['MULTI'],
      ['HGETALL', 'h'],
      ['EXEC'],
    ]);
  });

  it('a change of the key’s expiry (EXPIRE, PERSIST) aborts', async () => {
    await bothProtocols([['SET', 'k', 'v'], ['WATCH', 'k'], { other: ['EXPIRE', 'k', '1000'] }, ['MULTI'], ['GET', 'k'], ['EXEC']]);
    await bothProtocols([['SET', 'k', 'v', 'EX', '1000'], ['WATCH', 'k'], { other: ['PERSIST', 'k'] }, ['MULTI'], ['GET', 'k'], ['EXEC']]);
  });

  it('the watching connection’s own write before MULTI aborts its EXEC', () =>
    bothProtocols([['SET', 'k', '1'], ['WATCH', 'k'], ['INCR', 'k'], ['MULTI'], ['INCR', 'k'], ['EXEC'], ['GET', 'k']]));

  it('a key that expires after WATCH aborts the EXEC (Redis ≥ 6.0.9)', () =>
    // 400 ms leave WATCH ample time to run before the expiry, even on a loaded machine.
    expectSameAsRedis([
      ['SET', 'k', 'v', 'PX', '400'],
      ['WATCH', 'k'],
      { expired: 'k' },
      ['MULTI'],
      ['SET', 'x', '1'],
      ['EXEC'],
      ['EXISTS', 'x'],
    ]));

  it('several keys: one changed is enough; other keys unchanged run', async () => {
    await bothProtocols([
      ['MSET', 'a', '1', 'b', '2'],
      ['WATCH', 'a', 'b', 'c'],
      { other: ['SET', 'c', '3'] },
      ['MULTI'],
      ['INCR', 'a'],
      ['EXEC'],
    ]);
    await bothProtocols([
      ['MSET', 'a', '1', 'b', '2'],
      ['WATCH', 'a'],
      ['WATCH', 'b', 'a'],
      { other: ['SET', 'z', '3'] },
      ['MULTI'],
      ['INCR', 'a'],
      ['EXEC'],
    ]);
  });

  it('UNWATCH forgets the keys: EXEC runs after a change', () =>
    bothProtocols([['WATCH', 'k'], ['UNWATCH'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['INCR', 'k'], ['EXEC'], ['UNWATCH']]));

  it('DISCARD unwatches; a watch survives an EXEC only until that EXEC', async () => {
    await bothProtocols([['WATCH', 'k'], ['MULTI'], ['DISCARD'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['INCR', 'k'], ['EXEC']]);
    await bothProtocols([['WATCH', 'k'], ['MULTI'], ['EXEC'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['INCR', 'k'], ['EXEC']]);
  });

  it('RESET unwatches', () => bothProtocols([['WATCH', 'k'], ['RESET'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['INCR', 'k'], ['EXEC']]));

  it('WATCH inside MULTI is refused without aborting; UNWATCH inside MULTI is queued and answers OK', async () => {
    await bothProtocols([['MULTI'], ['WATCH', 'k'], ['SET', 'k', '1'], ['EXEC']]);
    await bothProtocols([['WATCH', 'k'], ['MULTI'], ['UNWATCH'], ['SET', 'k', '1'], ['EXEC'], ['GET', 'k']]);
    await bothProtocols([['WATCH', 'k'], ['MULTI'], ['UNWATCH'], { other: ['SET', 'k', '9'] }, ['SET', 'k', '1'], ['EXEC'], ['GET', 'k']]);
  });

  it('an empty transaction with a changed watched key answers null; EXECABORT wins over a change', async () => {
    await bothProtocols([['WATCH', 'k'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['EXEC']]);
    await bothProtocols([['WATCH', 'k'], { other: ['SET', 'k', '5'] }, ['MULTI'], ['NOSUCH'], ['EXEC']]);
    await bothProtocols([['WATCH', 'k'], ['MULTI'], ['EXEC'], ['MULTI'], ['CLIENT', 'GETNAME'], ['EXEC']]);
  });

  it('WATCH without a key: the arity error', () => bothProtocols([['WATCH'], ['UNWATCH', 'x']]));

  it('binary keys and values, pipelined in one burst', async () => {
    const key = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80]);
    const value = Buffer.from([0xfe, 0x00, 0xc3]);
    await bothProtocols([
      ['SET', key, value],
      ['WATCH', key, 'plain'],
      ['MULTI'],
      ['GET', key],
      ['SET', key, Buffer.concat([value, value])],
      ['LPOP', 'nolist', '1'],
      ['EXEC'],
      ['GET', key],
    ]);
    await bothProtocols([['SET', key, value], ['WATCH', key], { other: ['APPEND', key, value] }, ['MULTI'], ['GET', key], ['EXEC']]);
  });

  it('WATCH, MULTI, commands and EXEC sent as one burst (before WATCH is answered)', async () => {
    const burst = async (port: number): Promise<string[]> => {
      const c = await RawClient.connect(port);
      try {
        await c.call(['FLUSHALL']);
        const replies = await c.call(
          ['SET', 'k', '1'],
          ['WATCH', 'k'],
          ['MULTI'],
          ['INCR', 'k'],
          ['EXEC'],
          ['WATCH', 'k'],
          ['INCR', 'k'],
          ['MULTI'],
          ['INCR', 'k'],
          ['EXEC'],
          ['GET', 'k'],
        );
        return replies.map((r) => r.toString('latin1'));
      } finally {
        c.close();
      }
    };
    expect(await burst(stack.proxy.port)).toEqual(await burst(stack.oracle.endpoint.port));
  });
});

describe('the documented differences', () => {
  it('a write that leaves the key byte-identical (same value, same expiry) does not abort, where Redis aborts', async () => {
    const steps: Step[] = [['SET', 'k', 'v'], ['WATCH', 'k'], { other: ['SET', 'k', 'v'] }, ['MULTI'], ['GET', 'k'], ['EXEC']];
    const proxy = await RawClient.connect(stack.proxy.port);
    const oracle = await RawClient.connect(stack.oracle.endpoint.port);
    try {
      for (const c of [proxy, oracle]) {
        const other = await RawClient.connect(c === proxy ? stack.proxy.port : stack.oracle.endpoint.port);
        await c.call(['FLUSHALL']);
        const replies: string[] = [];
        for (const step of steps) {
          if ('other' in step) await other.call(step.other);
          else if (Array.isArray(step)) replies.push((await c.call(step))[0].toString('latin1'));
        }
        other.close();
        expect(replies[4]).toBe(c === proxy ? '*1\r\n$1\r\nv\r\n' : '*-1\r\n');
      }
    } finally {
      proxy.close();
      oracle.close();
    }
  });
});

describe('optimistic locking with real clients', () => {
  it('50 ioredis clients running WATCH / GET / MULTI / SET increments end at the exact total', async () => {
    const CLIENTS = 50;
    const INCREMENTS = 4;
    const clients = Array.from(
      { length: CLIENTS },
      () => new IORedis({ port: stack.proxy.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 }),
    );
    try {
      await Promise.all(clients.map((c) => c.connect()));
      await clients[0].set('counter', '0');
      let retries = 0;
      await Promise.all(
        clients.map(async (c) => {
          for (let n = 0; n < INCREMENTS;) {
            await c.watch('counter');
            const value = Number(await c.get('counter'));
            const result = await c
              .multi()
              .set('counter', String(value + 1))
              .exec();
            if (result === null) retries++;
            else n++;
          }
        }),
      );
      expect(await clients[0].get('counter')).toBe(String(CLIENTS * INCREMENTS));
      expect(retries).toBeGreaterThan(0); // the clients really contended
      console.log(`WATCH counter: ${CLIENTS} clients x ${INCREMENTS} = ${await clients[0].get('counter')} (${retries} null EXECs retried)`);
    } finally {
      clients.forEach((c) => c.disconnect());
    }
  }, 60_000);

  it('node-redis watch/multi: a null EXEC raises WatchError, an unchanged key executes', async () => {
    const a = createClient({ socket: { port: stack.proxy.port, host: '127.0.0.1' } });
    const b = createClient({ socket: { port: stack.proxy.port, host: '127.0.0.1' } });
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.set('nr', '1');
      await a.watch('nr');
      await b.set('nr', '2');
      await expect(a.multi().set('nr', '3').exec()).rejects.toThrow(/watch/i);
      await a.watch('nr');
      expect(await a.multi().set('nr', '4').get('nr').exec()).toEqual(['OK', '4']);
    } finally {
      await Promise.all([a.quit(), b.quit()]);
    }
  });

  it("redis-py's transaction() helper and pipeline with watch() (20 threads, exact total)", async () => {
    const script = `
import redis, threading, sys
port = int(sys.argv[1])
r = redis.Redis(port=port)
r.set('py', 0)
def bump(pipe):
    v = int(pipe.get('py'))
    pipe.multi()
    pipe.set('py', v + 1)
def worker():
    c = redis.Redis(port=port)
    for _ in range(5):
        c.transaction(bump, 'py')
    with c.pipeline() as pipe:
        while True:
            try:
                pipe.watch('py')
                v = int(pipe.get('py'))
                pipe.multi()
                pipe.set('py', v + 1)
                pipe.execute()
                break
            except redis.WatchError:
                continue
threads = [threading.Thread(target=worker) for _ in range(20)]
[t.start() for t in threads]
[t.join() for t in threads]
print(r.get('py').decode())
`;
    const { stdout } = await run('/usr/bin/python3', ['-c', script, String(stack.proxy.port)], { timeout: 60_000 });
    expect(stdout.trim()).toBe(String(20 * 6));
  }, 90_000);
});

describe('limits of the EVAL form', () => {
  it('a watched transaction whose command has more arguments than a script can pass is refused at EXEC, and nothing runs', async () => {
    const c = await RawClient.connect(stack.proxy.port);
    try {
      await c.call(['FLUSHALL']);
      const mset: string[] = ['MSET'];
      for (let i = 0; i < 3950; i++) mset.push(`k${i}`, 'v'); // 7901 arguments
      const replies = await c.call(['WATCH', 'w'], ['MULTI'], ['SET', 'before', '1'], mset, ['EXEC'], ['EXISTS', 'before', 'k0']);
      expect(replies.slice(0, 4).map(String)).toEqual(['+OK\r\n', '+OK\r\n', '+QUEUED\r\n', '+QUEUED\r\n']);
      expect(replies[4].toString()).toBe(
        '-ERR command 2 of the transaction has 7901 arguments, and a transaction with watched keys or binary arguments runs as one upstream script, whose commands take at most 7900; split the command (the transaction was not sent)\r\n',
      );
      expect(replies[5].toString()).toBe(':0\r\n');
      // 7900 arguments (the limit) run.
      const rpush = ['RPUSH', 'l', ...Array.from({ length: 7898 }, (_, i) => String(i))];
      const [, , , , exec] = await c.call(['WATCH', 'w'], ['MULTI'], ['SET', 'before', '1'], rpush, ['EXEC']);
      expect(exec.toString()).toBe('*2\r\n+OK\r\n:7898\r\n');
    } finally {
      c.close();
    }
  });
});
