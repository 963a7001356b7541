// Differential tests in RESP3: after HELLO 3, the scenarios of differential-cases.ts and resp3-cases.ts
// are sent to a direct redis-server (the oracle) and through the proxy; the replies must be
// byte-identical (or equal under the step's normalizer: only what Redis itself varies), one command at
// a time and as one pipelined burst. Then the HELLO handshake itself, and real RESP3 clients
// (node-redis 6 with its defaults) compared with the same client against the oracle.
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommandsAndSubcommands, platformRefusal, resolveCommand } from '../../src/commands/table.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import type { Arg } from './differential-cases.js';
import { comparable3, printable } from './resp3-compare.js';
import { allScenarios, run3, runnable } from './resp3-run.js';

/**
 * Forwarded commands no RESP3 scenario runs through the proxy, and why. Everything else the proxy
 * forwards is covered (checked below); these are checked on redis-server in resp3-reply-types.test.ts.
 */
const NOT_RUN_THROUGH_THE_PROXY: Record<string, string> = {
  'acl|load': 'the REST platform refuses it (it administers the server behind the database)',
  'acl|save': 'the REST platform refuses it (it administers the server behind the database)',
};

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

const ports = () => ({ oracle: stack.oracle.endpoint.port, proxy: stack.proxy.port });

describe('differential after HELLO 3: proxy vs direct redis-server', () => {
  it('covers every command the proxy forwards that the upstream runs', () => {
    const run = new Set<string>();
    for (const s of allScenarios)
      for (const step of runnable(s)) {
        const spec = resolveCommand(step.args);
        if (spec) run.add(spec.name);
      }
    // The oracle is redis-server 7.0.15: the table's commands newer than it (Redis 7.2-8.8) and the module
    // commands (JSON.*, SEARCH.*) cannot run on it.
    const version = (v: string) => v.split('.').reduce((n, x) => n * 1000 + Number(x), 0);
    const oracleHas = (s: { module?: string; since: string }) => s.module === undefined && version(s.since) <= version('7.0.15');
    const forwarded = allCommandsAndSubcommands().filter((s) => !s.subcommands && s.route === 'forward' && oracleHas(s));
    const missing = forwarded.filter((s) => !run.has(s.name) && !(s.name in NOT_RUN_THROUGH_THE_PROXY)).map((s) => s.name);
    expect(missing).toEqual([]);
    for (const name of Object.keys(NOT_RUN_THROUGH_THE_PROXY)) expect(platformRefusal(name.split('|')), name).toBeDefined();
    const covered = forwarded.filter((s) => run.has(s.name)).length;
    // 238: COMMAND GETKEYS and GETKEYSANDFLAGS are answered by the proxy since the table is Redis 8.8's.
    expect(covered).toBeGreaterThanOrEqual(238);
  });

  for (const scenario of allScenarios) {
    it(`${scenario.name} — one by one`, () => run3(ports(), scenario, false), 60_000);
    it(`${scenario.name} — pipelined burst`, () => run3(ports(), scenario, true), 60_000);
  }
});

describe('HELLO', () => {
  it('HELLO 3 answers the RESP3 map of Redis 7.0 (id masked) and the connection speaks RESP3; HELLO 2 and RESET go back to RESP2', async () => {
    const commands: Arg[][] = [
      ['HELLO', '3'],
      ['GET', 'nosuch'],
      ['HGETALL', 'nosuch'],
      ['HELLO'],
      ['HELLO', '3', 'SETNAME', 'r3'],
      ['CLIENT', 'GETNAME'],
      ['HELLO', '3', 'AUTH', 'default', 'anything'],
      ['HELLO', '3', 'FOO'],
      ['HELLO', '4'],
      ['ZADD', 'z', '1', 'a'],
      ['ZSCORE', 'z', 'a'],
      ['HELLO', '2'],
      ['ZSCORE', 'z', 'a'],
      ['GET', 'nosuch'],
      ['HELLO', '3'],
      ['SMEMBERS', 'nosuch'],
      ['RESET'],
      ['SMEMBERS', 'nosuch'],
      ['GET', 'nosuch'],
    ];
    for (const burst of [false, true]) {
      const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
      try {
        await Promise.all([oracle.call(['FLUSHALL']), proxy.call(['FLUSHALL'])]);
        let o: Buffer[];
        let p: Buffer[];
        if (burst) {
          oracle.write(encodeCommands(commands));
          proxy.write(encodeCommands(commands));
          [o, p] = await Promise.all([oracle.replies(commands.length), proxy.replies(commands.length)]);
        } else {
          [o, p] = [[], []];
          for (const c of commands) {
            const [[a], [b]] = await Promise.all([oracle.call(c), proxy.call(c)]);
            o.push(a);
            p.push(b);
          }
        }
        for (let i = 0; i < commands.length; i++)
          expect(comparable3(p[i], 'maskIntegers'), `${commands[i].join(' ')}: oracle ${printable(o[i])}`).toBe(
            comparable3(o[i], 'maskIntegers'),
          );
        expect(p[0].toString('latin1')).toMatch(
          /^%7\r\n\$6\r\nserver\r\n\$5\r\nredis\r\n\$7\r\nversion\r\n\$6\r\n7\.0\.15\r\n\$5\r\nproto\r\n:3\r\n\$2\r\nid\r\n:\d+\r\n\$4\r\nmode\r\n\$10\r\nstandalone\r\n\$4\r\nrole\r\n\$6\r\nmaster\r\n\$7\r\nmodules\r\n\*0\r\n$/,
        );
      } finally {
        oracle.close();
        proxy.close();
      }
    }
  });
});

describe('RESP3 clients', () => {
  /** The same node-redis 6 session (default options: RESP3) against a server; what the client returned. */
  async function nodeRedisSession(port: number): Promise<Record<string, unknown>> {
    const client = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
    const errors: unknown[] = [];
    client.on('error', (e) => errors.push(e));
    await client.connect();
    try {
      const out: Record<string, unknown> = {};
      await client.flushAll();
      out.hello = (await client.sendCommand(['CLIENT', 'INFO'])) as unknown;
      out.hello = String(out.hello).match(/resp=\d/)?.[0];
      out.set = await client.set('s', 'v');
      out.get = await client.get('s');
      out.getMissing = await client.get('nosuch');
      out.setGet = await client.set('s', 'w', { GET: true } as never);
      out.incr = await client.incr('n');
      out.incrByFloat = await client.incrByFloat('f', 1.5);
      out.mGet = await client.mGet(['s', 'nosuch']);
      out.hSet = await client.hSet('h', { a: '1', b: '2' });
      out.hGetAll = await client.hGetAll('h');
      out.hGetAllMissing = await client.hGetAll('nosuch');
      out.hRandFieldWithValues = await client.hRandFieldCountWithValues('h', -1).then((r) => (Array.isArray(r) ? r.length : r));
      out.sAdd = await client.sAdd('set', ['3', '1', '2']);
      out.sMembers = await client.sMembers('set');
      out.sIsMember = await client.sIsMember('set', '2');
      out.zAdd = await client.zAdd('z', [
        { score: 1, value: 'a' },
        { score: 2.5, value: 'b' },
      ]);
      out.zRangeWithScores = await client.zRangeWithScores('z', 0, -1);
      out.zScore = await client.zScore('z', 'b');
      out.zScoreMissing = await client.zScore('z', 'nosuch');
      out.zIncrBy = await client.zIncrBy('z', 0.5, 'a');
      out.zPopMin = await client.zPopMin('z');
      out.zMScore = await client.zmScore('z', ['b', 'nosuch']);
      out.lPush = await client.lPush('l', ['a', 'b']);
      out.lRange = await client.lRange('l', 0, -1);
      out.type = await client.type('l');
      out.xAdd = await client.xAdd('x', '1-1', { f: 'v' });
      out.xRange = await client.xRange('x', '-', '+');
      out.xRead = await client.xRead({ key: 'x', id: '0' });
      out.multi = await client
        .multi()
        .set('m', '1')
        .incr('m')
        .get('m')
        .hGetAll('h')
        .zRangeWithScores('z', 0, -1)
        .sMembers('set')
        .get('nosuch')
        .exec();
      out.multiError = await client
        .multi()
        .set('str', 'abc')
        .incr('str')
        .exec()
        .then(
          (r) => r.map((x) => (x instanceof Error ? `error: ${x.message}` : x)),
          (e: Error) => `rejected: ${e.message}`,
        );
      out.pipeline = await Promise.all([client.incr('p'), client.incr('p'), client.get('p')]);
      out.wrongType = await client.lPop('s').then(
        (r) => r,
        (e: Error) => `error: ${e.message}`,
      );
      out.errors = errors.map(String);
      return out;
    } finally {
      await client.close();
    }
  }

  it('node-redis 6 with its default options (RESP3): strings, hashes (HGETALL map), sets, sorted sets with scores, streams, multi/exec — as against redis-server', async () => {
    const viaProxy = await nodeRedisSession(stack.proxy.port);
    const direct = await nodeRedisSession(stack.oracle.endpoint.port);
    expect(direct.hello).toBe('resp=3');
    expect(direct.hGetAll).toEqual({ a: '1', b: '2' });
    expect(direct.zScore).toBe(2.5);
    expect(direct.errors).toEqual([]);
    expect(viaProxy).toEqual(direct);
  });

  it('ioredis 5 has no RESP3 option: with `protocol: 3` it still speaks RESP2 (no HELLO), and works', async () => {
    // `protocol` is not an ioredis 5 option (RedisOptions has none; ioredis 6 added it): it is ignored.
    const options = { port: stack.proxy.port, host: '127.0.0.1', lazyConnect: true, protocol: 3 };
    const redis = new IORedis(options);
    try {
      await redis.connect();
      expect(String(await redis.call('CLIENT', 'INFO'))).toContain(' resp=2\n');
      await redis.hset('io3:h', { a: '1' });
      expect(await redis.hgetall('io3:h')).toEqual({ a: '1' });
      expect(await redis.multi().set('io3:k', 'v').get('io3:k').exec()).toEqual([
        [null, 'OK'],
        [null, 'v'],
      ]);
    } finally {
      redis.disconnect();
    }
  });
});
