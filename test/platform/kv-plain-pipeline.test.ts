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
import type { RunningPlatform } from '../../src/platform/platform.js';
import { RedisConnection } from '../../src/platform/redis/connection.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { kv, startTestPlatform } from '../helpers/platform.js';

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
