// Real clients through the proxy: redis-cli (one-shot, --pipe, --scan, --bigkeys, commands on stdin),
// redis-benchmark (default tests, pipelined), ioredis 5 (ready check, auto-pipelining), node-redis 6
// (RESP 2, and its RESP3 default) and redis-py (Debian's python3-redis); each of the three also with a
// database number in its URL (redis://…/3).
// Where the output depends on the server, the same client run against the oracle redis-server is
// the expectation.
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { allCommands } from '../../src/commands/table.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import { pythonWithRedis, run } from './clients-run.js';

let stack: Stack;
let port: number;
let oraclePort: number;

beforeAll(async () => {
  // 16 databases, as the dev stack and redis-server have (redis://…/3 below).
  stack = await startStack({}, { databases: 16 });
  port = stack.proxy.port;
  oraclePort = stack.oracle.endpoint.port;
});

afterAll(async () => {
  await stack?.stop();
});

const cli = (p: number, args: string[], input?: string | Buffer, timeoutMs?: number) =>
  run('redis-cli', ['-h', '127.0.0.1', '-p', String(p), ...args], { input, timeoutMs });

async function flushBoth(): Promise<void> {
  for (const p of [port, oraclePort]) expect((await cli(p, ['FLUSHALL'])).stdout).toBe('OK\n');
}

describe('redis-cli', () => {
  it('one-shot commands print what they print against redis-server', async () => {
    await flushBoth();
    const commands: string[][] = [
      ['SET', 'cli:a', 'hello'],
      ['GET', 'cli:a'],
      ['INCR', 'cli:n'],
      ['RPUSH', 'cli:l', 'x', 'y z', ''],
      ['LRANGE', 'cli:l', '0', '-1'],
      ['HSET', 'cli:h', 'f', 'v'],
      ['HGETALL', 'cli:h'],
      ['GET', 'cli:missing'],
      ['LPOP', 'cli:a'],
      ['NOSUCH', 'x'],
      ['GET'],
      ['PING'],
      ['ECHO', 'a\tb'],
      ['EXISTS', 'cli:a', 'cli:l', 'cli:none'],
      ['CONFIG', 'GET', 'maxmemory-policy'],
      // The interactive REPL asks COMMAND DOCS for its hints: the proxy answers it as Redis 8.8 (below and
      // test/commands/redis8-fixtures.test.ts); COMMAND INFO of SET is the same in 7.0.15 and 8.8.
      ['COMMAND', 'INFO', 'set'],
      ['COMMAND', 'GETKEYS', 'SET', 'a', 'b'],
    ];
    for (const args of commands) {
      for (const mode of [[], ['--no-raw']]) {
        const [viaProxy, direct] = await Promise.all([cli(port, [...mode, ...args]), cli(oraclePort, [...mode, ...args])]);
        expect({ args, mode, out: viaProxy.stdout, err: viaProxy.stderr, code: viaProxy.code }).toEqual({
          args,
          mode,
          out: direct.stdout,
          err: direct.stderr,
          code: direct.code,
        });
      }
    }
  });

  it('COMMAND DOCS and COMMAND COUNT, which the REPL reads, print the Redis 8.8 table', async () => {
    const docs = await cli(port, ['COMMAND', 'DOCS', 'hgetdel']);
    expect(docs.code).toBe(0);
    expect(docs.stdout).toContain('Returns the value of a field and deletes it from the hash.');
    expect(docs.stdout).toContain('display_text');
    const count = await cli(port, ['COMMAND', 'COUNT']);
    expect(count.stdout.trim()).toBe(String(allCommands().length));
  });

  it('commands on stdin (the REPL without a terminal) print what they print against redis-server', async () => {
    await flushBoth();
    const script = [
      'SET cli:s 1',
      'INCRBY cli:s 41',
      'GET cli:s',
      'set "with space" "quoted \\x41"',
      'get "with space"',
      'HSET cli:hh a 1 b 2',
      'HGETALL cli:hh',
      'TYPE cli:hh',
      'NOSUCH arg',
      'SELECT 0',
      'SELECT 1',
      'PING',
      'DBSIZE',
      'CLIENT SETNAME tester',
      'CLIENT GETNAME',
      'GET cli:none',
      '',
    ].join('\n');
    const [viaProxy, direct] = await Promise.all([cli(port, [], script), cli(oraclePort, [], script)]);
    expect(direct.stdout).toContain('42');
    expect(viaProxy.stdout).toBe(direct.stdout);
    expect(viaProxy.stderr).toBe(direct.stderr);
    expect(viaProxy.code).toBe(0);
  });

  it('--pipe inserts 100 000 commands with no errors', async () => {
    await flushBoth();
    const parts: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const key = `key:${i}`;
      const value = `value:${i}`;
      parts.push(`*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$${value.length}\r\n${value}\r\n`);
    }
    const result = await cli(port, ['--pipe'], parts.join(''), 120_000);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('errors: 0, replies: 100000');
    expect(result.code).toBe(0);
    expect((await cli(port, ['DBSIZE'])).stdout).toBe('100000\n');
    expect((await cli(port, ['GET', 'key:99999'])).stdout).toBe('value:99999\n');
  }, 180_000);

  it('--pipe reports the errors of failing commands', async () => {
    const input =
      '*3\r\n$3\r\nSET\r\n$6\r\npipe:a\r\n$1\r\n1\r\n' +
      '*2\r\n$5\r\nLPUSH\r\n$6\r\npipe:a\r\n' +
      '*3\r\n$5\r\nLPUSH\r\n$6\r\npipe:a\r\n$1\r\nx\r\n';
    const [viaProxy, direct] = await Promise.all([cli(port, ['--pipe'], input), cli(oraclePort, ['--pipe'], input)]);
    expect(direct.stdout).toContain('errors: 2, replies: 3');
    expect(viaProxy.stdout).toBe(direct.stdout);
  });

  it('--scan --pattern lists exactly the matching keys', async () => {
    // The 100 000 keys of the --pipe test; one scan of the whole keyspace (SCAN with COUNT 10).
    const result = await cli(port, ['--scan', '--pattern', 'key:99*'], undefined, 60_000);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const found = result.stdout.trim().split('\n').sort();
    const expected: string[] = [];
    for (let i = 0; i < 100_000; i++) if (String(i).startsWith('99')) expected.push(`key:${i}`);
    expect(found.length).toBe(1111); // 99, 990-999, 9900-9999, 99000-99999: each exactly once
    expect(found).toEqual(expected.sort());
  }, 60_000);

  it('--bigkeys gives the summary redis-server gives', async () => {
    await flushBoth();
    // Distinct sizes, so "biggest" does not depend on the scan order.
    const setup = [
      'SET s:small a',
      'SET s:big aaaaaaaaaaaaaaaaaaaa',
      'RPUSH l:one a b c',
      'RPUSH l:two a',
      'HSET h:one a 1 b 2',
      'SADD st:one a b c d',
      'ZADD z:one 1 a 2 b 3 c 4 d 5 e',
      'XADD x:one * f v',
      'XADD x:one * f v',
      '',
    ].join('\n');
    for (const p of [port, oraclePort]) await cli(p, [], setup);
    const [viaProxy, direct] = await Promise.all([cli(port, ['--bigkeys']), cli(oraclePort, ['--bigkeys'])]);
    const summary = (s: string) => s.slice(s.indexOf('-------- summary -------'));
    expect(direct.stdout).toContain('Sampled 8 keys in the keyspace!');
    expect(summary(viaProxy.stdout)).toBe(summary(direct.stdout));
    expect(viaProxy.code).toBe(0);
  });
});

describe('redis-benchmark', () => {
  /** `NAME: 1234.56 requests per second` lines of a -q run (progress lines end in \r). */
  function rates(output: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const line of output.split(/[\r\n]+/)) {
      const m = /^\s*(.+?): ([\d.]+) requests per second/.exec(line);
      if (m) out.set(m[1], Number(m[2]));
    }
    return out;
  }

  it('the default tests run with no errors and each reports a rate', async () => {
    const [viaProxy, direct] = await Promise.all([
      run('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), '-q', '-n', '2000', '-c', '10'], { timeoutMs: 120_000 }),
      run('redis-benchmark', ['-h', '127.0.0.1', '-p', String(oraclePort), '-q', '-n', '200', '-c', '2'], { timeoutMs: 120_000 }),
    ]);
    const all = viaProxy.stdout + viaProxy.stderr;
    expect(all).not.toMatch(/error|WARNING|Could not/i);
    expect(viaProxy.code).toBe(0);
    const got = rates(viaProxy.stdout);
    const want = rates(direct.stdout);
    // redis-benchmark 7.0's default set: PING_INLINE, PING_MBULK, SET, GET, INCR, LPUSH, RPUSH, LPOP,
    // RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN, LRANGE_100..600, MSET: none is blocking or unsupported.
    expect([...want.keys()]).toContain('PING_INLINE');
    expect([...want.keys()]).toContain('MSET (10 keys)');
    expect([...got.keys()]).toEqual([...want.keys()]);
    for (const [name, rate] of got) expect({ name, positive: rate > 0 }).toEqual({ name, positive: true });
  }, 150_000);

  it('-P 16 (pipelined) runs with no errors', async () => {
    const result = await run(
      'redis-benchmark',
      ['-h', '127.0.0.1', '-p', String(port), '-q', '-n', '20000', '-c', '10', '-P', '16', '-t', 'set,get,incr,lpush,lrange_100,mset'],
      { timeoutMs: 120_000 },
    );
    expect(result.stdout + result.stderr).not.toMatch(/error|WARNING/i);
    const got = rates(result.stdout);
    expect([...got.keys()]).toEqual([
      'SET',
      'GET',
      'INCR',
      'LPUSH',
      'LPUSH (needed to benchmark LRANGE)',
      'LRANGE_100 (first 100 elements)',
      'MSET (10 keys)',
    ]);
    for (const rate of got.values()) expect(rate).toBeGreaterThan(0);
  }, 150_000);

  it('-r (random keys) leaves the keys redis-benchmark wrote', async () => {
    await flushBoth();
    const result = await run(
      'redis-benchmark',
      ['-h', '127.0.0.1', '-p', String(port), '-q', '-n', '3000', '-c', '5', '-r', '100', '-t', 'set'],
      { timeoutMs: 60_000 },
    );
    expect(result.stdout).toMatch(/SET: [\d.]+ requests per second/);
    const keys = (await cli(port, ['--scan', '--pattern', 'key:*'])).stdout.trim().split('\n');
    expect(keys.length).toBeGreaterThan(50);
    expect(keys.every((k) => /^key:\d{12}$/.test(k))).toBe(true);
  }, 90_000);
});

describe('ioredis 5', () => {
  it('connects (INFO ready check), runs commands, pipelines and binary values', async () => {
    const redis = new IORedis({ port, host: '127.0.0.1', connectionName: 'io-basic', maxRetriesPerRequest: 1, retryStrategy: () => null });
    const errors: Error[] = [];
    redis.on('error', (e: Error) => errors.push(e));
    try {
      await new Promise<void>((resolve, reject) => {
        redis.once('ready', () => resolve());
        redis.once('end', () => reject(new Error(`ioredis never became ready: ${errors.map(String).join('; ')}`)));
      });
      // The ready check was the connection's last command before ours.
      const admin = await RawClient.connect(port);
      const list = (await admin.call(['CLIENT', 'LIST']))[0].toString();
      admin.close();
      expect(list).toMatch(/name=io-basic .*cmd=info /);

      expect(await redis.set('io:a', 'v')).toBe('OK');
      expect(await redis.get('io:a')).toBe('v');
      expect(await redis.get('io:missing')).toBeNull();
      await redis.del('io:h', 'io:l', 'io:n');
      expect(await redis.hset('io:h', { f1: 'a', f2: 'b' })).toBe(2);
      expect(await redis.hgetall('io:h')).toEqual({ f1: 'a', f2: 'b' });
      expect(await redis.rpush('io:l', 'x', 'y')).toBe(2);
      expect(await redis.lrange('io:l', 0, -1)).toEqual(['x', 'y']);
      await expect(redis.lpop('io:a')).rejects.toThrow(/^WRONGTYPE Operation against a key holding the wrong kind of value$/);
      await expect(redis.call('NOSUCH', 'x')).rejects.toThrow("ERR unknown command 'NOSUCH', with args beginning with: 'x' ");

      const key = Buffer.from([0x00, 0xff, 0x80, 0x0d, 0x0a]);
      const value = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      expect(await redis.set(key, value)).toBe('OK');
      expect((await redis.getBuffer(key))!.equals(value)).toBe(true);

      const results = await redis.pipeline().set('io:p', '1').incr('io:p').get('io:p').lpush('io:p', 'x').incr('io:n').exec();
      expect(results!.map(([err, v]) => (err ? `error: ${err.message}` : v))).toEqual([
        'OK',
        2,
        '2',
        'error: WRONGTYPE Operation against a key holding the wrong kind of value',
        1,
      ]);
      expect(errors).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('enableAutoPipelining: one tick of commands from many callers, each gets its own result', async () => {
    const redis = new IORedis({ port, host: '127.0.0.1', enableAutoPipelining: true, retryStrategy: () => null });
    try {
      await redis.del('io:auto');
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 2000; i++) {
        calls.push(i % 4 === 3 ? redis.echo(`e${i}`) : redis.incr('io:auto'));
      }
      const results = await Promise.all(calls);
      let n = 0;
      results.forEach((r, i) => expect(r).toBe(i % 4 === 3 ? `e${i}` : ++n));
      expect(await redis.get('io:auto')).toBe(String(n));

      // Several ticks interleaved with awaits.
      const keys = Array.from({ length: 50 }, (_, i) => `io:auto:${i}`);
      await Promise.all(keys.map((k, i) => redis.set(k, String(i))));
      expect(await Promise.all(keys.map((k) => redis.get(k)))).toEqual(keys.map((_, i) => String(i)));
      expect(await redis.mget(...keys)).toEqual(keys.map((_, i) => String(i)));
    } finally {
      redis.disconnect();
    }
  });
});

describe('node-redis 6', () => {
  it('with RESP: 2 it connects and runs commands, including auto-pipelined ones', async () => {
    const client = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false }, RESP: 2, name: 'nr-basic' });
    const errors: unknown[] = [];
    client.on('error', (e) => errors.push(e));
    await client.connect();
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.set('nr:a', 'x')).toBe('OK');
      expect(await client.get('nr:a')).toBe('x');
      await client.del(['nr:h', 'nr:c']);
      expect(await client.hSet('nr:h', { a: '1', b: '2' })).toBe(2);
      expect(await client.hGetAll('nr:h')).toEqual({ a: '1', b: '2' });
      expect(await client.clientGetName()).toBe('nr-basic');
      expect(await Promise.all(Array.from({ length: 500 }, () => client.incr('nr:c')))).toEqual(
        Array.from({ length: 500 }, (_, i) => i + 1),
      );
      await expect(client.lPop('nr:a')).rejects.toThrow('WRONGTYPE Operation against a key holding the wrong kind of value');
      const info = await client.info('server');
      expect(info).toContain('redis_version:7.0.15');
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('with its default RESP3 handshake (HELLO 3) it connects (more in resp3-differential.test.ts)', async () => {
    const client = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
    const errors: unknown[] = [];
    client.on('error', (e) => errors.push(e));
    await client.connect();
    try {
      expect(client.isReady).toBe(true);
      await client.del('nr3:h');
      await client.hSet('nr3:h', { a: '1' });
      expect(await client.hGetAll('nr3:h')).toEqual({ a: '1' });
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('redis-py (Debian python3-redis)', () => {
  let python: string;

  beforeAll(() => {
    // Installs python3-redis with apt-get when no python3 can import it.
    python = pythonWithRedis().python;
  }, 300_000);

  it('set/get, bytes values, pipeline, hgetall and errors', async () => {
    const script = `
import json, sys, redis
r = redis.Redis(host='127.0.0.1', port=int(sys.argv[1]))
out = {}
out['ping'] = r.ping()
r.delete('py:a', 'py:b', 'py:h', 'py:n')
out['set'] = r.set('py:a', 'hello')
out['get'] = r.get('py:a').decode()
value = bytes(range(256))
r.set(b'py:\\x00\\xff', value)
out['bytes'] = r.get(b'py:\\x00\\xff') == value
p = r.pipeline(transaction=False)
p.set('py:b', 1); p.incr('py:b'); p.incrby('py:b', 40); p.get('py:b'); p.lpush('py:b', 'x')
res = p.execute(raise_on_error=False)
out['pipeline'] = [x if not isinstance(x, Exception) else 'error: ' + str(x) for x in res[:4]] + ['error: ' + str(res[4])]
out['pipeline'][3] = out['pipeline'][3].decode()
r.hset('py:h', mapping={'f': b'\\x01\\x02', 'g': 'x'})
out['hgetall'] = {k.decode(): list(v) for k, v in r.hgetall('py:h').items()}
try:
    r.execute_command('NOSUCH', 'x')
except redis.ResponseError as e:
    out['unknown'] = str(e)
out['incr'] = [r.incr('py:n') for _ in range(5)]
out['info'] = r.info('server')['redis_version']
print(json.dumps(out))
`;
    const result = await run(python, ['-c', script, String(port)], { timeoutMs: 60_000 });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      ping: true,
      set: true,
      get: 'hello',
      bytes: true,
      pipeline: [true, 2, 42, '42', 'error: WRONGTYPE Operation against a key holding the wrong kind of value'],
      hgetall: { f: [1, 2], g: [120] },
      unknown: "unknown command 'NOSUCH', with args beginning with: 'x' ",
      incr: [1, 2, 3, 4, 5],
      info: '7.0.15',
    });
  });
});

describe('a database number in the URL (redis://host:port/3)', () => {
  /** What database 3 and database 0 hold after a client wrote through `url`, and its connection's CLIENT INFO db=. */
  async function written(p: number, key: string): Promise<{ db3: string; db0: string }> {
    const raw = await RawClient.connect(p);
    try {
      const [, db3, , db0] = await raw.call(['SELECT', '3'], ['GET', key], ['SELECT', '0'], ['GET', key]);
      return { db3: db3.toString(), db0: db0.toString() };
    } finally {
      raw.close();
    }
  }

  it('ioredis selects it at connect and runs commands, pipelines and MULTI there, as against redis-server', async () => {
    for (const p of [port, oraclePort]) {
      const redis = new IORedis(`redis://127.0.0.1:${p}/3`, { maxRetriesPerRequest: 1, retryStrategy: () => null });
      try {
        await redis.del('url:io');
        expect(await redis.set('url:io', 'three')).toBe('OK');
        expect(await redis.pipeline().incr('url:io:n').incr('url:io:n').exec()).toEqual([
          [null, 1],
          [null, 2],
        ]);
        expect(await redis.multi().get('url:io').del('url:io:n').exec()).toEqual([
          [null, 'three'],
          [null, 1],
        ]);
        expect(await redis.client('INFO')).toMatch(/ db=3 /);
      } finally {
        redis.disconnect();
      }
      expect(await written(p, 'url:io')).toEqual({ db3: '$5\r\nthree\r\n', db0: '$-1\r\n' });
    }
  });

  it('node-redis (RESP3 by default) selects it at connect and runs commands and MULTI there, as against redis-server', async () => {
    for (const p of [port, oraclePort]) {
      const client = createClient({ url: `redis://127.0.0.1:${p}/3`, socket: { reconnectStrategy: false } });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await client.del('url:nr');
        expect(await client.set('url:nr', 'three')).toBe('OK');
        expect(await client.multi().get('url:nr').incr('url:nr:n').del('url:nr:n').exec()).toEqual(['three', 1, 1]);
        expect(String(await client.sendCommand(['CLIENT', 'INFO']))).toMatch(/ db=3 /);
      } finally {
        client.destroy();
      }
      expect(await written(p, 'url:nr')).toEqual({ db3: '$5\r\nthree\r\n', db0: '$-1\r\n' });
    }
  });

  it('redis-py (from_url) selects it at connect and runs commands, a pipeline and a transaction there, as against redis-server', async () => {
    const python = pythonWithRedis().python;
    const script = `
import json, sys, redis
r = redis.Redis.from_url('redis://127.0.0.1:%s/3' % sys.argv[1])
out = {}
r.delete('url:py', 'url:py:n')
out['set'] = r.set('url:py', 'three')
p = r.pipeline(transaction=True)
p.get('url:py'); p.incr('url:py:n'); p.incr('url:py:n')
out['multi'] = [x.decode() if isinstance(x, bytes) else x for x in p.execute()]
r.delete('url:py:n')
out['db'] = r.client_info()['db']
print(json.dumps(out))
`;
    for (const p of [port, oraclePort]) {
      const result = await run(python, ['-c', script, String(p)], { timeoutMs: 60_000 });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual({ set: true, multi: ['three', 1, 2], db: 3 });
      expect(await written(p, 'url:py')).toEqual({ db3: '$5\r\nthree\r\n', db0: '$-1\r\n' });
    }
  }, 300_000);
});
