// The Area B client against the real local platform (replies compared byte for byte with a direct
// redis-server connection), and against small fault-injecting servers for faults a real upstream
// cannot be made to produce on demand.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import diagnostics from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { RedisConnection } from '../../src/platform/redis/connection.js';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { KvClient, type KvClientOptions } from '../../src/upstream/kv-client.js';
import { startTestPlatform } from '../helpers/platform.js';
import { restartablePort } from '../helpers/ports.js';

const b = (s: string | Buffer): Buffer => (typeof s === 'string' ? Buffer.from(s) : s);
const cmd = (...args: (string | Buffer)[]): Buffer[] => args.map(b);
const text = (replies: Buffer[]): string[] => replies.map((r) => r.toString('latin1'));
const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function client(p: { url: string; token: string }, options: Partial<KvClientOptions> = {}): KvClient {
  return new KvClient({ url: p.url, token: p.token, timeoutMs: 5000, connections: 4, maxRequestBytes: 1_000_000, ...options });
}

/** Every reply is exactly one well-formed RESP2 reply; error texts are one line. */
function expectWellFormed(replies: Buffer[]): void {
  for (const r of replies) {
    expect(scanReply(r, 0)).toBe(r.length);
    if (r[0] === 0x2d) expect(r.subarray(0, r.length - 2).includes('\r') || r.subarray(0, r.length - 2).includes('\n')).toBe(false);
  }
}

/** Bodies of the HTTP requests undici sends while `fn` runs. */
async function recordRequests<T>(fn: () => Promise<T>): Promise<{ result: T; requests: { path: string; bytes: number }[] }> {
  const requests: { path: string; bytes: number }[] = [];
  const listener = (message: unknown) => {
    const { request } = message as { request: { path: string; body: unknown } };
    const body = request.body;
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : 0;
    requests.push({ path: request.path, bytes });
  };
  diagnostics.subscribe('undici:request:create', listener);
  try {
    const result = await fn();
    return { result, requests };
  } finally {
    diagnostics.unsubscribe('undici:request:create', listener);
  }
}

describe('KvClient against the local platform', () => {
  let p: RunningPlatform;
  let kv: KvClient;
  let oracle: RedisConnection;
  beforeAll(async () => {
    p = await startTestPlatform();
    kv = client(p);
    oracle = await RedisConnection.open(p.dataStore);
  });
  afterAll(async () => {
    oracle?.close();
    await kv?.close();
    await p?.stop();
  });

  /** Runs the commands through the client, resets the keys, runs them on redis-server: same bytes. */
  async function expectSameAsRedis(commands: Buffer[][], keys: (string | Buffer)[]): Promise<Buffer[]> {
    await oracle.send([['DEL', ...keys]]);
    const viaClient = await kv.pipeline(commands);
    await oracle.send([['DEL', ...keys]]);
    const direct = await oracle.send(commands);
    expect(text(viaClient)).toEqual(text(direct));
    expectWellFormed(viaClient);
    return viaClient;
  }

  it('answers a mixed pipeline byte for byte like redis-server', async () => {
    const replies = await expectSameAsRedis(
      [
        cmd('PING'),
        cmd('SET', 'm:s', 'hello'),
        cmd('GET', 'm:s'),
        cmd('GET', 'm:missing'),
        cmd('INCR', 'm:n'),
        cmd('INCRBY', 'm:n', '41'),
        cmd('INCR', 'm:s'), // error in place
        cmd('RPUSH', 'm:l', 'a', 'b', 'c'),
        cmd('LRANGE', 'm:l', '0', '-1'),
        cmd('LPUSH', 'm:s', 'x'), // WRONGTYPE in place
        cmd('MGET', 'm:s', 'm:missing', 'm:n'),
        cmd('HSET', 'm:h', 'f1', 'v1', 'f2', 'v2'),
        cmd('HGETALL', 'm:h'),
        cmd('ZADD', 'm:z', '1.5', 'one', '2', 'two'),
        cmd('ZRANGE', 'm:z', '0', '-1', 'WITHSCORES'),
        cmd('XADD', 'm:x', '1-1', 'f', 'v'),
        cmd('XADD', 'm:x', '2-1', 'f', 'w', 'g', 'z'),
        cmd('XRANGE', 'm:x', '-', '+'),
        cmd('EVAL', "return {1, {2, 'a', {}}, redis.status_reply('FINE'), false}", '0'),
        cmd('EXISTS', 'm:s', 'm:missing', 'm:l'),
        cmd('ECHO', 'héllo wörld ✓ 𝄞'),
        cmd('SET', 'm:utf', '"quoted"\\back\tslash\u0001\u2028 ünï'),
        cmd('GET', 'm:utf'),
        cmd('GETRANGE', 'm:s', '0', '-1'),
        cmd('OBJECT', 'ENCODING', 'm:l'),
        cmd('TYPE', 'm:z'),
        cmd('SET'), // arity error in place
      ],
      ['m:s', 'm:n', 'm:l', 'm:h', 'm:z', 'm:x', 'm:utf', 'm:missing'],
    );
    expect(replies[0].toString()).toBe('+PONG\r\n');
    expect(replies[3].toString()).toBe('$-1\r\n');
    expect(replies[6].toString()).toMatch(/^-ERR value is not an integer/);
    expect(replies[9].toString()).toMatch(/^-WRONGTYPE/);
  });

  it('carries all 256 byte values in keys and values (binary path form)', async () => {
    const key = Buffer.concat([b('bin:'), allBytes]);
    const hash = Buffer.concat([key, b(':h')]);
    const replies = await expectSameAsRedis(
      [
        cmd('SET', key, allBytes),
        cmd('GET', key),
        cmd('STRLEN', key),
        cmd('HSET', hash, allBytes, allBytes.subarray(128)),
        cmd('HGETALL', hash),
        cmd('EXISTS', key, hash),
        cmd('GET', allBytes.subarray(128)),
      ],
      [key, hash],
    );
    expect(replies[1]).toEqual(Buffer.concat([b('$256\r\n'), allBytes, b('\r\n')]));
    expect(replies[4]).toEqual(Buffer.concat([b('*2\r\n$256\r\n'), allBytes, b('\r\n$128\r\n'), allBytes.subarray(128), b('\r\n')]));
  });

  it('round-trips every single byte value as a key and as a value', async () => {
    const commands: Buffer[][] = [];
    for (let i = 0; i < 256; i++) commands.push(cmd('SET', Buffer.from([0x7e, i]), Buffer.from([i])));
    for (let i = 0; i < 256; i++) commands.push(cmd('GET', Buffer.from([0x7e, i])));
    const replies = await kv.pipeline(commands);
    for (let i = 0; i < 256; i++) {
      expect(replies[i].toString()).toBe('+OK\r\n');
      expect(replies[256 + i]).toEqual(Buffer.from([0x24, 0x31, 13, 10, i, 13, 10]));
    }
    const direct = await oracle.send(commands.slice(256));
    expect(replies.slice(256)).toEqual(direct);
  });

  it('keeps order around a binary command and passes empty arguments', async () => {
    await oracle.send([['DEL', 'o:log', 'o:empty', Buffer.from([0xff]), Buffer.from([0xfe])]]);
    const { result: replies, requests } = await recordRequests(() =>
      kv.pipeline([
        cmd('APPEND', 'o:log', 'a'),
        cmd('APPEND', 'o:log', Buffer.from([0xff, 0x00, 0x2f])), // binary: own request, between the JSON runs
        cmd('APPEND', 'o:log', 'c'),
        cmd('GET', 'o:log'),
        cmd('SET', 'o:empty', ''),
        cmd('GET', 'o:empty'),
        cmd('SET', Buffer.from([0xff]), ''), // binary with an empty last argument: trailing empty segment
        cmd('STRLEN', Buffer.from([0xff])),
        cmd('HSET', Buffer.from([0xfe]), '', 'v'), // empty argument in the middle of a path
        cmd('HGET', Buffer.from([0xfe]), ''),
        cmd('ECHO', ''),
      ]),
    );
    expect(text(replies)).toEqual([
      ':1\r\n',
      ':4\r\n',
      ':5\r\n',
      '$5\r\na\xff\x00/c\r\n',
      '+OK\r\n',
      '$0\r\n\r\n',
      '+OK\r\n',
      ':0\r\n',
      ':1\r\n',
      '$1\r\nv\r\n',
      '$0\r\n\r\n',
    ]);
    // JSON run, binary, JSON run, then one request per binary command, then JSON, in order
    expect(requests.map((r) => r.path)).toEqual([
      '/pipeline',
      '/APPEND/o%3Alog',
      '/pipeline',
      '/SET/%FF/',
      '/STRLEN',
      '/HSET/%FE/',
      '/HGET/%FE/',
      '/pipeline',
    ]);
  });

  it('answers a command with a binary name in the path form', async () => {
    const [reply] = await kv.pipeline([[Buffer.from([0xff, 0xfe])]]);
    expect(reply.toString('latin1')).toMatch(/^-ERR /);
    expectWellFormed([reply]);
    const [empty] = await kv.pipeline([[]]);
    expect(empty.toString()).toMatch(/^-ERR /);
  });

  it('splits a large batch into requests under maxRequestBytes, in order', async () => {
    const small = client(p, { maxRequestBytes: 1000 });
    try {
      const commands: Buffer[][] = [];
      for (let i = 0; i < 60; i++) commands.push(cmd('APPEND', 'split:log', `${String(i).padStart(3, '0')}:${'x'.repeat(80)};`));
      commands.push(cmd('STRLEN', 'split:log'));
      await oracle.send([['DEL', 'split:log']]);
      const { result: replies, requests } = await recordRequests(() => small.pipeline(commands));
      expect(requests.length).toBeGreaterThan(5);
      for (const r of requests) expect(r.bytes).toBeLessThanOrEqual(1000);
      for (let i = 0; i < 60; i++) expect(replies[i].toString()).toBe(`:${(i + 1) * 85}\r\n`);
      expect(replies[60].toString()).toBe(`:${60 * 85}\r\n`);
      const [log] = await oracle.send([['GET', 'split:log']]);
      expect(log.toString()).toContain('000:x');
      expect(log.toString().indexOf('059:')).toBeGreaterThan(log.toString().indexOf('058:'));
    } finally {
      await small.close();
    }
  });

  it('sends one command bigger than maxRequestBytes alone', async () => {
    const small = client(p, { maxRequestBytes: 100 });
    try {
      const { result: replies, requests } = await recordRequests(() =>
        small.pipeline([cmd('SET', 'big:a', 'x'.repeat(500)), cmd('STRLEN', 'big:a'), cmd('GET', 'big:missing')]),
      );
      expect(text(replies)).toEqual(['+OK\r\n', ':500\r\n', '$-1\r\n']);
      expect(requests.length).toBe(2);
    } finally {
      await small.close();
    }
  });

  it('sends a large last argument as the raw body of the path form, byte for byte, in order', async () => {
    // What redis-benchmark -d writes ('0' + 0..63: backslashes), quotes, UTF-8 and binary bytes: no JSON escaping.
    const value = Buffer.alloc(300 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = 0x30 + ((i * 7919) & 63);
    value.write('"é\\\n', 1000);
    allBytes.copy(value, 5000);
    const { result: replies, requests } = await recordRequests(() =>
      kv.pipeline([cmd('DEL', 'large:v'), cmd('SET', 'large:v', value), cmd('STRLEN', 'large:v'), cmd('APPEND', 'large:v', value)]),
    );
    expect(text(replies)).toEqual([':0\r\n', '+OK\r\n', `:${value.length}\r\n`, `:${2 * value.length}\r\n`]);
    const json = (...c: string[]) => Buffer.byteLength(JSON.stringify([c]));
    expect(requests.map((r) => [r.path, r.bytes])).toEqual([
      ['/pipeline', json('DEL', 'large:v')],
      ['/SET/large%3Av', value.length],
      ['/pipeline', json('STRLEN', 'large:v')],
      ['/APPEND/large%3Av', value.length],
    ]);
    const [stored] = await oracle.send([['GETRANGE', 'large:v', '0', String(value.length - 1)]]);
    expect(stored.equals(Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')]))).toBe(true);
  });

  it('answers a command the upstream refuses in place, the others normally', async () => {
    const replies = await kv.pipeline([
      cmd('SET', 'r:a', '1'),
      cmd('BLPOP', 'r:list', '0'),
      cmd('GET', 'r:a'),
      cmd('WATCH', 'r:a'),
      cmd('INCR', 'r:a'),
    ]);
    expect(replies[0].toString()).toBe('+OK\r\n');
    expect(replies[1].toString()).toMatch(/^-ERR .*blpop/i);
    expect(replies[2].toString()).toBe('$1\r\n1\r\n');
    expect(replies[3].toString()).toMatch(/^-ERR /);
    expect(replies[4].toString()).toBe(':2\r\n');
    expectWellFormed(replies);
  });

  it('answers a single refused command with its error (400)', async () => {
    const [reply] = await kv.pipeline([cmd('BLPOP', 'r:list', '0')]);
    expect(reply.toString()).toMatch(/^-ERR .*blpop/i);
    const [binary] = await kv.pipeline([cmd('BLPOP', Buffer.from([0xff]), '0')]);
    expect(binary.toString()).toMatch(/^-ERR .*blpop/i);
  });

  it('runs a transaction as one /multi-exec', async () => {
    await oracle.send([['DEL', 't:a']]);
    const { result: outcome, requests } = await recordRequests(() =>
      kv.transaction([
        cmd('SET', 't:a', '1'),
        cmd('INCR', 't:a'),
        cmd('GET', 't:a'),
        cmd('LPUSH', 't:a', 'x'),
        cmd('GET', 't:missing'),
        cmd('ECHO', 'é'),
      ]),
    );
    expect(requests.map((r) => r.path)).toEqual(['/multi-exec']);
    expect(outcome).toEqual({
      kind: 'executed',
      items: [
        { result: 'OK' },
        { result: 2 },
        { result: Buffer.from('2').toString('base64') },
        { error: expect.stringMatching(/^WRONGTYPE/) },
        { result: null },
        { result: Buffer.from('é').toString('base64') },
      ],
    });
  });

  it('reports a transaction the upstream discards', async () => {
    const outcome = await kv.transaction([cmd('SET', 't:b', '1'), cmd('BLPOP', 't:l', '0')]);
    expect(outcome.kind).toBe('discarded');
    expect(outcome.kind === 'discarded' && outcome.error).toMatch(/^ERR .*blpop/i);
    const arity = await kv.transaction([cmd('SET', 't:b', '2'), cmd('GET')]);
    expect(arity).toEqual({ kind: 'discarded', error: "ERR wrong number of arguments for 'get' command" });
    const [b1] = await oracle.send([['GET', 't:b']]);
    expect(b1.toString()).toBe('$-1\r\n');
  });

  it('sends a transaction with a binary argument as one EVAL in the path form (the arguments in the raw body)', async () => {
    const value = Buffer.from([0xff, 0x00, 0x0d, 0x0a]);
    const { result: outcome, requests } = await recordRequests(() => kv.transaction([cmd('SET', 't:c', value), cmd('GET', 't:c')]));
    expect(requests.map((r) => r.path.split('/').slice(0, 2).join('/'))).toEqual(['/EVAL']);
    expect(outcome.kind === 'executed-script' && text(outcome.replies)).toEqual(['+OK\r\n', `$4\r\n${value.toString('latin1')}\r\n`]);
    expect((await kv.pipeline([cmd('GET', 't:c')]))[0]).toEqual(Buffer.concat([Buffer.from('$4\r\n'), value, Buffer.from('\r\n')]));
    expect(await kv.transaction([])).toEqual({ kind: 'executed', items: [] });
  });

  it('reports a wrong token (401) without showing it', async () => {
    const secret = 'not-the-token-' + 'q'.repeat(20);
    const wrong = client({ url: p.url, token: secret });
    try {
      const replies = await wrong.pipeline([cmd('SET', 'w:a', '1'), cmd('GET', 'w:a')]);
      expect(text(replies)).toEqual(
        Array(2).fill('-ERR upstream authentication failed (HTTP 401): check the upstream token (--upstream-token)\r\n'),
      );
      const [bin] = await wrong.pipeline([cmd('GET', Buffer.from([0xff]))]);
      expect(bin.toString()).toMatch(/^-ERR upstream authentication failed/);
      const outcome = await wrong.transaction([cmd('GET', 'w:a')]);
      expect(outcome).toEqual({
        kind: 'failed',
        error: 'ERR upstream authentication failed (HTTP 401): check the upstream token (--upstream-token)',
      });
      expect(JSON.stringify([text(replies), outcome])).not.toContain(secret);
    } finally {
      await wrong.close();
    }
  });
});

describe('KvClient when the platform rejects a whole request', () => {
  let p: RunningPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ maxRequestSize: 2000 });
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('isolates the command that makes a pipeline too large; the others are answered', async () => {
    const kv = client(p);
    try {
      const commands = [
        cmd('SET', 'z:a', '1'),
        cmd('INCR', 'z:a'),
        cmd('SET', 'z:big', 'v'.repeat(5000)),
        cmd('GET', 'z:a'),
        cmd('GET', 'z:big'),
        cmd('APPEND', 'z:a', 'x'),
        cmd('GET', 'z:a'),
      ];
      const replies = await kv.pipeline(commands);
      expect(text(replies.filter((_, i) => i !== 2))).toEqual(['+OK\r\n', ':2\r\n', '$1\r\n2\r\n', '$-1\r\n', ':2\r\n', '$2\r\n2x\r\n']);
      expect(replies[2].toString()).toMatch(/^-ERR max request size exceeded\. Limit: 2000 bytes/);
      expectWellFormed(replies);
      const [binary] = await kv.pipeline([cmd('SET', Buffer.from([0xff]), 'v'.repeat(5000))]);
      expect(binary.toString()).toMatch(/^-ERR max request size exceeded/);
      const tx = await kv.transaction([cmd('SET', 'z:t', '1'), cmd('SET', 'z:big', 'v'.repeat(5000))]);
      expect(tx.kind).toBe('discarded');
    } finally {
      await kv.close();
    }
  });
});

describe('KvClient when the upstream goes away and comes back', () => {
  it('answers errors in bounded time, then recovers on the same port', async () => {
    const token = 'shared-token-' + 'k'.repeat(20);
    // Restarted on the same port: one no other test's port-0 bind can take meanwhile.
    const port = await restartablePort();
    let p = await startTestPlatform({ token, httpPort: port });
    const kv = client(p, { timeoutMs: 1000 });
    try {
      expect(text(await kv.pipeline([cmd('SET', 'd:a', '1'), cmd('GET', 'd:a')]))).toEqual(['+OK\r\n', '$1\r\n1\r\n']);
      await p.stop();

      const started = Date.now();
      const replies = await kv.pipeline([cmd('SET', 'd:a', '2'), cmd('GET', 'd:a'), cmd('GET', Buffer.from([0xff]))]);
      // Bounded by the deadline (generously: the machine may be loaded), not by the test's own timeout.
      expect(Date.now() - started).toBeLessThan(1000 + 2000);
      for (const r of replies)
        expect(r.toString()).toMatch(/^-ERR upstream unavailable: .*ECONNREFUSED.*; the command was not executed\r\n$/);
      expect(replies[0].toString()).not.toContain(token);
      const tx = await kv.transaction([cmd('GET', 'd:a')]);
      expect(tx.kind === 'failed' && tx.error).toMatch(/^ERR upstream unavailable: .*ECONNREFUSED.*the transaction was not executed$/);

      p = await startTestPlatform({ httpPort: port, token });
      expect(text(await kv.pipeline([cmd('SET', 'd:a', '3'), cmd('GET', 'd:a')]))).toEqual(['+OK\r\n', '$1\r\n3\r\n']);
      expect(await kv.transaction([cmd('GET', 'd:a')])).toEqual({
        kind: 'executed',
        items: [{ result: Buffer.from('3').toString('base64') }],
      });
    } finally {
      await kv.close();
      await p.stop();
    }
  });
});

/** A tiny HTTP server whose every answer `respond` decides; it counts the requests it got. */
async function faultyServer(respond: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      respond(req, res, Buffer.concat(chunks));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: 'fault-token-abcdefgh',
    requests: () => requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('KvClient against a faulty upstream', () => {
  it('times out on an upstream that never answers, saying the outcome is unknown', async () => {
    const server = await faultyServer(() => undefined);
    const kv = client(server, { timeoutMs: 300, connections: 2 });
    try {
      const started = Date.now();
      const [replies, tx] = await Promise.all([kv.pipeline([cmd('SET', 'a', '1'), cmd('GET', 'a')]), kv.transaction([cmd('GET', 'c')])]);
      // Both calls end at their deadline (generously bounded: the machine may be loaded).
      expect(Date.now() - started).toBeLessThan(300 + 2000);
      expect(text(replies)).toEqual(Array(2).fill('-ERR upstream timed out after 300 ms; the outcome of this command is unknown\r\n'));
      expect(tx).toEqual({ kind: 'failed', error: 'ERR upstream timed out after 300 ms; the outcome of the transaction is unknown' });
      expect(server.requests()).toBe(2);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('a burst larger than the pool waits its turn: the deadline counts from sending, not from the queue (issue 22)', async () => {
    // One connection, answers 150 ms apart: the sixth call waits 750 ms for its turn, longer than the
    // 400 ms deadline, and still succeeds, since each request is answered 150 ms after it is sent.
    const server = await faultyServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n'), 150);
    });
    const kv = client(server, { timeoutMs: 400, connections: 1 });
    try {
      const started = Date.now();
      const all = await Promise.all(Array.from({ length: 6 }, (_, i) => kv.pipeline([cmd('SET', `burst:${i}`, 'v')])));
      expect(Date.now() - started).toBeGreaterThanOrEqual(6 * 150 - 20);
      expect(all.map(text)).toEqual(Array(6).fill(['+OK\r\n']));
      expect(server.requests()).toBe(6);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('a stuck upstream still fails the requests waiting for a connection at the deadline, as not executed', async () => {
    const server = await faultyServer(() => undefined);
    const kv = client(server, { timeoutMs: 300, connections: 1 });
    try {
      const started = Date.now();
      const all = await Promise.all(Array.from({ length: 3 }, (_, i) => kv.pipeline([cmd('SET', `stuck:${i}`, 'v')])));
      // Every call ends at its deadline, not one deadline after the other (generously bounded: loaded machine).
      expect(Date.now() - started).toBeLessThan(300 + 1500);
      expect(text(all[0])).toEqual(['-ERR upstream timed out after 300 ms; the outcome of this command is unknown\r\n']);
      for (const replies of all.slice(1))
        expect(text(replies)).toEqual(['-ERR upstream timed out after 300 ms waiting for a connection; the command was not executed\r\n']);
      expect(server.requests()).toBe(1);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('answers the next call after a timeout (a fresh connection)', async () => {
    let hang = true;
    const server = await faultyServer((_req, res) => {
      if (hang) return;
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n');
    });
    const kv = client(server, { timeoutMs: 200, connections: 1 });
    try {
      expect((await kv.pipeline([cmd('PING')]))[0].toString()).toMatch(/timed out after 200 ms; the outcome/);
      hang = false;
      expect(text(await kv.pipeline([cmd('PING')]))).toEqual(['+OK\r\n']);
      expect(server.requests()).toBe(2);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('turns 5xx, malformed, short and truncated answers into errors with unknown outcome', async () => {
    const answers: Array<(res: http.ServerResponse) => void> = [];
    const server = await faultyServer((_req, res) => answers.shift()!(res));
    const kv = client(server, { timeoutMs: 1000, format: 'resp2' });
    const one = async (answer: (res: http.ServerResponse) => void, commands = [cmd('SET', 'a', '1'), cmd('GET', 'a')]) => {
      answers.push(answer);
      const replies = await kv.pipeline(commands);
      expectWellFormed(replies);
      expect(new Set(text(replies)).size).toBe(1);
      return replies[0].toString();
    };
    try {
      expect(
        await one((res) =>
          res
            .writeHead(500, { 'content-type': 'application/json' })
            .end('{"error":"ERR boom\\r\\nsecond line, token fault-token-abcdefgh"}'),
        ),
      ).toBe('-ERR upstream failed (HTTP 500: ERR boom second line, token [redacted]); the outcome of this command is unknown\r\n');
      expect(await one((res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>'))).toBe(
        '-ERR upstream failed (HTTP 502: <html>Bad gateway</html>); the outcome of this command is unknown\r\n',
      );
      expect(await one((res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n'))).toBe(
        '-ERR upstream sent a malformed answer (1 replies for 2 commands); the outcome of this command is unknown\r\n',
      );
      expect(await one((res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n$5\r\nab'))).toBe(
        '-ERR upstream sent a malformed answer (1 complete replies then an incomplete one, for 2 commands); the outcome of this command is unknown\r\n',
      );
      expect(
        await one((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[{"result":"OK"},{"result":"1"}]')),
      ).toMatch(
        /^-ERR upstream sent a malformed answer \(HTTP 200 with JSON instead of resp2 bytes.*outcome of this command is unknown\r\n$/,
      );
      expect(
        await one((res) => {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100' });
          res.write('+OK\r\n');
          setTimeout(() => res.socket?.destroy(), 20);
        }),
      ).toMatch(/^-ERR upstream connection failed: .*; the outcome of this command is unknown\r\n$/);
      expect(await one((res) => res.socket?.destroy())).toMatch(
        /^-ERR upstream connection failed: .*other side closed.*; the outcome of this command is unknown\r\n$/,
      );
      expect(await one((res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not here'))).toBe(
        '-ERR upstream refused the request (HTTP 404: not here) (check the upstream URL, --upstream-url); the command was not executed\r\n',
      );
      expect(
        await one(
          (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n'),
          [cmd('GET', Buffer.from([0xff]))],
        ),
      ).toBe('+OK\r\n');

      answers.push((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('not json'));
      expect(await kv.transaction([cmd('GET', 'a')])).toEqual({
        kind: 'failed',
        error: 'ERR upstream sent a malformed answer (HTTP 200 whose body is not JSON); the outcome of the transaction is unknown',
      });
      answers.push((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[{"result":1}]'));
      expect(await kv.transaction([cmd('GET', 'a'), cmd('GET', 'b')])).toEqual({
        kind: 'failed',
        error: 'ERR upstream sent a malformed answer (1 items for 2 commands); the outcome of the transaction is unknown',
      });
      answers.push((res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"overloaded"}'));
      expect(await kv.transaction([cmd('GET', 'a')])).toEqual({
        kind: 'failed',
        error: 'ERR upstream failed (HTTP 503: overloaded); the outcome of the transaction is unknown',
      });
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('does not send the rest of a batch after a request whose outcome is unknown', async () => {
    const server = await faultyServer(() => undefined);
    const kv = client(server, { timeoutMs: 200 });
    try {
      // The later requests are never sent (one request seen, below), so no deadline is waited twice.
      const replies = await kv.pipeline([cmd('SET', 'a', '1'), cmd('GET', Buffer.from([0xff])), cmd('GET', 'a')]);
      expect(text(replies)).toEqual([
        '-ERR upstream timed out after 200 ms; the outcome of this command is unknown\r\n',
        '-ERR upstream not asked: an earlier request of the same batch failed (timed out after 200 ms) and its outcome is unknown; the command was not executed\r\n',
        '-ERR upstream not asked: an earlier request of the same batch failed (timed out after 200 ms) and its outcome is unknown; the command was not executed\r\n',
      ]);
      expect(server.requests()).toBe(1);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('replaces a pool that was destroyed under it', async () => {
    const server = await faultyServer((_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n'));
    const kv = client(server);
    try {
      await (kv as unknown as { pool: { destroy(): Promise<void> } }).pool.destroy();
      expect(text(await kv.pipeline([cmd('PING')]))).toEqual(['+OK\r\n']);
    } finally {
      await kv.close();
      await server.close();
    }
  });

  it('answers errors after close, and close is idempotent', async () => {
    const server = await faultyServer((_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('+OK\r\n'));
    const kv = client(server);
    expect(text(await kv.pipeline([cmd('PING')]))).toEqual(['+OK\r\n']);
    await kv.close();
    await kv.close();
    expect(text(await kv.pipeline([cmd('PING')]))).toEqual(['-ERR upstream client is closed; the command was not executed\r\n']);
    expect((await kv.transaction([cmd('PING')])).kind).toBe('failed');
    await server.close();
  });

  it('rejects a base URL that is not http(s) without echoing secrets', () => {
    expect(() => new KvClient({ url: 'redis://x', token: 't', timeoutMs: 1, connections: 1, maxRequestBytes: 1 })).toThrow(
      /http:\/\/ or https:\/\//,
    );
    expect(() => new KvClient({ url: 'not a url', token: 't', timeoutMs: 1, connections: 1, maxRequestBytes: 1 })).toThrow(
      /not a valid URL/,
    );
  });
});
