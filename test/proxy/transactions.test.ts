// MULTI / EXEC through the proxy (one /multi-exec call per EXEC), compared with a direct redis-server:
// every kind of error at queue time and at EXEC, EXEC arrays of mixed reply types in RESP2 and RESP3,
// the proxy's own commands inside a transaction, the designed differences (commands /multi-exec
// cannot carry), and atomicity under 100 concurrent transactions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import type { Arg } from './differential-cases.js';
import { comparable3, printable } from './resp3-compare.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

type Mode = 'exact' | 'maskIntegers' | 'clientInfo';

/** The connection's volatile CLIENT INFO fields (and the text length they change), masked inside any reply. */
function maskClientFields(reply: string): string {
  return reply
    .replace(/[$=]\d+\r\n(txt:)?id=/g, '$?\r\n$1id=')
    .replace(/\b(id|addr|laddr|fd|age|idle|qbuf|qbuf-free|argv-mem|multi-mem|rbs|rbp|obl|oll|omem|tot-mem)=[^ \n]*/g, '$1=*');
}

function comparable(reply: Buffer, mode: Mode): string {
  if (mode === 'clientInfo') return maskClientFields(reply.toString('latin1'));
  return comparable3(reply, mode);
}

interface Sides {
  oracle: RawClient;
  proxy: RawClient;
}

async function open(protocol: 2 | 3): Promise<Sides> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
  await Promise.all([oracle.call(['FLUSHALL']), proxy.call(['FLUSHALL'])]);
  if (protocol === 3) await Promise.all([oracle.call(['HELLO', '3']), proxy.call(['HELLO', '3'])]);
  return { oracle, proxy };
}

/** Sends the commands to both (one pipelined burst, or one at a time) and expects the same replies. */
async function expectSameAsRedis(
  commands: Arg[][],
  options: { protocol?: 2 | 3; burst?: boolean; mode?: Mode; closes?: boolean } = {},
): Promise<Buffer[]> {
  const { protocol = 2, burst = false, mode = 'exact' } = options;
  const sides = await open(protocol);
  try {
    let o: Buffer[];
    let p: Buffer[];
    if (burst) {
      const bytes = encodeCommands(commands);
      sides.oracle.write(bytes);
      sides.proxy.write(bytes);
      [o, p] = await Promise.all([sides.oracle.replies(commands.length), sides.proxy.replies(commands.length)]);
    } else {
      o = [];
      p = [];
      for (const c of commands) {
        const [[a], [b]] = await Promise.all([sides.oracle.call(c), sides.proxy.call(c)]);
        o.push(a);
        p.push(b);
      }
    }
    for (let i = 0; i < commands.length; i++) {
      const what = `RESP${protocol}${burst ? ' burst' : ''} #${i + 1} ${commands[i].map((a) => printable(a, 40)).join(' ')}`;
      expect(comparable(p[i], mode), `${what}\n  oracle: ${printable(o[i])}\n  proxy:  ${printable(p[i])}`).toBe(comparable(o[i], mode));
    }
    if (options.closes) {
      await Promise.all([sides.oracle.untilClosed(), sides.proxy.untilClosed()]);
    }
    return p;
  } finally {
    sides.oracle.close();
    sides.proxy.close();
  }
}

/** The same sequence one by one and as a burst, in RESP2 and RESP3. */
async function expectSameEverywhere(commands: Arg[][], options: { mode?: Mode; closes?: boolean } = {}): Promise<void> {
  for (const protocol of [2, 3] as const) {
    for (const burst of [false, true]) await expectSameAsRedis(commands, { ...options, protocol, burst });
  }
}

async function proxyReplies(commands: Arg[][], protocol: 2 | 3 = 2): Promise<string[]> {
  const client = await RawClient.connect(stack.proxy.port);
  try {
    await client.call(['FLUSHALL']);
    if (protocol === 3) await client.call(['HELLO', '3']);
    return (await client.call(...commands)).map((r) => r.toString('latin1'));
  } finally {
    client.close();
  }
}

describe('transaction errors, as Redis 7.0 answers them', () => {
  it('EXEC and DISCARD without MULTI; nested MULTI does not abort the transaction', () =>
    expectSameEverywhere([['EXEC'], ['DISCARD'], ['MULTI'], ['MULTI'], ['SET', 'a', '1'], ['EXEC'], ['GET', 'a']]));

  it('WATCH inside MULTI is refused and does not abort the transaction', () =>
    expectSameEverywhere([['MULTI'], ['WATCH', 'x'], ['SET', 'a', '1'], ['EXEC']]));

  it('an unknown command queued answers its error and EXEC answers EXECABORT', () =>
    expectSameEverywhere([['MULTI'], ['NOSUCH', 'x'], ['SET', 'a', '1'], ['EXEC'], ['GET', 'a']]));

  it('a wrong number of arguments, an unknown subcommand: EXECABORT', () =>
    expectSameEverywhere([
      ['MULTI'],
      ['GET'],
      ['SET', 'a', '1'],
      ['EXEC'],
      ['MULTI'],
      ['OBJECT', 'BOGUS', 'x'],
      ['EXEC'],
      ['MULTI'],
      ['CLIENT', 'NOSUCH'],
      ['EXEC'],
    ]));

  it('a command flagged no-multi (SAVE): Command not allowed inside a transaction, then EXECABORT', () =>
    expectSameEverywhere([['MULTI'], ['SAVE'], ['PING'], ['EXEC']]));

  it('DISCARD drops the queue; EXEC after it is EXEC without MULTI', () =>
    expectSameEverywhere([['MULTI'], ['SET', 'a', '1'], ['INCR', 'a'], ['DISCARD'], ['GET', 'a'], ['EXEC']]));

  it('EXEC with arguments discards the transaction; MULTI or DISCARD with arguments flag it', () =>
    expectSameEverywhere([
      ['MULTI'],
      ['SET', 'a', '1'],
      ['EXEC', 'x'],
      ['EXEC'],
      ['GET', 'a'],
      ['MULTI', 'x'],
      ['EXEC'],
      ['MULTI'],
      ['DISCARD', 'x'],
      ['SET', 'a', '2'],
      ['EXEC'],
      ['GET', 'a'],
    ]));

  it('an empty transaction answers an empty array', () => expectSameEverywhere([['MULTI'], ['EXEC'], ['MULTI'], ['DISCARD']]));

  it('RESET inside MULTI leaves the transaction', () =>
    expectSameEverywhere([['MULTI'], ['SET', 'a', '1'], ['RESET'], ['EXEC'], ['GET', 'a']]));

  it('QUIT inside MULTI answers OK and closes without running the queue', async () => {
    await expectSameAsRedis([['MULTI'], ['SET', 'a', '1'], ['QUIT']], { closes: true });
    await expectSameAsRedis([['GET', 'a']]);
  });

  it('per-item runtime errors (INCR on a string, WRONGTYPE) are items of the EXEC array; the other commands run', () =>
    expectSameEverywhere([
      ['SET', 's', 'abc'],
      ['MULTI'],
      ['INCR', 's'],
      ['LPUSH', 's', 'x'],
      ['SET', 't', '1'],
      ['HGET', 's', 'f'],
      ['INCRBYFLOAT', 't', 'x'],
      ['EXEC'],
      ['GET', 't'],
    ]));
});

describe('EXEC arrays of mixed reply types (RESP2 and RESP3)', () => {
  const MIXED: Arg[][] = [
    ['MULTI'],
    ['SET', 's', 'v'],
    ['SET', 's', 'w', 'GET'],
    ['SET', 'ok', 'OK'],
    ['GET', 'ok'],
    ['SET', 'nx', 'v', 'NX', 'GET'],
    ['GET', 's'],
    ['GET', 'nosuch'],
    ['SET', 'n', '10'],
    ['INCR', 'n'],
    ['INCRBYFLOAT', 'n', '1.5'],
    ['RPUSH', 'l', 'a', 'b', 'c'],
    ['LRANGE', 'l', '0', '-1'],
    ['LPOP', 'nosuch', '2'],
    ['LMPOP', '1', 'nosuch', 'LEFT'],
    ['LMPOP', '1', 'l', 'LEFT', 'COUNT', '2'],
    ['HSET', 'h', 'f', 'v', 'g', 'w'],
    ['HGETALL', 'h'],
    ['HGETALL', 'nosuch'],
    ['HMGET', 'h', 'f', 'nosuch'],
    ['HSET', 'h1', 'only', 'one'],
    ['HRANDFIELD', 'h1', '1', 'WITHVALUES'],
    ['SADD', 'set', '3', '1', '2'],
    ['SMEMBERS', 'set'],
    ['SISMEMBER', 'set', '2'],
    ['ZADD', 'z', '1', 'a', '2.5', 'b'],
    ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
    ['ZRANGE', 'z', '0', '-1'],
    ['ZSCORE', 'z', 'b'],
    ['ZSCORE', 'z', 'nosuch'],
    ['ZINCRBY', 'z', '0.1', 'a'],
    ['ZADD', 'z', 'INCR', '1', 'b'],
    ['ZMSCORE', 'z', 'a', 'nosuch'],
    ['ZPOPMIN', 'z'],
    ['ZPOPMAX', 'z', '5'],
    ['TYPE', 'l'],
    ['TYPE', 'nosuch'],
    ['PING'],
    ['PING', 'hello'],
    ['ECHO', 'echoed'],
    ['MGET', 's', 'nosuch', 'n'],
    ['XADD', 'x', '1-1', 'f', 'v'],
    ['XRANGE', 'x', '-', '+'],
    ['XREAD', 'STREAMS', 'x', '0'],
    ['XREAD', 'STREAMS', 'x', '$'],
    ['XINFO', 'STREAM', 'x'],
    ['EVAL', "return {1, 'two', {3, false}}", '0'],
    ['EXISTS', 's', 'nosuch'],
    ['OBJECT', 'ENCODING', 'n'],
    ['GEOADD', 'g', '13.361389', '38.115556', 'Palermo'],
    ['GEOPOS', 'g', 'Palermo', 'nosuch'],
    ['GEODIST', 'g', 'Palermo', 'Palermo', 'km'],
    ['SET', 'u', 'é€'],
    ['GETRANGE', 'u', '0', '0'],
    ['SET', 'bits', 'ab'],
    ['BITOP', 'NOT', 'inverted', 'bits'],
    ['GET', 'inverted'],
    ['EXPIRE', 's', '100'],
    ['TTL', 's'],
    ['OBJECT', 'HELP'],
    ['INCR', 'l'],
    ['DEL', 's', 'nosuch'],
    ['EXEC'],
  ];

  it('every reply type comes back exactly as Redis sends it', () => expectSameEverywhere(MIXED));

  it('the proxy’s own commands inside a transaction run at EXEC, in order', () =>
    expectSameEverywhere([
      ['MULTI'],
      ['CLIENT', 'SETNAME', 'txname'],
      ['CLIENT', 'GETNAME'],
      ['SELECT', '0'],
      ['SET', 'k', 'v'],
      ['INFO', 'keyspace'],
      ['CONFIG', 'GET', 'maxmemory-policy'],
      ['COMMAND', 'COUNT'],
      ['CLIENT', 'ID', 'x'],
      ['GET', 'k'],
      ['EXEC'],
      ['CLIENT', 'GETNAME'],
    ]));

  it('CLIENT INFO inside a transaction sees it in MULTI (flags=x, multi=n, cmd=exec)', () =>
    expectSameEverywhere([['MULTI'], ['PING'], ['CLIENT', 'INFO'], ['EXEC']], { mode: 'clientInfo' }));

  it('HELLO inside a transaction switches the protocol for the replies after it', async () => {
    await expectSameAsRedis(
      [
        ['MULTI'],
        ['HGETALL', 'nosuch'],
        ['HELLO', '3'],
        ['HGETALL', 'nosuch'],
        ['GET', 'nosuch'],
        ['ZADD', 'z', 'INCR', '1', 'm'],
        ['EXEC'],
        ['GET', 'x'],
      ],
      { mode: 'maskIntegers' },
    );
    await expectSameAsRedis([['MULTI'], ['SMEMBERS', 'nosuch'], ['HELLO', '2'], ['SMEMBERS', 'nosuch'], ['EXEC']], {
      protocol: 3,
      mode: 'maskIntegers',
    });
  });

  it('blocking commands inside MULTI do not block: each answers at once what is there (null when nothing), as in Redis', async () => {
    const commands: Arg[][] = [
      ['RPUSH', 'xlist', 'foo', 'bar'],
      ['ZADD', 'z', '1', 'a', '2', 'b'],
      ['XADD', 's', '1-1', 'f', 'v'],
      ['MULTI'],
      ['BRPOPLPUSH', 'xlist', 'target', '0'],
      ['BLMOVE', 'xlist', 'target', 'LEFT', 'RIGHT', '0'],
      ['BRPOPLPUSH', 'xlist', 'target', '0'],
      ['BLPOP', 'xlist', 'target', '0'],
      ['BRPOP', 'nolist', '0'],
      ['BZPOPMIN', 'z', '0'],
      ['BZPOPMAX', 'z', 'nozset', '1'],
      ['BZPOPMIN', 'z', '0'],
      ['BLMPOP', '0', '1', 'target', 'LEFT', 'COUNT', '5'],
      ['BZMPOP', '0', '1', 'z', 'MIN'],
      ['XREAD', 'BLOCK', '0', 'STREAMS', 's', '0'],
      ['XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'],
      ['BLPOP', 'xlist', 'notatimeout'],
      ['LRANGE', 'target', '0', '-1'],
      ['EXEC'],
    ];
    for (const protocol of [2, 3] as const) {
      await expectSameAsRedis([['FLUSHALL'], ...commands], { protocol });
      await expectSameAsRedis([['FLUSHALL'], ...commands], { protocol, burst: true });
    }
  });

  it('a transaction waits for the connection’s earlier commands and goes before its later ones', async () => {
    const commands: Arg[][] = [];
    for (let i = 0; i < 50; i++) commands.push(['RPUSH', 'order', `before-${i}`]);
    commands.push(['MULTI'], ['RPUSH', 'order', 'in-tx'], ['LLEN', 'order'], ['EXEC']);
    for (let i = 0; i < 50; i++) commands.push(['RPUSH', 'order', `after-${i}`]);
    commands.push(['MULTI'], ['LRANGE', 'order', '49', '51'], ['EXEC'], ['LLEN', 'order']);
    await expectSameAsRedis(commands, { burst: true });
  });
});

describe('designed differences', () => {
  it('commands /multi-exec cannot run answer at once and abort the transaction', async () => {
    const EXECABORT = '-EXECABORT Transaction discarded because of previous errors.\r\n';
    for (const protocol of [2, 3] as const) {
      expect(await proxyReplies([['MULTI'], ['SUBSCRIBE', 'ch'], ['EXEC'], ['PING']], protocol)).toEqual([
        '+OK\r\n',
        "-ERR 'subscribe' cannot be queued in a transaction by respgate: pub/sub and MONITOR streams are upstream event streams, which /multi-exec cannot open\r\n",
        EXECABORT,
        '+PONG\r\n',
      ]);
      expect(await proxyReplies([['MULTI'], ['CONFIG', 'REWRITE'], ['EXEC']], protocol)).toEqual([
        '+OK\r\n',
        "-ERR command 'config|rewrite' is not supported by respgate: the upstream's configuration is managed by the service; configure respgate with its flags\r\n",
        EXECABORT,
      ]);
    }
  });

  it('a transaction the upstream discards whole answers EXECABORT with the upstream’s reason, and nothing of it runs', async () => {
    expect(await proxyReplies([['MULTI'], ['SET', 'a', '1'], ['ACL', 'LOAD'], ['EXEC'], ['GET', 'a']])).toEqual([
      '+OK\r\n',
      '+QUEUED\r\n',
      '+QUEUED\r\n',
      "-EXECABORT Transaction discarded because of: ERR command 'acl|load' is not supported over REST: it administers the server behind the database\r\n",
      '$-1\r\n',
    ]);
  });
});

describe('script replies inside MULTI: a nested status OK (the JSON of /multi-exec base64-encodes it)', () => {
  it("EVAL returning redis.call('SET', …), alone or nested in a table, answers +OK as Redis does", () =>
    expectSameEverywhere([
      ['MULTI'],
      ['EVAL', "return redis.call('SET', KEYS[1], 'v')", '1', 'k'],
      ['EVAL', "return {redis.call('SET', KEYS[1], 'w'), redis.call('GET', KEYS[1]), 7}", '1', 'k'],
      ['EVAL', "return {ok='OK'}", '0'],
      ['EXEC'],
    ]));

  it('the one case left ambiguous: a bulk string "OK" nested in a script’s table comes back as a status reply', async () => {
    const replies = await proxyReplies([['MULTI'], ['EVAL', "return {'OK', 'ok'}", '0'], ['EXEC']]);
    // Redis answers *1 *2 $2 OK $2 ok: JSON does not say which of the two "OK" strings a script built.
    expect(replies[2]).toBe('*1\r\n*2\r\n+OK\r\n$2\r\nok\r\n');
  });
});

describe('binary arguments (the transaction travels as one EVAL in the path form)', () => {
  const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, b) => b));
  const PICKLE = Buffer.from([
    0x80, 0x04, 0x95, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x8c, 0x08, 0xff, 0xfe, 0x0d, 0x0a, 0x00, 0x2e,
  ]);

  it('every byte value in keys, fields and values, with every reply type, is byte-identical to Redis', () =>
    expectSameEverywhere([
      ['MULTI'],
      ['SET', ALL_BYTES, PICKLE],
      ['GET', ALL_BYTES],
      ['HSET', Buffer.from([0x72, 0x71, 0xff]), 'data', PICKLE, Buffer.from([0x00, 0xff, 0x0d, 0x0a]), 'v'],
      ['HGETALL', Buffer.from([0x72, 0x71, 0xff])],
      ['HGET', Buffer.from([0x72, 0x71, 0xff]), 'missing'],
      ['TYPE', ALL_BYTES],
      ['INCR', ALL_BYTES],
      ['RPUSH', 'l', PICKLE, ''],
      ['LPOP', 'nolist', '2'],
      ['ZADD', 'z', '1.5', PICKLE],
      ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
      ['SET', 'empty', ''],
      ['GET', 'empty'],
      ['EXEC'],
      ['GET', ALL_BYTES],
    ]));

  it('an empty transaction and a binary transaction after plain commands keep their order', () =>
    expectSameAsRedis([['SET', 'a', '1'], ['MULTI'], ['APPEND', 'a', Buffer.from([0xc3, 0x28])], ['GET', 'a'], ['EXEC'], ['GET', 'a']], {
      burst: true,
    }));
});

describe('atomicity', () => {
  it('100 concurrent transactions (separate connections, INCR loops) stay atomic and the totals are exact', async () => {
    const CONNECTIONS = 100;
    const ROUNDS = 3;
    const INCRS = 10;
    const setup = await RawClient.connect(stack.proxy.port);
    await setup.call(['DEL', 'counter', 'log']);
    const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => RawClient.connect(stack.proxy.port)));
    try {
      const results = await Promise.all(
        clients.map(async (c, n) => {
          const seen: number[][] = [];
          for (let round = 0; round < ROUNDS; round++) {
            const commands: Arg[][] = [['MULTI']];
            for (let i = 0; i < INCRS; i++) commands.push(['INCR', 'counter']);
            commands.push(['RPUSH', 'log', `${n}:${round}`], ['EXEC']);
            const replies = await c.call(...commands);
            const exec = replies[replies.length - 1].toString('latin1');
            const values = [...exec.matchAll(/^:(\d+)\r$/gm)].map((m) => Number(m[1]));
            expect(exec.startsWith(`*${INCRS + 1}\r\n`), exec).toBe(true);
            seen.push(values.slice(0, INCRS));
          }
          return seen;
        }),
      );
      const all: number[] = [];
      for (const perConnection of results) {
        for (const values of perConnection) {
          // Atomic: no other transaction's INCR lands between this transaction's INCRs.
          for (let i = 1; i < values.length; i++) expect(values[i]).toBe(values[i - 1] + 1);
          all.push(...values);
        }
      }
      all.sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: CONNECTIONS * ROUNDS * INCRS }, (_, i) => i + 1));
      const [total, logLength] = await setup.call(['GET', 'counter'], ['LLEN', 'log']);
      expect(total.toString()).toBe(`$${String(CONNECTIONS * ROUNDS * INCRS).length}\r\n${CONNECTIONS * ROUNDS * INCRS}\r\n`);
      expect(logLength.toString()).toBe(`:${CONNECTIONS * ROUNDS}\r\n`);
    } finally {
      for (const c of clients) c.close();
      setup.close();
    }
  }, 60_000);
});
