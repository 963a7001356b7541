// Scripts queued in MULTI (EVAL, EVALSHA, FCALL), compared byte for byte with a direct redis-server,
// on every path a transaction takes through the proxy: the JSON /multi-exec call, and the one upstream
// script that carries a transaction with binary arguments or watched keys (there the proxy runs the
// queued scripts' bodies itself, since Redis does not let a script call EVALSHA). Bull 4.x is the
// client that needs it: its scripts run as EVALSHA with msgpack (binary) arguments inside MULTI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectDataStore,
  RawClient,
  replayOnBoth,
  RESET_COMMANDS,
  startStack,
  startTestProxy,
  type DifferentialSide,
  type Stack,
} from '../helpers/stack.js';
import { sha1hex } from '../../src/upstream/script-bodies.js';
import type { Arg } from './differential-cases.js';
import { printable } from './differential-compare.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A msgpack-like argument (not valid UTF-8): the transaction goes as one upstream script. */
const PACKED = Buffer.from([0x82, 0xa4, 0x6e, 0x61, 0x6d, 0x65, 0xa3, 0x6a, 0x6f, 0x62, 0xa1, 0x6e, 0xcd, 0xff, 0xfe]);
const BINARY_KEY = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80]);

const ADD_JOB = `local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2] .. id, 'data', ARGV[1], 'name', ARGV[2])
redis.call('LPUSH', KEYS[3], id)
return id`;
const ECHO = 'return {KEYS[1], ARGV[1], #KEYS, #ARGV}';
const NIL = 'return nil';

async function open(protocol: 2 | 3, port: number): Promise<DifferentialSide> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(port)]);
  const side = { oracle, proxy };
  await replayOnBoth(side, RESET_COMMANDS, false);
  if (protocol === 3) await replayOnBoth(side, [['HELLO', '3']], false);
  return side;
}

/** Runs the commands on both sides (one at a time, then again as one burst) and expects identical bytes. */
async function expectSameAsRedis(commands: Arg[][], protocols: (2 | 3)[] = [2, 3], port = stack.proxy.port): Promise<Buffer[]> {
  let last: Buffer[] = [];
  for (const protocol of protocols) {
    for (const burst of [false, true]) {
      const side = await open(protocol, port);
      try {
        const [o, p] = await replayOnBoth(side, commands, burst);
        for (let i = 0; i < commands.length; i++) {
          const what = `RESP${protocol}${burst ? ' burst' : ''} #${i + 1} ${commands[i].map((a) => printable(a, 60)).join(' ')}`;
          expect(printable(p[i]), `${what}\n  oracle: ${printable(o[i])}\n  proxy:  ${printable(p[i])}`).toBe(printable(o[i]));
        }
        last = p;
      } finally {
        side.oracle.close();
        side.proxy.close();
      }
    }
  }
  return last;
}

describe('EVAL and EVALSHA in a transaction with binary arguments (run as one upstream script)', () => {
  it('EVAL and EVALSHA with msgpack arguments queue, run, write and answer as in Redis; the EVAL caches its script', async () => {
    const replies = await expectSameAsRedis([
      ['SCRIPT', 'LOAD', ECHO],
      ['MULTI'],
      ['EVAL', ADD_JOB, '3', 'q:id', 'q:', 'q:wait', PACKED, 'job'],
      ['EVALSHA', sha1hex(ECHO), '2', BINARY_KEY, 'k2', PACKED, 'a2'],
      ['EVALSHA', sha1hex(ADD_JOB), '3', 'q:id', 'q:', 'q:wait', PACKED, 'job2'],
      ['EVAL', NIL, '0'],
      ['SET', BINARY_KEY, PACKED],
      ['EXEC'],
      ['HGETALL', 'q:2'],
      ['LRANGE', 'q:wait', '0', '-1'],
      ['EVALSHA', sha1hex(ADD_JOB), '3', 'q:id', 'q:', 'q:wait', 'x', 'y'],
      ['SCRIPT', 'EXISTS', sha1hex(ADD_JOB), sha1hex(NIL)],
    ]);
    expect(replies[7].toString('latin1')).toMatch(/^\*5\r\n:1\r\n\*4\r\n/);
  });

  it('KEYS and ARGV are each script’s own: counts, empty tables, many keys', () =>
    expectSameAsRedis([
      ['MULTI'],
      ['EVAL', ECHO, '0', PACKED],
      ['EVAL', ECHO, '1', BINARY_KEY],
      ['EVAL', 'return {#KEYS, #ARGV, KEYS[3], ARGV[2]}', '3', 'a', 'b', 'c', 'd', PACKED],
      ['EVAL', 'return {#KEYS, #ARGV}', '0'],
      ['EVAL', `return #ARGV`, '0', ...Array.from({ length: 9000 }, (_, i) => String(i))],
      ['EXEC'],
    ]));

  it('replies of every type: status, nil, false, true, nested tables, doubles, error tables', () =>
    expectSameAsRedis([
      ['MULTI'],
      ['EVAL', "return redis.call('SET', KEYS[1], ARGV[1])", '1', BINARY_KEY, PACKED],
      ['EVAL', "return redis.call('GET', KEYS[1])", '1', BINARY_KEY],
      ['EVAL', "return redis.call('GET', 'nosuch')", '0'],
      ['EVAL', 'return false', '0'],
      ['EVAL', 'return true', '0'],
      ['EVAL', "return {1, 'two', {3, false, 'x'}, 4.7}", '0'],
      ['EVAL', "return {ok = 'FINE'}", '0'],
      ['EVAL', "return redis.error_reply('MYCODE custom')", '0'],
      ['EVAL', "return redis.pcall('INCR', KEYS[1])", '1', BINARY_KEY],
      ['EVAL', 'return 1, 2', '0'],
      // A script's RESP3 reply types are a known difference (resp3-cases.ts 'script-resp3-types'); the
      // RESP version a script sets must not outlive it.
      ['EVAL', 'redis.setresp(3); return 1', '0'],
      ['HGETALL', 'nosuch'],
      ['EVAL', "return redis.call('HGETALL', 'nosuch')", '0'],
      ['EXEC'],
    ]));
});

describe('the same scripts through /multi-exec (plain arguments: the upstream’s own MULTI runs them)', () => {
  it('EVAL, EVALSHA, NOSCRIPT and script errors in their slots', () =>
    expectSameAsRedis([
      ['SET', 'str', 'abc'],
      ['SCRIPT', 'LOAD', ECHO],
      ['MULTI'],
      ['EVAL', ADD_JOB, '3', 'q:id', 'q:', 'q:wait', 'data', 'job'],
      ['EVALSHA', sha1hex(ECHO), '1', 'k', 'a'],
      ['EVALSHA', 'ffffffffffffffffffffffffffffffffffffffff', '0'],
      ['EVAL', "return redis.call('INCR', KEYS[1])", '1', 'str'],
      ['EVAL', 'return 1', 'x'],
      ['EVAL', NIL, '0'],
      ['EXEC'],
      ['EVALSHA', sha1hex(ADD_JOB), '3', 'q:id', 'q:', 'q:wait', 'x', 'y'],
    ]));
});

describe('blocking commands in a binary transaction (their non-blocking form is a script of the proxy)', () => {
  it('BLPOP, BRPOP, BZPOPMIN answer at once what is there, as in Redis', () =>
    expectSameAsRedis([
      ['RPUSH', 'xlist', PACKED, 'bar'],
      ['ZADD', 'z', '1', 'a'],
      ['MULTI'],
      ['BLPOP', 'xlist', 'target', '0'],
      ['BRPOP', 'nolist', '0'],
      ['BZPOPMIN', 'z', '0'],
      ['BZPOPMIN', 'z', '0'],
      ['BRPOPLPUSH', 'xlist', 'target', '0'],
      ['SET', BINARY_KEY, PACKED],
      ['EXEC'],
    ]));
});

describe('script errors in a slot, worded as Redis words them', () => {
  it('redis.call errors, Lua runtime errors, compile errors, globals: each in its slot; the others run', () =>
    expectSameAsRedis([
      ['SET', 'str', 'abc'],
      ['MULTI'],
      ['EVAL', "return redis.call('INCR', KEYS[1])", '1', 'str'],
      ['SET', 'before', PACKED],
      ['EVAL', "redis.call('SET', KEYS[1], 'kept')\nlocal x = 1\nreturn redis.call('LPUSH', KEYS[2], 'v')", '2', 'written', 'str'],
      ['EVAL', "error('boom')", '0'],
      ['EVAL', "error({err = 'MYERR table error'})", '0'],
      ['EVAL', '\n\nreturn nosuchglobal', '0'],
      ['EVAL', 'newglobal = 1', '0'],
      ['EVAL', 'return (', '0'],
      ['EVAL', "return redis.call('NOSUCHCOMMAND')", '0'],
      ['EVAL', "return redis.call('EVAL', 'return 1', '0')", '0'],
      ['EVAL', 'local t = nil; return t.x', '0'],
      ['EVAL', "#!lua flags=no-writes\nreturn redis.call('NOSUCH')", '0'],
      ['SET', 'after', PACKED],
      ['EXEC'],
      ['MGET', 'before', 'written', 'after'],
    ]));

  it('numkeys errors answer in their slot at EXEC', () =>
    expectSameAsRedis([
      ['MULTI'],
      ['EVAL', 'return 1', 'x', PACKED],
      ['EVAL', 'return 1', '3', 'a'],
      ['EVAL', 'return 1', '-1'],
      ['EVAL', 'return 1', '01'],
      ['EVAL', 'return 1', '99999999999999999999'],
      ['EVALSHA', '0123456789abcdef0123456789abcdef01234567', 'x'],
      ['EVAL', 'return 1', '0'],
      ['EXEC'],
    ]));
});

describe('read-only scripts (EVAL_RO, EVALSHA_RO, no-writes) and shebangs, in a binary transaction', () => {
  const WRITER = "local x = 1\nreturn redis.call('SET', KEYS[1], 'v')";
  it('writes are refused with Redis’ error at the caller’s line; reads and their errors as in Redis', () =>
    expectSameAsRedis([
      ['SET', 'str', 'abc'],
      ['SCRIPT', 'LOAD', WRITER],
      ['MULTI'],
      ['EVAL_RO', WRITER, '1', 'k', PACKED],
      ['EVAL_RO', "return redis.call('SET', KEYS[1], 'v')", '1', 'k'],
      ['EVAL_RO', "return redis.pcall('SET', KEYS[1], 'v')", '1', 'k'],
      ['EVAL_RO', "\nreturn redis.call('INCR', KEYS[1])", '1', 'str'],
      ['EVAL_RO', "return redis.call('PUBLISH', 'c', 'm')", '0'],
      ['EVAL_RO', "return redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM')", '1', 's'],
      ['EVAL_RO', "return redis.call('GET', KEYS[1])", '1', 'str'],
      ['EVAL_RO', "\n\nreturn redis.call('LPOP', KEYS[1])", '1', 'str'],
      [
        'EVAL_RO',
        "local ok, e = pcall(redis.call, 'SET', KEYS[1], 'v')\nreturn {tostring(ok), e.err, redis.call('GET', KEYS[1])}",
        '1',
        'str',
      ],
      ['EVALSHA_RO', sha1hex(WRITER), '1', 'k'],
      ['EVALSHA', sha1hex(WRITER), '1', 'k'],
      ['EXEC'],
      ['EXISTS', 's'],
    ]));

  it('shebang flags and errors: no-writes, *_RO of a script that may write, unknown engine, flag or option', () =>
    expectSameAsRedis([
      ['MULTI'],
      ['EVAL', "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'v')", '1', 'k', PACKED],
      ['EVAL', "#!lua flags=no-writes,allow-oom\nreturn redis.call('GET', KEYS[1])", '1', 'k'],
      ['EVAL_RO', '#!lua\nreturn 1', '0'],
      ['EVAL_RO', '#!lua flags=no-writes\nreturn 2', '0'],
      ['EVAL', '#!lua flags=bogus\nreturn 1', '0'],
      ['EVAL', '#!luax\nreturn 1', '0'],
      ['EVAL', '#!lua foo=bar\nreturn 1', '0'],
      ['EVALSHA', sha1hex('#!lua flags=bogus\nreturn 1'), '0'],
      ['EVAL', "#!lua\nreturn redis.call('SET', KEYS[1], 'w')", '1', 'k'],
      ['EXEC'],
    ]));
});

describe('NOSCRIPT in a slot', () => {
  const UNKNOWN = 'ffffffffffffffffffffffffffffffffffffffff';

  it('an EVALSHA the upstream lacks answers NOSCRIPT in its slot and the rest runs; an EVAL before it in the same transaction loads it', () =>
    expectSameAsRedis([
      ['MULTI'],
      ['EVALSHA', UNKNOWN, '0'],
      ['EVALSHA', 'short', '0', PACKED],
      ['EVALSHA', sha1hex(ECHO), '1', 'k', PACKED],
      ['EVAL', ECHO, '1', 'k', PACKED],
      ['EVALSHA', sha1hex(ECHO).toUpperCase(), '1', 'k2', PACKED],
      ['SET', 'k', PACKED],
      ['EXEC'],
      ['GET', 'k'],
    ]));

  it('a script the proxy knew but the upstream flushed answers NOSCRIPT, as Redis does', () =>
    expectSameAsRedis([['EVAL', ECHO, '0'], ['SCRIPT', 'FLUSH'], ['MULTI'], ['EVALSHA', sha1hex(ECHO), '0', PACKED], ['EXEC']]));

  it('a script loaded on the upstream around the proxy (body never seen) refuses the whole transaction, and nothing runs', async () => {
    const body = `return 'loaded around the proxy ${Date.now()}'`;
    const store = await connectDataStore(stack);
    const client = await RawClient.connect(stack.proxy.port);
    try {
      expect(await store.script('LOAD', body)).toBe(sha1hex(body));
      const replies = await client.call(
        ['DEL', 'side'],
        ['MULTI'],
        ['SET', 'side', PACKED],
        ['EVALSHA', sha1hex(body), '0'],
        ['EXEC'],
        ['EXISTS', 'side'],
      );
      expect(replies.slice(1, 4).map(String)).toEqual(['+OK\r\n', '+QUEUED\r\n', '+QUEUED\r\n']);
      expect(replies[4].toString()).toBe(
        `-EXECABORT Transaction discarded because of: ERR script ${sha1hex(body)} is loaded in the upstream, but respgate has not seen its body (it was loaded by another client or before respgate started), and this transaction runs as one upstream script (it has watched keys or binary arguments), which cannot call EVALSHA: send the script once through respgate with EVAL or SCRIPT LOAD\r\n`,
      );
      expect(replies[5].toString()).toBe(':0\r\n');
      // The plain form of the same transaction runs it (the upstream's own MULTI calls EVALSHA).
      const plain = await client.call(['MULTI'], ['SET', 'side', 'v'], ['EVALSHA', sha1hex(body), '0'], ['EXEC']);
      expect(plain[3].toString()).toBe(`*2\r\n+OK\r\n$${body.length - 9}\r\n${body.slice(8, -1)}\r\n`);
    } finally {
      client.close();
      store.disconnect();
    }
  });
});

describe('scripts after WATCH', () => {
  it('an unchanged watched key: the queued scripts run; EVALSHA of a loaded script too', () =>
    expectSameAsRedis([
      ['SET', 'w', '1'],
      ['SCRIPT', 'LOAD', ADD_JOB],
      ['WATCH', 'w'],
      ['MULTI'],
      ['EVALSHA', sha1hex(ADD_JOB), '3', 'q:id', 'q:', 'q:wait', 'plain', 'job'],
      ['EVAL', "return redis.call('INCR', KEYS[1])", '1', 'w'],
      ['EVAL', "return redis.call('HGET', KEYS[1], 'nosuch')", '1', 'q:1'],
      ['EXEC'],
      ['GET', 'w'],
    ]));

  it('a watched key changed by another client: null EXEC, no script ran', async () => {
    const run = async (port: number): Promise<string[]> => {
      const [c, other] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      try {
        await c.call(...RESET_COMMANDS);
        const first = await c.call(['SET', 'w', '1'], ['WATCH', 'w']);
        await other.call(['SET', 'w', '2']);
        const rest = await c.call(['MULTI'], ['EVAL', "return redis.call('SET', KEYS[1], 'ran')", '1', 'x'], ['EXEC'], ['EXISTS', 'x']);
        return [...first, ...rest].map((r) => r.toString('latin1'));
      } finally {
        c.close();
        other.close();
      }
    };
    expect(await run(stack.proxy.port)).toEqual(await run(stack.oracle.endpoint.port));
  });
});

describe('FCALL inside MULTI', () => {
  const LIBRARY = `#!lua name=txlib
redis.register_function('bump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
redis.register_function{function_name = 'peek', callback = function(keys) return redis.call('GET', keys[1]) end, flags = {'no-writes'}}
redis.register_function{function_name = 'peekw', callback = function(keys) return redis.call('SET', keys[1], 'w') end, flags = {'no-writes'}}
local function fail() error('bad') end
redis.register_function('boom', function() fail() end)
redis.register_function('echo', function(keys, args) return {keys[1], keys[2], args[1], args[2], #keys, #args} end)`;

  it('plain arguments: FCALL and FCALL_RO run in the transaction (the upstream’s own MULTI)', () =>
    expectSameAsRedis([
      ['FUNCTION', 'LOAD', LIBRARY],
      ['MULTI'],
      ['FCALL', 'bump', '1', 'n', '5'],
      ['FCALL_RO', 'peek', '1', 'n'],
      ['FCALL', 'nosuch', '0'],
      ['FCALL', 'bump', '1', 'str'],
      ['EVAL', "return redis.call('GET', KEYS[1])", '1', 'n'],
      ['EXEC'],
    ]));

  const CALLS: Arg[][] = [
    ['FCALL', 'bump', '1', 'n', '5'],
    ['FCALL', 'BUMP', '1', BINARY_KEY, '2'],
    ['FCALL_RO', 'peek', '1', 'n'],
    ['FCALL_RO', 'bump', '1', 'n', '1'],
    ['FCALL', 'nosuch', 'x'],
    ['FCALL', 'bump', 'x'],
    ['FCALL', 'bump', '-1'],
    ['FCALL', 'bump', '3', 'n'],
    ['FCALL', 'bump', '1', 'str', '1'],
    ['FCALL', 'boom', '0', PACKED],
    ['FCALL', 'echo', '2', BINARY_KEY, 'k', PACKED, 'a'],
    ['FCALL', 'peekw', '1', 'n'],
    ['FCALL_RO', 'peekw', '1', 'n'],
  ];

  it('with binary arguments, FCALL and FCALL_RO run from their library’s code with Redis’ errors', () =>
    expectSameAsRedis([
      ['FUNCTION', 'LOAD', LIBRARY],
      ['SET', 'str', 'abc'],
      ['MULTI'],
      ...CALLS,
      ['SET', 'x', PACKED],
      ['EXEC'],
      ['MGET', 'n', BINARY_KEY, 'x'],
    ]));

  it('after WATCH, the same', () =>
    expectSameAsRedis([['FUNCTION', 'LOAD', LIBRARY], ['SET', 'str', 'abc'], ['WATCH', 'n'], ['MULTI'], ...CALLS, ['EXEC'], ['GET', 'n']]));

  it('FUNCTION and SCRIPT commands in such a transaction refuse it whole (a script cannot call them), and nothing runs', async () => {
    const client = await RawClient.connect(stack.proxy.port);
    try {
      await client.call(...RESET_COMMANDS);
      const refusal = (name: string) =>
        `-EXECABORT Transaction discarded because of: ERR command 2 of the transaction ('${name}') cannot run in it: a transaction with watched keys or binary arguments runs as one upstream script, and Redis does not let a script call '${name}' (the transaction was not sent)\r\n`;
      const binary = await client.call(['MULTI'], ['SET', 'x', PACKED], ['FUNCTION', 'LOAD', LIBRARY], ['EXEC'], ['EXISTS', 'x']);
      expect(binary[3].toString()).toBe(refusal('function|load'));
      expect(binary[4].toString()).toBe(':0\r\n');
      const watched = await client.call(
        ['WATCH', 'n'],
        ['MULTI'],
        ['SET', 'x', '1'],
        ['SCRIPT', 'LOAD', 'return 1'],
        ['EXEC'],
        ['EXISTS', 'x'],
      );
      expect(watched[4].toString()).toBe(refusal('script|load'));
      expect(watched[5].toString()).toBe(':0\r\n');
    } finally {
      client.close();
    }
  });
});

describe('an upstream that answers JSON (--upstream-format json): the preflight and the script transaction read from JSON', () => {
  it('EVAL, EVALSHA, NOSCRIPT and FCALL with binary arguments, byte for byte', async () => {
    const proxy = await startTestProxy(stack.platform, { upstreamFormat: 'json' });
    try {
      await expectSameAsRedis(
        [
          [
            'FUNCTION',
            'LOAD',
            "#!lua name=jlib\nredis.register_function('jbump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)",
          ],
          ['SCRIPT', 'LOAD', ECHO],
          ['MULTI'],
          ['EVAL', ADD_JOB, '3', 'q:id', 'q:', 'q:wait', PACKED, 'job'],
          ['EVALSHA', sha1hex(ECHO), '1', BINARY_KEY, PACKED],
          ['EVALSHA', 'ffffffffffffffffffffffffffffffffffffffff', '0'],
          ['FCALL', 'jbump', '1', 'n', '3'],
          ['EXEC'],
        ],
        [2, 3],
        proxy.port,
      );
    } finally {
      await proxy.stop();
    }
  });
});
