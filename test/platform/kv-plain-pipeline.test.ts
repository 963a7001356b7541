// The /pipeline fast path (src/platform/kv/plain-pipeline.ts, issue 14): a body of plain commands goes
// from JSON bytes straight to RESP and its replies come back as one Buffer. It must answer exactly what
// the general path answers; these tests compare the two on the real platform and redis-server.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommandsAndSubcommands, lookupCommand, platformRefusal } from '../../src/commands/table.js';
import { compatPlan } from '../../src/platform/kv/compat.js';
import { plainKindOf } from '../../src/platform/kv/executor.js';
import { rewriteJsonCommand } from '../../src/platform/kv/json/rewrite.js';
import { replyFilterFor } from '../../src/platform/kv/json/visibility.js';
import { readPlainPipeline, type PlainKind } from '../../src/platform/kv/plain-pipeline.js';
import { readLargePathCommand } from '../../src/platform/kv/request.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { PASS_THROUGH_BYTES, RedisConnection } from '../../src/platform/redis/connection.js';
import { largeBuffers } from '../../src/resp/large-buffers.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { encodeCommands, LARGE_ARG_BYTES } from '../../src/resp/request-writer.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

const kindOf = (name: string): PlainKind => plainKindOf(lookupCommand(name));

describe('which commands are plain', () => {
  it('reads and writes that Redis runs as sent are plain; rewritten, refused, filtered or stateful ones are not', () => {
    expect(kindOf('GET')).toBe('read');
    expect(kindOf('get')).toBe('read');
    expect(kindOf('SET')).toBe('write');
    expect(kindOf('INCR')).toBe('write');
    expect(kindOf('LRANGE')).toBe('read');
    for (const name of ['TYPE', 'JSON.SET', 'JSON.GET', 'SCAN', 'FUNCTION', 'ACL', 'MULTI', 'EXEC', 'WAIT', 'XADD', 'COPY', 'BITOP']) {
      expect(kindOf(name), name).toBeUndefined();
    }
    for (const name of ['CLIENT', 'CONFIG', 'OBJECT', 'SELECT', 'BLPOP', 'SUBSCRIBE', 'nosuchcommand', '', 'constructor']) {
      expect(kindOf(name), name).toBeUndefined();
    }
  });

  it('no plain command is ever rewritten, refused or filtered, whatever its arguments', () => {
    const probes = [
      [],
      ['a'],
      ['a', 'a'],
      ['k', 'MAXLEN', '~', '10'],
      ['DIFF', 'd', 'a', 'b'],
      ['0', 'WITHTYPE'],
      ['0', 'TYPE', 'ReJSON-RL'],
      ['k', 'BLOCK', '0'],
      ['k', 'DB', '1'],
      ['setuser', 'default'],
      ['list'],
    ];
    let plain = 0;
    for (const spec of allCommandsAndSubcommands()) {
      if (spec.container) continue;
      if (kindOf(spec.name) === undefined) continue;
      plain++;
      for (const probe of probes) {
        const command = [spec.name.toUpperCase(), ...probe];
        expect(rewriteJsonCommand(command), spec.name).toBeUndefined();
        expect(compatPlan(command), spec.name).toBeUndefined();
        expect(replyFilterFor(command), spec.name).toBeUndefined();
        expect(platformRefusal(command), spec.name).toBeUndefined();
      }
    }
    expect(plain).toBeGreaterThan(100);
  });
});

describe('readPlainPipeline', () => {
  it('writes exactly the RESP of the parsed commands, in any JSON spacing', () => {
    const commands = [
      ['SET', 'k:1', 'héllo wörld ✓ 🎉'],
      ['GET', 'k:1'],
      ['MSET', 'a', '', 'b', 'x'.repeat(300)],
      ['incr', 'n'],
    ];
    for (const body of [JSON.stringify(commands), JSON.stringify(commands, null, 2), ` \r\n\t${JSON.stringify(commands, null, '\t')}\n `]) {
      const plain = readPlainPipeline(Buffer.from(body), kindOf);
      expect(plain).toBeDefined();
      expect(plain!.resp.equals(encodeCommands(commands))).toBe(true);
      expect(plain!.count).toBe(4);
      expect(plain!.wrote).toBe(true);
    }
    expect(readPlainPipeline(Buffer.from('[["GET","a"],["STRLEN","b"]]'), kindOf)!.wrote).toBe(false);
  });

  it('leaves every other body to the general path', () => {
    const others = [
      '',
      '[]',
      '[[]]',
      '[["GET"],]',
      '[["GET","a"]',
      '[["GET","a"]] x',
      '[["GET","a"]]]',
      '[["GET" "a"]]',
      '[["GET",5]]',
      '[["SET","a",true]]',
      '[["GET",null]]',
      '[["GET",["a"]]]',
      '[["GET","a\\"b"]]',
      '[["\\u0047ET","a"]]',
      '[["GET","a\tb"]]',
      '[["","a"]]',
      '[["TYPE","a"]]',
      '[["GET","a"],["MULTI"]]',
      '[["nosuch","a"]]',
      '["GET","a"]',
      '{"0":["GET","a"]}',
      '\ufeff[["GET","a"]]',
    ];
    for (const body of others) expect(readPlainPipeline(Buffer.from(body), kindOf), body).toBeUndefined();
    // Bytes that are not UTF-8: JSON.parse of the text would see U+FFFD, so the general path decides.
    const invalid = Buffer.concat([Buffer.from('[["SET","a","'), Buffer.from([0xff, 0xfe]), Buffer.from('"]]')]);
    expect(readPlainPipeline(invalid, kindOf)).toBeUndefined();
  });

  it('agrees with JSON.parse + encodeCommands on any array of string commands', () => {
    const name = fc.constantFrom('GET', 'SET', 'set', 'DEL', 'MGET', 'HSET', 'TYPE', 'SCAN', 'nosuch', '');
    const special = fc.constantFrom('', 'k', '"', '\\', '\n', 'é', '🎉');
    // Long strings (past 64 bytes the fast path scans four bytes at a time), a special character anywhere in them.
    const long = fc
      .tuple(fc.string({ minLength: 60, maxLength: 260 }), special, fc.string({ unit: 'grapheme', maxLength: 80 }))
      .map(([a, b, c]) => a + b + c);
    const arg = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), special, long);
    const command = fc.tuple(name, fc.array(arg, { maxLength: 4 })).map(([n, args]) => [n, ...args]);
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 8 }), fc.constantFrom(undefined, 1, '\t'), (commands, space) => {
        const body = Buffer.from(JSON.stringify(commands, null, space));
        const plain = readPlainPipeline(body, kindOf);
        const eligible = commands.every((c) => c[0] !== '' && kindOf(c[0]) !== undefined && c.every((a) => JSON.stringify(a) === `"${a}"`));
        expect(plain !== undefined).toBe(eligible);
        if (plain) {
          expect(plain.resp.equals(encodeCommands(commands))).toBe(true);
          expect(plain.count).toBe(commands.length);
          expect(plain.wrote).toBe(commands.some((c) => kindOf(c[0]) === 'write'));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('readLargePathCommand', () => {
  const a = Buffer.alloc(LARGE_ARG_BYTES, 'a');
  const b = Buffer.from('b\r\n$');
  const body = { pieces: [a, b], size: a.length + b.length };

  it('writes the RESP request around the body pieces, which are passed on as they are', () => {
    const request = readLargePathCommand('/set/k%20x', 'EX=10&_token=t&KEEPTTL', body, kindOf);
    if (request?.kind !== 'plain-command') throw new Error(`not a plain command: ${JSON.stringify(request)}`);
    expect(request.wrote).toBe(true);
    expect(request.resp).toContain(a);
    expect(request.resp).toContain(b);
    const expected = encodeCommands([['set', 'k x', Buffer.concat([a, b]), 'EX', '10', 'KEEPTTL']]);
    expect(Buffer.concat(request.resp).equals(expected)).toBe(true);
    const read = readLargePathCommand('/lrange/k/0', '', body, kindOf); // a plain read, with a large last argument
    expect(read?.kind === 'plain-command' && read.wrote).toBe(false);
  });

  it('leaves small bodies, routes, empty names and commands that are not plain to parseKvRequest', () => {
    const small = { pieces: [Buffer.from('v')], size: 1 };
    expect(readLargePathCommand('/set/k', '', small, kindOf)).toBeUndefined();
    for (const path of [
      '/',
      '/pipeline',
      '/multi-exec',
      '/monitor',
      '/subscribe/ch',
      '/psubscribe/c*',
      '//k',
      '/json.set/k/$',
      '/type/k',
      '/nosuch/k',
    ]) {
      expect(readLargePathCommand(path, '', body, kindOf), path).toBeUndefined();
    }
  });
});

describe('RedisConnection.sendEncodedJoined', () => {
  let redis: EmbeddedRedis;
  beforeAll(async () => {
    redis = await startEmbeddedRedis({ password: null, databases: 1 });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('gives the same bytes as the replies one by one, between other callers of the same turn', async () => {
    const conn = await RedisConnection.open(redis.endpoint);
    try {
      const big = 'v'.repeat(1 << 20); // arrives in many reads
      const commands = [
        ['SET', 'j:big', big],
        ['GET', 'j:big'],
        ['GET', 'j:none'],
        ['INCR', 'j:big'],
        ['LRANGE', 'j:none', '0', '-1'],
      ];
      const before = conn.send([['SET', 'j:n', '1']]);
      const joined = conn.sendEncodedJoined(encodeCommands(commands), commands.length);
      const after = conn.send([['GET', 'j:n']]);
      const [b, j, a] = await Promise.all([before, joined, after]);
      const oneByOne = Buffer.concat(await conn.send(commands));
      expect(b.map(String)).toEqual(['+OK\r\n']);
      expect(j.equals(oneByOne)).toBe(true);
      expect(j.subarray(0, 5).toString()).toBe('+OK\r\n');
      expect(a.map(String)).toEqual(['$1\r\n1\r\n']);
    } finally {
      conn.close();
    }
  });

  it('finds reply boundaries that fall anywhere inside a read', async () => {
    // A server that answers three commands in pieces cut inside the length line, the data and the CRLF.
    const answer = Buffer.from('$5\r\nhello\r\n:42\r\n*2\r\n$1\r\na\r\n$-1\r\n+OK\r\n');
    const server = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.once('data', async () => {
        for (const [from, to] of [
          [0, 1],
          [1, 3],
          [3, 8],
          [8, 12],
          [12, 20],
          [20, 33],
          [33, answer.length],
        ]) {
          socket.write(answer.subarray(from, to));
          await new Promise((r) => setTimeout(r, 5)); // separate reads on the other side, most of the time
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const before = conn.send([['PING']]);
      const joined = conn.sendEncodedJoined(Buffer.from('*1\r\n$4\r\nPING\r\n'.repeat(2)), 2);
      const after = conn.send([['PING']]);
      expect((await before).map(String)).toEqual(['$5\r\nhello\r\n']);
      expect((await joined).toString()).toBe(':42\r\n*2\r\n$1\r\na\r\n$-1\r\n');
      expect((await after).map(String)).toEqual(['+OK\r\n']);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('RedisConnection passes a large bulk reply through as it is read', () => {
  /** A server that answers the first write with `parts`, one write each, a few ms apart. */
  async function serverSending(parts: Buffer[]): Promise<net.Server> {
    const server = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.once('data', async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 5));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return server;
  }

  it('hands over the pieces of a large bulk in order, without joining them, and finds the replies around it', async () => {
    const size = PASS_THROUGH_BYTES + 40_007; // under the size read straight into a buffer of its own
    const value = Buffer.alloc(size, 'x');
    value.write('\r\n$5\r\n', 1000); // bytes that look like RESP inside the value are not read as RESP
    const whole = Buffer.concat([Buffer.from(`:1\r\n$${size}\r\n`), value, Buffer.from('\r\n+OK\r\n'), Buffer.from('$3\r\nabc\r\n')]);
    // Cuts: inside the length line, inside the value (three times), and right after its CRLF with the next reply in the same read.
    const cuts = [0, 6, 20, 30_000, 70_000, whole.length - 20, whole.length];
    const server = await serverSending(cuts.slice(1).map((to, i) => whole.subarray(cuts[i], to)));
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      const streamed = conn.sendEncodedStreamed(Buffer.from('*1\r\n$4\r\nPING\r\n'.repeat(3)), 3, (p) => pieces.push(p));
      const after = conn.send([['PING']]);
      await streamed;
      expect(Buffer.concat(pieces).equals(whole.subarray(0, whole.length - 9))).toBe(true);
      expect(pieces.length).toBeGreaterThan(3);
      expect((await after).map(String)).toEqual(['$3\r\nabc\r\n']);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('joins the pieces for a caller that wants one Buffer, and fails a caller whose bulk is cut off', async () => {
    const size = PASS_THROUGH_BYTES + 1;
    const head = Buffer.from(`$${size}\r\n`);
    const server = await serverSending([
      Buffer.concat([head, Buffer.alloc(1000, 'y')]),
      Buffer.alloc(size - 1000, 'y'),
      Buffer.from('\r\n'),
    ]);
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const joined = await conn.sendEncodedJoined(Buffer.from('*1\r\n$4\r\nPING\r\n'), 1);
      expect(joined.equals(Buffer.concat([head, Buffer.alloc(size, 'y'), Buffer.from('\r\n')]))).toBe(true);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
    const cut = net.createServer((socket) => socket.once('data', () => socket.end(Buffer.concat([head, Buffer.alloc(5000, 'z')]))));
    await new Promise<void>((r) => cut.listen(0, '127.0.0.1', r));
    const conn2 = await RedisConnection.open({ host: '127.0.0.1', port: (cut.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      await expect(conn2.sendEncodedStreamed(Buffer.from('*1\r\n$4\r\nPING\r\n'), 1, (p) => pieces.push(p))).rejects.toThrow(/closed/);
      expect(pieces.length).toBeGreaterThan(0); // what came was handed over: the caller must drop its answer
    } finally {
      conn2.close();
      await new Promise((r) => cut.close(r));
    }
  });
});

describe('RedisConnection reads a bulk of 128 KiB or more straight into a buffer of its own', () => {
  /** A server that answers the first write with `parts`, one write each, a few ms apart; then `after` (e.g. close). */
  async function serverSending(parts: Buffer[], after?: (socket: net.Socket) => void): Promise<net.Server> {
    const server = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      socket.once('data', async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 3));
        }
        after?.(socket);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return server;
  }
  const ping = (n: number) => Buffer.from('*1\r\n$4\r\nPING\r\n'.repeat(n));
  function value(size: number, seed: number): Buffer {
    const out = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) out[i] = (i * 29 + seed + (i >> 11)) & 255;
    out.write('\r\n$5\r\n', 1000); // bytes that look like RESP inside the value are not read as RESP
    return out;
  }

  it('hands the last reply of its call over whole, in one buffer from the large-value pool, with the replies around it as before', async () => {
    const size = 1024 * 1024 + 3;
    const bulk = Buffer.concat([Buffer.from(`$${size}\r\n`), value(size, 1), Buffer.from('\r\n')]);
    const whole = Buffer.concat([Buffer.from(':1\r\n'), bulk, Buffer.from('+OK\r\n$3\r\nabc\r\n')]);
    // Cuts: inside the length line, inside the value at odd places, and right after its CRLF with the next reply in the same read.
    const cuts = [0, 6, 20, 70_001, 70_002, 500_000, whole.length - 9, whole.length];
    const server = await serverSending(cuts.slice(1).map((to, i) => whole.subarray(cuts[i], to)));
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      const streamed = conn.sendEncodedStreamed(ping(2), 2, (p) => pieces.push(p));
      const next = conn.send([['PING'], ['PING']]);
      await streamed;
      expect(Buffer.concat(pieces).equals(whole.subarray(0, whole.length - 14))).toBe(true);
      const own = pieces.find((p) => p.length === bulk.length)!;
      expect(own.equals(bulk)).toBe(true);
      expect(largeBuffers.owns(own)).toBe(true);
      expect((await next).map(String)).toEqual(['+OK\r\n', '$3\r\nabc\r\n']);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('passes a large bulk that is not the last reply of its call (a burst of GETs) on in the pieces it is read in', async () => {
    const size = 1024 * 1024;
    const bulk = Buffer.concat([Buffer.from(`$${size}\r\n`), value(size, 5), Buffer.from('\r\n')]);
    const whole = Buffer.concat([bulk, Buffer.from('+OK\r\n')]);
    const server = await serverSending([whole.subarray(0, 100_000), whole.subarray(100_000)]);
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      await conn.sendEncodedStreamed(ping(2), 2, (p) => pieces.push(p));
      expect(Buffer.concat(pieces).equals(whole)).toBe(true);
      expect(pieces.length).toBeGreaterThan(2);
      expect(pieces.some((p) => largeBuffers.owns(p))).toBe(false);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('keeps the replies read before it intact, and takes a given-back buffer for the next bulk', async () => {
    const size = 300_000;
    const bulks = [1, 2].map((seed) => Buffer.concat([Buffer.from(`$${size}\r\n`), value(size, seed), Buffer.from('\r\n')]));
    const small = (n: number) => Buffer.from(`$5\r\nhell${n}\r\n`);
    const server = net.createServer((socket) => {
      let n = 0;
      socket.on('data', () => {
        // Each request: a small reply and the start of the bulk in one write, then the rest.
        const bulk = bulks[n % 2];
        socket.write(Buffer.concat([small(n++), bulk.subarray(0, 100)]));
        setTimeout(() => socket.write(bulk.subarray(100)), 3);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      // A caller that wants one Buffer gets the small reply and the bulk joined.
      const first = await conn.sendEncodedJoined(ping(2), 2);
      expect(first.equals(Buffer.concat([small(0), bulks[0]]))).toBe(true);
      const answers: Buffer[][] = [];
      for (let i = 0; i < 6; i++) {
        const pieces: Buffer[] = [];
        await conn.sendEncodedStreamed(ping(2), 2, (p) => pieces.push(p));
        answers.push(pieces);
        // Written and given back: the next bulk reuses the memory; the small reply before it must not change.
        largeBuffers.give(pieces[1]);
        expect(pieces[0].equals(small(i + 1))).toBe(true);
        expect(pieces[1].equals(bulks[(i + 1) % 2])).toBe(true);
      }
      expect(answers[2][1].buffer).toBe(answers[1][1].buffer);
      for (const [i, pieces] of answers.entries()) expect(pieces[0].equals(small(i + 1)), `answer ${i}`).toBe(true);
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('fails the caller of a bulk cut off mid-way, having handed over nothing of it, and passes one above 16 MiB on in pieces', async () => {
    const size = 1024 * 1024;
    const head = Buffer.from(`$${size}\r\n`);
    const server = await serverSending([Buffer.concat([Buffer.from('+OK\r\n'), head, value(600_000, 3)])], (s) => s.end());
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      await expect(conn.sendEncodedStreamed(ping(2), 2, (p) => pieces.push(p))).rejects.toThrow(/closed/);
      expect(Buffer.concat(pieces).toString()).toBe('+OK\r\n');
    } finally {
      conn.close();
      await new Promise((r) => server.close(r));
    }
    const huge = 17 * 1024 * 1024;
    const hugeBulk = Buffer.concat([Buffer.from(`$${huge}\r\n`), value(huge, 4), Buffer.from('\r\n')]);
    const server2 = await serverSending([hugeBulk]);
    const conn2 = await RedisConnection.open({ host: '127.0.0.1', port: (server2.address() as net.AddressInfo).port });
    try {
      const pieces: Buffer[] = [];
      await conn2.sendEncodedStreamed(ping(1), 1, (p) => pieces.push(p));
      expect(pieces.length).toBeGreaterThan(1);
      expect(Buffer.concat(pieces).equals(hugeBulk)).toBe(true);
    } finally {
      conn2.close();
      await new Promise((r) => server2.close(r));
    }
  });
});

describe('the platform answers a plain pipeline as it answers the same commands by the general path', () => {
  let p: RunningPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(async () => {
    await p?.stop();
  });

  /** The same JSON with the first command name's first letter escaped: the general path takes it. */
  function escapedName(body: string): string {
    const at = body.indexOf('"') + 1;
    return `${body.slice(0, at)}\\u${body.charCodeAt(at).toString(16).padStart(4, '0')}${body.slice(at + 1)}`;
  }

  const templates: Array<(k: string, v: string) => string[]> = [
    (k, v) => ['SET', k, v],
    (k) => ['GET', k],
    (k) => ['INCR', `${k}:n`],
    (k, v) => ['APPEND', k, v],
    (k) => ['STRLEN', k],
    (k, v) => ['RPUSH', `${k}:l`, v, v],
    (k) => ['LRANGE', `${k}:l`, '0', '-1'],
    (k) => ['INCR', `${k}:l`], // WRONGTYPE, an error in place
    (k, v) => ['HSET', `${k}:h`, 'f', v],
    (k) => ['HGETALL', `${k}:h`],
    (k) => ['MGET', k, `${k}:none`],
    (k) => ['EXPIRE', k, '100'],
    () => ['GET'], // wrong number of arguments, from Redis
    (k) => ['DEL', k, `${k}:n`, `${k}:l`, `${k}:h`],
  ];

  it('same status, headers and body in JSON, base64 JSON and resp2, and the sync token moves after writes', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(templates.length - 1), fc.constantFrom('v', 'héllo', '🎉', '', 'x'.repeat(200))), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.constantFrom<Record<string, string>>({}, { 'Upstash-Encoding': 'base64' }, { 'Upstash-Response-Format': 'resp2' }),
        async (items, headers) => {
          round++;
          const bodyFor = (prefix: string) => JSON.stringify(items.map(([t, v]) => templates[t](`${prefix}:${round}`, v)));
          const plainBody = bodyFor('fast');
          const generalBody = escapedName(bodyFor('slow'));
          expect(readPlainPipeline(Buffer.from(plainBody), kindOf)).toBeDefined();
          expect(readPlainPipeline(Buffer.from(generalBody), kindOf)).toBeUndefined();
          const token0 = (await kv(p, '/get/sync:probe')).headers.get('upstash-sync-token');
          const fast = await kv(p, '/pipeline', { body: plainBody, headers });
          const token1 = (await kv(p, '/get/sync:probe')).headers.get('upstash-sync-token');
          const slow = await kv(p, '/pipeline', { body: generalBody, headers });
          expect(fast.status).toBe(slow.status);
          expect(fast.headers.get('content-type')).toBe(slow.headers.get('content-type'));
          expect(fast.bytes.toString('latin1')).toBe(slow.bytes.toString('latin1'));
          const writes = items.some(([t]) => kindOf(templates[t]('k', 'v')[0]) === 'write');
          expect(token1 !== token0).toBe(writes);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a resp2 answer of 4 MiB or more starts before it is complete (chunked), with the same bytes; a small one keeps its Content-Length', async () => {
    const value = 'w'.repeat(1024 * 1024);
    const keys = Array.from({ length: 6 }, (_, i) => `stream:${i}`);
    await kv(p, '/pipeline', { body: JSON.stringify(keys.map((k) => ['SET', k, value])) });
    const gets = JSON.stringify([...keys.map((k) => ['GET', k]), ['GET', 'stream:none']]);
    const resp2 = { 'Upstash-Response-Format': 'resp2' };
    const streamed = await kv(p, '/pipeline', { body: gets, headers: resp2 });
    const general = await kv(p, '/pipeline', { body: escapedName(gets), headers: resp2 });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toBe('application/octet-stream');
    expect(streamed.headers.get('transfer-encoding')).toBe('chunked');
    expect(streamed.headers.get('content-length')).toBeNull();
    expect(streamed.headers.get('upstash-sync-token')).toBeTruthy();
    expect(streamed.bytes.equals(general.bytes)).toBe(true);
    expect(streamed.bytes.length).toBe(6 * (value.length + 12) + 5);
    const small = await kv(p, '/pipeline', { body: JSON.stringify([['GET', 'stream:none']]), headers: resp2 });
    expect(small.headers.get('content-length')).toBe('5');
    expect(small.bytes.toString()).toBe('$-1\r\n');
  });

  it('a plain path-form command with a large body (its value passed on in pieces) answers as the same command in JSON', async () => {
    const value = 'é🎉"\\'.repeat(LARGE_ARG_BYTES / 4); // over LARGE_ARG_BYTES in UTF-8
    const other = 'z'.repeat(LARGE_ARG_BYTES + 3);
    const cases: Array<[string, string, string, (string | number)[], string?]> = [
      // [path, query, body, the same command as JSON, token]
      ['/set/pp:a', '', value, ['SET', 'pp:b', value]],
      ['/getset/pp:a', '', other, ['GETSET', 'pp:b', other]], // a large reply, passed through too
      ['/get/pp:a', '', other, ['GET', 'pp:b', other]], // wrong number of arguments
      ['/set/pp:a', '?EX=100&_token=ignored', value, ['SET', 'pp:b', value, 'EX', '100']],
      ['/ttl/pp:a', '', '', ['TTL', 'pp:b']],
      ['/lpush/pp:a', '', value, ['LPUSH', 'pp:b', value]], // WRONGTYPE
      ['/SeT/pp:a', '', value, ['SeT', 'pp:b', value]],
      ['/set/pp:ro', '', value, ['SET', 'pp:ro', value], p.readonlyToken], // NOPERM
    ];
    const formats: Record<string, string>[] = [{}, { 'Upstash-Encoding': 'base64' }, { 'Upstash-Response-Format': 'resp2' }];
    for (const headers of formats) {
      for (const [path, query, body, json, token] of cases) {
        const fast = await kv(p, path + query, { body: body || undefined, method: 'POST', headers, token });
        const slow = await kv(p, '/', { body: JSON.stringify(json), headers, token });
        const what = `${path}${query} ${JSON.stringify(headers)}`;
        expect(fast.status, what).toBe(slow.status);
        expect(fast.headers.get('content-type'), what).toBe(slow.headers.get('content-type'));
        expect(fast.bytes.toString('latin1').replaceAll('pp:a', 'pp:b'), what).toBe(slow.bytes.toString('latin1'));
      }
    }
    expect((await command(p, ['GET', 'pp:a'])).json.result).toBe(value);
  });

  it('a large binary body reaches redis-server byte for byte, and the sync token moves only after a write', async () => {
    const value = Buffer.alloc(LARGE_ARG_BYTES * 2 + 1);
    for (let i = 0; i < value.length; i++) value[i] = (i * 7) & 0xff;
    const resp2 = { 'Upstash-Response-Format': 'resp2' };
    const token0 = (await kv(p, '/get/sync:probe')).headers.get('upstash-sync-token');
    const set = await kv(p, '/set/pp:bin', { body: value, headers: resp2 });
    const token1 = (await kv(p, '/get/sync:probe')).headers.get('upstash-sync-token');
    expect(set.status).toBe(200);
    expect(set.text).toBe('+OK\r\n');
    expect(token1).not.toBe(token0);
    const get = await kv(p, '/get/pp:bin', { headers: resp2 });
    expect(get.bytes.equals(Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')]))).toBe(true);
    const strlen = await kv(p, '/strlen/pp:bin', { body: value, headers: resp2 }); // wrong number of arguments: nothing written
    expect(strlen.status).toBe(400);
    expect(strlen.text).toMatch(/^-ERR wrong number of arguments for 'strlen' command/);
    expect((await kv(p, '/get/sync:probe')).headers.get('upstash-sync-token')).toBe(token1);
  });

  it('the Read Only token gets NOPERM in place for a write, as by the general path', async () => {
    const body = JSON.stringify([
      ['GET', 'ro:a'],
      ['SET', 'ro:a', '1'],
    ]);
    const fast = await kv(p, '/pipeline', { body, token: p.readonlyToken });
    const slow = await kv(p, '/pipeline', { body: escapedName(body), token: p.readonlyToken });
    expect(fast.status).toBe(200);
    expect(fast.json[0]).toEqual({ result: null });
    expect(fast.json[1].error).toMatch(/^NOPERM/);
    expect(fast.text).toBe(slow.text);
  });
});
