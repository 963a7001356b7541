// Request reader: unit cases, chunking at every byte, property tests, and differential checks against
// a real redis-server 7.0 (same bytes in, same replies and same connection close out).
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { RequestReader, type ReadResult } from '../../src/resp/request-reader.js';
import { capacityFor } from '../../src/resp/large-buffers.js';
import { tracked } from '../helpers/cleanup.js';

// ---------- helpers ----------

function encodeCommand(args: (string | Uint8Array)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a) : Buffer.from(a);
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

/** Feeds the chunks (calling read() after each push, as a socket handler does) and collects results. */
function readAll(chunks: Buffer[], opts: { authenticated?: boolean; limits?: { maxBulkLength?: number } } = {}) {
  const reader = new RequestReader(opts.limits);
  if (opts.authenticated === false) reader.authenticated = false;
  const results: ReadResult[] = [];
  for (const c of chunks) {
    reader.push(c);
    for (let r = reader.read(); r !== undefined; r = reader.read()) results.push(r);
  }
  return { reader, results };
}

function commands(results: ReadResult[]): string[][] {
  return results.map((r) => (r.kind === 'command' ? r.args.map((a) => a.toString('latin1')) : [`!${r.message}`]));
}

function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const sorted = [...new Set(cuts.map((c) => Math.min(Math.max(c, 0), buf.length)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of sorted) {
    out.push(buf.subarray(prev, c));
    prev = c;
  }
  out.push(buf.subarray(prev));
  // Fresh copies: the reader must not depend on the caller's buffers being contiguous.
  return out.map((x) => Buffer.from(x));
}

function bytewise(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i++) out.push(buf.subarray(i, i + 1));
  return out;
}

// ---------- real redis-server ----------

const PASSWORD = 'reader-test-secret';
let redis: EmbeddedRedis | undefined;
let redisPort = 0;

interface Exchange {
  reply: Buffer;
  closed: boolean;
}

/** One authenticated round trip on a connection of its own: `+PONG` back. */
function ping(): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(redisPort, '127.0.0.1');
    let got = '';
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (got === '+OK\r\n+PONG\r\n') {
        sock.destroy();
        resolve();
      } else if (got.length >= 12) {
        sock.destroy();
        reject(new Error(`unexpected answer to AUTH, PING: ${JSON.stringify(got)}`));
      }
    });
    sock.on('error', reject);
    sock.on('connect', () => sock.write(`AUTH ${PASSWORD}\r\nPING\r\n`));
  });
}

/**
 * Writes bytes on a fresh connection; returns what came back, and whether Redis closed it. No idle
 * timer decides "not closed": once the bytes are in Redis' socket, two round trips on another
 * connection (one more per 16 KB) prove Redis has read them (it serves ready sockets in the order they became ready),
 * written their replies and, for a protocol error, closed the connection (freed at the latest in
 * the next turn of its event loop).
 */
function exchange(bytes: Buffer, opts: { auth: boolean }): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(redisPort, '127.0.0.1');
    const got: Buffer[] = [];
    let closed = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      sock.destroy();
      let reply = Buffer.concat(got);
      if (opts.auth) {
        if (reply.subarray(0, 5).toString() !== '+OK\r\n') return reject(new Error(`AUTH failed: ${reply}`));
        reply = reply.subarray(5);
      }
      resolve({ reply, closed });
    };
    sock.on('data', (d) => got.push(d));
    sock.on('close', () => {
      closed = true;
      finish();
    });
    sock.on('error', () => {});
    sock.on('connect', () => {
      if (opts.auth) sock.write(`AUTH ${PASSWORD}\r\n`);
      sock.write(bytes, async () => {
        try {
          // Redis reads at most 16 KB of one client per turn: one more turn per 16 KB, plus the close.
          for (let turn = 0; turn < 2 + Math.ceil(bytes.length / 16384); turn++) await ping();
          // What Redis sent before the last PONG has been read by now, or is read in this turn.
          await new Promise((r) => setImmediate(r));
          finish();
        } catch (err) {
          reject(err);
        }
      });
    });
  });
}

async function startRedis(): Promise<void> {
  // A real redis-server 7.0 on a free port (retried if the port is taken), stopped by the test teardown.
  redis = tracked(await startEmbeddedRedis({ password: PASSWORD }));
  redisPort = redis.endpoint.port;
  await ping();
}

const bulkReply = (x: Buffer) => Buffer.concat([b(`$${x.length}\r\n`), x, b('\r\n')]);

/** The reply Redis gives to each command the reader returned (tests only use PING and ECHO). */
function expectedReply(results: ReadResult[], auth: boolean): Buffer {
  const out: Buffer[] = [];
  for (const r of results) {
    if (r.kind === 'protocol-error') {
      out.push(r.reply);
      continue;
    }
    if (!auth) {
      out.push(b('-NOAUTH Authentication required.\r\n'));
      continue;
    }
    const name = r.args[0].toString('latin1').toLowerCase();
    if (name === 'ping') {
      if (r.args.length === 1) out.push(b('+PONG\r\n'));
      else if (r.args.length === 2) out.push(bulkReply(r.args[1]));
      else out.push(b("-ERR wrong number of arguments for 'ping' command\r\n"));
    } else if (name === 'echo') {
      if (r.args.length === 2) out.push(bulkReply(r.args[1]));
      else out.push(b("-ERR wrong number of arguments for 'echo' command\r\n"));
    } else {
      throw new Error(`test case uses a command other than PING/ECHO: ${name}`);
    }
  }
  return Buffer.concat(out);
}

/** Runs bytes through the reader (one chunk) and through Redis; both must agree byte for byte. */
async function expectSameAsRedis(bytes: Buffer, auth = true): Promise<ReadResult[]> {
  const { results } = readAll([bytes], { authenticated: auth });
  const real = await exchange(bytes, { auth });
  const failed = results.some((r) => r.kind === 'protocol-error');
  expect(real.reply.toString('latin1'), JSON.stringify(bytes.toString('latin1').slice(0, 80))).toBe(
    expectedReply(results, auth).toString('latin1'),
  );
  expect(real.closed, `closed? ${JSON.stringify(bytes.toString('latin1').slice(0, 80))}`).toBe(failed);
  return results;
}

beforeAll(startRedis);
afterAll(() => redis?.stop());

// ---------- cases ----------

const A = (n: number) => 'A'.repeat(n);

/** [input, expected error message or null for "no error, waits for more", authenticated] */
const ERROR_CASES: [string, string | null, boolean][] = [
  [A(65537), 'ERR Protocol error: too big inline request', true],
  [A(65536), null, true],
  ['\x00' + A(65537), 'ERR Protocol error: too big inline request', true],
  ['$\x00' + A(65537), 'ERR Protocol error: too big inline request', true],
  ['PING\x00\r\n' + A(65530), 'ERR Protocol error: too big inline request', true],
  ['ECHO "abc\r\n', 'ERR Protocol error: unbalanced quotes in request', true],
  ["ECHO 'abc\r\n", 'ERR Protocol error: unbalanced quotes in request', true],
  ['ECHO "a"b\r\n', 'ERR Protocol error: unbalanced quotes in request', true],
  ["ECHO 'a'b\r\n", 'ERR Protocol error: unbalanced quotes in request', true],
  ['ECHO "a\\"\r\n', 'ERR Protocol error: unbalanced quotes in request', true],
  ['*' + A(65537), 'ERR Protocol error: too big mbulk count string', true],
  ['*' + A(65535), null, true],
  ['*\x00' + A(65537), 'ERR Protocol error: too big mbulk count string', true],
  ['*x\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*-0\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*01\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*+1\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['* 1\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*1 \r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*20000000000\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*2147483648\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*2147483647\r\n', null, true],
  ['*-9223372036854775808\r\nPING\r\n', null, true],
  ['*-9223372036854775809\r\nPING\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*123456789012345678901\r\n', 'ERR Protocol error: invalid multibulk length', true],
  ['*11\r\n', 'ERR Protocol error: unauthenticated multibulk length', false],
  ['*10\r\n', null, false],
  ['*2147483648\r\n', 'ERR Protocol error: invalid multibulk length', false],
  ['*1\r\nfooz\r\n', "ERR Protocol error: expected '$', got 'f'", true],
  ['*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n', "ERR Protocol error: expected '$', got 'f'", true],
  ['*1\r\n\r\n', "ERR Protocol error: expected '$', got ' '", true],
  ['*1\r\n\n\r\n', "ERR Protocol error: expected '$', got ' '", true],
  ['*1\r\n\xff\r\n', "ERR Protocol error: expected '$', got '\xff'", true],
  ['*1\r\n:1\r\n', "ERR Protocol error: expected '$', got ':'", true],
  ['*1\r\n$\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$-1\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$01\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$1x\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$536870913\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$536870912\r\n', null, true],
  ['*1\r\n$99999999999999999999\r\n', 'ERR Protocol error: invalid bulk length', true],
  ['*1\r\n$16385\r\n', 'ERR Protocol error: unauthenticated bulk length', false],
  ['*1\r\n$16384\r\n', null, false],
  ['*1\r\n$-1\r\n', 'ERR Protocol error: invalid bulk length', false],
  ['*1\r\n$' + A(65537), 'ERR Protocol error: too big bulk count string', true],
  ['*1\r\n$3\x00\r\n' + A(65537), 'ERR Protocol error: too big bulk count string', true],
  ['*1\r\n$' + A(65535), null, true],
  // Commands before the bad one run; nothing after it does.
  ['PING\r\n*1\r\n$x\r\nPING\r\n', 'ERR Protocol error: invalid bulk length', true],
];

describe('protocol errors (exact Redis 7.0 texts)', () => {
  it.each(ERROR_CASES.map(([input, msg, auth]) => ({ input, msg, auth, name: JSON.stringify(input.slice(0, 40)) })))(
    '$name (auth=$auth)',
    ({ input, msg, auth }) => {
      const { results, reader } = readAll([b(input)], { authenticated: auth });
      const last = results[results.length - 1];
      if (msg === null) {
        expect(results.every((r) => r.kind === 'command')).toBe(true);
      } else {
        expect(last).toMatchObject({ kind: 'protocol-error', message: msg });
        if (last.kind === 'protocol-error') expect(last.reply).toEqual(b(`-${msg}\r\n`));
        // Nothing more after an error, whatever arrives.
        reader.push(b('PING\r\n'));
        expect(reader.read()).toBeUndefined();
        expect(reader.bufferedBytes).toBe(0);
      }
    },
  );

  it('every error case gives the same bytes and the same close as redis-server', async () => {
    await Promise.all(ERROR_CASES.map(([input, , auth]) => expectSameAsRedis(b(input), auth)));
  });

  it('same error whether the bytes arrive at once or one at a time', () => {
    for (const [input, msg, auth] of ERROR_CASES) {
      if (input.length > 200) continue;
      const whole = commands(readAll([b(input)], { authenticated: auth }).results);
      const bytes = commands(readAll(bytewise(b(input)), { authenticated: auth }).results);
      expect(bytes, input).toEqual(whole);
      if (msg !== null) expect(whole[whole.length - 1]).toEqual([`!${msg}`]);
    }
  });

  it('Redis test suite "Protocol desync regression" payloads end in a protocol error', () => {
    for (const seq of ['\x00', '*\x00', '$\x00']) {
      const reader = new RequestReader();
      reader.push(b(seq));
      let result: ReadResult | undefined;
      for (let i = 0; i < 100 && result === undefined; i++) {
        reader.push(b(A(1024)));
        result = reader.read();
      }
      expect(result?.kind).toBe('protocol-error');
      expect(result && result.kind === 'protocol-error' && result.message).toMatch(/^ERR Protocol error/);
    }
  });

  it('proto-max-bulk-len is configurable', () => {
    const { results } = readAll([b('*1\r\n$1048577\r\n')], { limits: { maxBulkLength: 1024 * 1024 } });
    expect(commands(results)).toEqual([['!ERR Protocol error: invalid bulk length']]);
  });

  it('the unauthenticated limits follow `authenticated` as it changes between commands', () => {
    const reader = new RequestReader();
    reader.authenticated = false;
    reader.push(encodeCommand(['AUTH', 'pw']));
    reader.push(encodeCommand(['SET', 'k', 'x'.repeat(20000)]));
    expect(reader.read()).toMatchObject({ kind: 'command' });
    reader.authenticated = true; // AUTH succeeded
    const r = reader.read();
    expect(r?.kind === 'command' && r.args[2].length).toBe(20000);
  });
});

describe('framing', () => {
  it('a request buffered whole reads the same as one fed a byte at a time, at every edge of the one-go path', () => {
    // Read whole, a request goes through readWhole; fed byte by byte, through the field-by-field path.
    const many = (n: number) => `*${n}\r\n` + '$1\r\nx\r\n'.repeat(n);
    const inputs: Array<[string, boolean]> = [
      [many(9), true],
      [many(10), true],
      [many(64), true],
      [many(65), true],
      [many(99), true],
      [many(10), false],
      [many(11), false],
      ['*1\r\n$16384\r\n' + A(16384) + '\r\n', false],
      ['*1\r\n$16385\r\n' + A(16385) + '\r\n', false],
      ['*2\r\n$3\r\nGET\r\n$0\r\n\r\n', true],
      ['*01\r\n$4\r\nPING\r\n', true],
      ['*1\r\n$04\r\nPING\r\n', true],
      ['*1\r\n$-1\r\n', true],
      ['*-1\r\n*1\r\n$4\r\nPING\r\n', true],
      ['*1\r\n$+4\r\nPING\r\n', true],
      ['*1\r\n$4 \r\nPING\r\n', true],
      ['*1\r\n$1000000000\r\n', true],
      ['*1\rZ$4\rZPINGzz*1\r\n$4\r\nPING\r\n', true],
      ['*2\r\n$3\r\nGET\r\n%3\r\nabc\r\n', true],
      ['*1\r\n$4\r\nPI\x00G\r\n', true],
      ['*1\x00\r\n$4\r\nPING\r\n', true],
      ['*2\r\n$33\r\n' + A(33) + '\r\n$1\r\nk\r\n', true],
      ['*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$123456789\r\nxyz', true],
    ];
    for (const [input, auth] of inputs) {
      const whole = readAll([b(input)], { authenticated: auth });
      const bytes = readAll(bytewise(b(input)), { authenticated: auth });
      expect(commands(bytes.results), input.slice(0, 40)).toEqual(commands(whole.results));
      expect(bytes.reader.bufferedBytes, JSON.stringify(input.slice(0, 40))).toBe(whole.reader.bufferedBytes);
    }
    // What the one-go path reads: every argument, the name shared, the rest views of the input.
    const input = b('*3\r\n$3\r\nSET\r\n$16\r\nkey:000000001234\r\n$3\r\nxyz\r\n');
    const { results } = readAll([input]);
    expect(commands(results)).toEqual([['SET', 'key:000000001234', 'xyz']]);
    const args = results[0].kind === 'command' ? results[0].args : [];
    expect(args[1].buffer).toBe(input.buffer);
    expect(args[2].byteOffset).toBe(input.byteOffset + 40);
  });

  it('reads multibulk and inline commands, ignoring empty lines and *0 / negative counts', () => {
    const input = b('*1\r\n$4\r\nPING\r\n\r\n\n   \r\nSET a b\n*0\r\n*-1\r\n*-10\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\nPING\r\n');
    const { results } = readAll([input]);
    expect(commands(results)).toEqual([['PING'], ['SET', 'a', 'b'], ['GET', ''], ['PING']]);
    expect(results.map((r) => r.kind === 'command' && r.inline)).toEqual([false, true, false, true]);
  });

  it('skips the 2 bytes after a bulk payload without checking them', () => {
    const { results } = readAll([b('*2\r\n$4\r\nECHO\r\n$2\r\nhixy*1\r\n$4\r\nPINGzz')]);
    expect(commands(results)).toEqual([['ECHO', 'hi'], ['PING']]);
  });

  it('takes any byte after the CR of a count line as its LF', () => {
    expect(commands(readAll([b('*1\rX$4\rYPING\r\n')]).results)).toEqual([['PING']]);
  });

  it('waits for the byte after CR before accepting a count line', () => {
    const reader = new RequestReader();
    reader.push(b('*1\r'));
    expect(reader.read()).toBeUndefined();
    reader.push(b('\n$4\r'));
    expect(reader.read()).toBeUndefined();
    reader.push(b('\nPING\r'));
    expect(reader.read()).toBeUndefined();
    reader.push(b('\n'));
    expect(reader.read()).toMatchObject({ kind: 'command', inline: false });
  });

  it('a NUL byte before the line end makes Redis wait (strchr stops at it)', () => {
    for (const input of ['PING\x00\r\n', '*1\x00\r\n$4\r\nPING\r\n', '*1\r\n$4\x00\r\nPING\r\n']) {
      const { results, reader } = readAll([b(input)]);
      expect(results).toEqual([]);
      // Still waiting: more bytes do not help until 64 KB are buffered.
      reader.push(b('\r\nPING\r\n'));
      expect(reader.read()).toBeUndefined();
    }
  });

  it('a NUL byte inside a bulk payload is fine', () => {
    expect(commands(readAll([encodeCommand(['ECHO', '\x00\x00'])]).results)).toEqual([['ECHO', '\x00\x00']]);
  });

  it('reports bufferedBytes for unparsed input and partial commands', () => {
    const reader = new RequestReader();
    reader.push(b('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nva'));
    expect(reader.read()).toBeUndefined();
    expect(reader.bufferedBytes).toBe(4 /* args SET, k */ + 2 /* "va" */);
    reader.push(b('lue\r\n'));
    expect(reader.read()).toBeDefined();
    expect(reader.bufferedBytes).toBe(0);
  });

  it('matches redis-server on framing quirks', async () => {
    const cases = [
      'PING\r\n*0\r\nPING\r\n',
      '*-10\r\nPING\r\n',
      '\r\n\n  \r\nPING\n',
      '*1\rX$4\r\nPING\r\n',
      '*1\r\n$4\r\nPINGxy*1\r\n$4\r\nPING\r\n',
      '*2\r\n$4\r\nECHO\r\n$3\r\na\x00b\r\n',
      'PING\x00\r\n',
      '*1\r\n$4\r\nPING',
      '*1\r\n$4\r\nPING\r',
    ];
    await Promise.all(cases.map((c) => expectSameAsRedis(b(c))));
  });
});

/** [inline line without CRLF, expected args or null for unbalanced quotes] */
const INLINE_CASES: [string, string[] | null][] = [
  ['PING', ['PING']],
  ['  SET   k  v  ', ['SET', 'k', 'v']],
  ['a\tb', ['a', 'b']],
  ['"a b" \'c d\'', ['a b', 'c d']],
  ['"\\x41\\x4a\\xff\\x00\\xAf"', ['AJ\xff\x00\xaf']],
  ['"\\x4g"', ['x4g']],
  ['"\\x"', ['x']],
  ['"\\n\\r\\t\\b\\a\\\\\\"\\q"', ['\n\r\t\b\x07\\"q']],
  ["'it\\'s'", ["it's"]],
  ["'a\\nb'", ['a\\nb']],
  ["'a\\\\'", null], // the second backslash escapes the closing quote
  ['a"b c"', ['ab c']],
  ["a'b c'", ['ab c']],
  ['a"b c"d', null],
  ['"abc', null],
  ["'abc", null],
  ['"abc"def', null],
  ['"a\\"', null],
  ['"abc"\x0bdef', ['abc', 'def']],
  ['"abc"\fdef', ['abc', 'def']],
  ['a\x0bb', ['a\x0bb']],
  ['a\fb', ['a\fb']],
  ['""', ['']],
  ["''", ['']],
  ['\\x41', ['\\x41']],
  ['a\rb', ['a', 'b']],
  ['"x"\r', ['x']],
  ['\xff\xfe \x80', ['\xff\xfe', '\x80']],
  ['"a\rb"', ['a\rb']],
];

describe('inline commands (sdssplitargs)', () => {
  it.each(INLINE_CASES.map(([line, args]) => ({ line, args, name: JSON.stringify(line) })))('$name', ({ line, args }) => {
    const { results } = readAll([b(line + '\r\n')]);
    expect(commands(results)).toEqual([args === null ? ['!ERR Protocol error: unbalanced quotes in request'] : args]);
  });

  it('splits like redis-server (ECHO of each quoted form)', async () => {
    await Promise.all(INLINE_CASES.map(([line]) => expectSameAsRedis(b(`ECHO ${line}\r\n`))));
  });

  it('a line may end in LF alone, and a lone CR is not a line end', () => {
    expect(commands(readAll([b('ECHO a\nECHO b\r\n')]).results)).toEqual([
      ['ECHO', 'a'],
      ['ECHO', 'b'],
    ]);
    expect(readAll([b('ECHO a\r')]).results).toEqual([]);
  });

  it('accepts an inline line longer than 64 KB once its newline is buffered', () => {
    const { results } = readAll([b(`ECHO ${A(70000)}\r\n`)]);
    expect(results[0].kind === 'command' && results[0].args[1].length).toBe(70000);
  });
});

// A pipeline exercising every path: inline with quotes, empty lines, ignored counts, binary and big bulks.
function mixedPipeline(): { bytes: Buffer; expected: string[][] } {
  const big = Buffer.alloc(100_000, 'z');
  big[0] = 0;
  big[99_999] = 13;
  const parts: [Buffer, string[] | null][] = [
    [encodeCommand(['SET', 'key', 'value']), ['SET', 'key', 'value']],
    [b('PING\r\n'), ['PING']],
    [b('\r\n'), null],
    [b('ECHO "hi \\x41\\n" \'x y\'\n'), ['ECHO', 'hi A\n', 'x y']],
    [b('*0\r\n*-1\r\n'), null],
    [encodeCommand(['ECHO', Buffer.from([0, 1, 2, 13, 10, 255])]), ['ECHO', '\x00\x01\x02\r\n\xff']],
    [encodeCommand(['SET', 'big', big]), ['SET', 'big', big.toString('latin1')]],
    [encodeCommand(['GET', '']), ['GET', '']],
    [b('   \n'), null],
    [encodeCommand(['MSET', 'a', '1', 'b', '2']), ['MSET', 'a', '1', 'b', '2']],
    [encodeCommand(['SET', 'mid', 'm'.repeat(40_000)]), ['SET', 'mid', 'm'.repeat(40_000)]],
    [b('QUIT\r\n'), ['QUIT']],
  ];
  return {
    bytes: Buffer.concat(parts.map((p) => p[0])),
    expected: parts.filter((p) => p[1] !== null).map((p) => p[1] as string[]),
  };
}

describe('chunking', () => {
  const { bytes, expected } = mixedPipeline();

  it('reads the mixed pipeline in one chunk', () => {
    expect(commands(readAll([bytes]).results)).toEqual(expected);
  });

  it('reads it fed one byte at a time, and the arguments stay valid after further pushes', () => {
    const { results } = readAll(bytewise(bytes));
    expect(commands(results)).toEqual(expected);
  });

  it('reads it split in two at every byte position (small commands)', () => {
    const small = Buffer.concat([
      encodeCommand(['SET', 'k', 'v']),
      b('ECHO "a\\x41" \'b\'\r\n\r\n*0\r\n'),
      encodeCommand(['ECHO', Buffer.from([0, 13, 10])]),
      b('PING\n'),
    ]);
    const want = [['SET', 'k', 'v'], ['ECHO', 'aA', 'b'], ['ECHO', '\x00\r\n'], ['PING']];
    for (let i = 0; i <= small.length; i++) {
      for (let j = i; j <= small.length; j += 7) {
        expect(commands(readAll(splitAt(small, [i, j])).results), `cuts ${i},${j}`).toEqual(want);
      }
    }
  });

  it('reads it under random chunkings', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 60 }), (cuts) => {
        expect(commands(readAll(splitAt(bytes, cuts)).results)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('reads everything pushed before a single read() call', () => {
    const reader = new RequestReader();
    for (const c of splitAt(bytes, [3, 10, 500, 60_000, 100_050, 150_000])) reader.push(c);
    const out: ReadResult[] = [];
    for (let r = reader.read(); r !== undefined; r = reader.read()) out.push(r);
    expect(commands(out)).toEqual(expected);
  });

  it('long lines and large bulks fed one byte at a time take linear time', () => {
    const t0 = Date.now();
    const cases: [Buffer, string][] = [
      [b('*' + '1'.repeat(65537)), '!ERR Protocol error: too big mbulk count string'],
      [b('*1\r\n$' + '1'.repeat(65537)), '!ERR Protocol error: too big bulk count string'],
      [b(A(65537)), '!ERR Protocol error: too big inline request'],
      [b(`ECHO ${A(65000)}\r\n`), 'ECHO'],
      [encodeCommand(['SET', 'k', Buffer.alloc(1_000_000)]), 'SET'],
    ];
    for (const [input, first] of cases) {
      const got = commands(readAll(bytewise(input)).results);
      expect(got).toHaveLength(1);
      expect(got[0][0]).toBe(first);
    }
    // Quadratic rescanning would take minutes here; linear takes well under a second. The bound sits
    // far from both, so a loaded machine cannot fail it (throughput itself is measured in bench/).
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('a large bulk arriving in pieces is received into one buffer of its size class (resp/large-buffers.ts)', () => {
    const value = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = i & 255;
    const frame = encodeCommand(['SET', 'k', value]);
    const cuts: number[] = [];
    for (let i = 7; i < frame.length; i += 65536) cuts.push(i);
    const { results } = readAll(splitAt(frame, cuts));
    expect(results).toHaveLength(1);
    const arg = results[0].kind === 'command' ? results[0].args[2] : Buffer.alloc(0);
    expect(arg.equals(value)).toBe(true);
    expect(arg.length).toBe(value.length);
    expect(arg.buffer.byteLength).toBe(capacityFor(value.length));
  });
});

describe('pushShared: bytes lent from one read buffer (socket-input.ts)', () => {
  /** Feeds `input` through one reused buffer, overwritten after each push, cut at `cuts`. */
  function readShared(input: Buffer, cuts: number[]): ReadResult[] {
    const reader = new RequestReader();
    const lent = Buffer.alloc(70 * 1024);
    const results: ReadResult[] = [];
    for (const chunk of splitAt(input, cuts)) {
      chunk.copy(lent);
      reader.pushShared(lent.subarray(0, chunk.length));
      lent.fill(0xee); // the next read reuses the buffer: nothing may still point into it
      for (let r = reader.read(); r !== undefined; r = reader.read()) results.push(r);
    }
    return results;
  }

  it('reads the mixed pipeline under random chunkings, every argument intact after the buffer is reused', () => {
    const { bytes, expected } = mixedPipeline();
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (cuts) => {
        const sorted = [...cuts].sort((x, y) => x - y);
        // A lent read is at most the buffer's size.
        for (let at = 60_000; at < bytes.length; at += 60_000) sorted.push(at);
        expect(commands(readShared(bytes, sorted))).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('a 1 MiB value in 64 KiB reads lands in its own exact-size buffer', () => {
    const value = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = (i * 7) & 255;
    const frame = Buffer.concat([encodeCommand(['SET', 'k', value]), encodeCommand(['GET', 'k'])]);
    const cuts: number[] = [];
    for (let i = 65536; i < frame.length; i += 65536) cuts.push(i);
    const results = readShared(frame, cuts);
    expect(commands(results).map((c) => c[0])).toEqual(['SET', 'GET']);
    const arg = results[0].kind === 'command' ? results[0].args[2] : Buffer.alloc(0);
    expect(arg.equals(value)).toBe(true);
    expect(arg.length).toBe(value.length);
    expect(arg.buffer.byteLength).toBe(capacityFor(value.length));
  });
});

describe('argument arrays and command names', () => {
  it('a request has an array of exactly its arguments, up to and past the presized count', () => {
    for (const n of [1, 2, 3, 64, 65, 200]) {
      const args = ['MSET', ...Array.from({ length: n - 1 }, (_, i) => `a${i}`)];
      const { results } = readAll([encodeCommand(args)]);
      expect(results).toHaveLength(1);
      const r = results[0];
      expect(r.kind === 'command' && r.args.length).toBe(n);
      expect(commands(results)).toEqual([args]);
    }
  });

  it('a command name is one shared copy per spelling, equal byte for byte, and never a view of the input', () => {
    const reader = new RequestReader();
    // Repeated (the last name again), alternating, and a name of the same length with other bytes.
    const spelled = ['GET', 'get', 'GET', 'GET', 'SET', 'GET'];
    const input = Buffer.concat(spelled.map((name, i) => encodeCommand([name, `k${i}`])));
    reader.push(input);
    const names: Buffer[] = [];
    for (let r = reader.read(); r !== undefined; r = reader.read()) if (r.kind === 'command') names.push(r.args[0]);
    expect(names.map((n) => n.toString())).toEqual(spelled);
    for (const i of [2, 3, 5]) expect(names[i]).toBe(names[0]);
    expect(names[1]).not.toBe(names[0]);
    expect(names[4]).not.toBe(names[0]);
    expect(names[0].buffer).not.toBe(input.buffer);
    input.fill(0x78); // the client's bytes change: the names do not
    expect(names.map((n) => n.toString())).toEqual(spelled);
  });

  it('a first argument longer than any command name is a view like the others', () => {
    const long = 'x'.repeat(40);
    const { results } = readAll([encodeCommand([long, 'y'])]);
    expect(commands(results)).toEqual([[long, 'y']]);
  });
});

describe('pipelines', () => {
  const N = 10_000;
  const frames: Buffer[] = [];
  for (let i = 0; i < N; i++) {
    frames.push(i % 2 ? encodeCommand(['GET', `key:${i}`]) : encodeCommand(['SET', `key:${i}`, `value-${i}`]));
  }
  const pipeline = Buffer.concat(frames);

  const check = (results: ReadResult[]) => {
    expect(results).toHaveLength(N);
    for (let i = 0; i < N; i++) {
      const r = results[i];
      if (r.kind !== 'command') throw new Error('unexpected error');
      expect(r.args[1].toString()).toBe(`key:${i}`);
      if (i % 2 === 0) expect(r.args[2].toString()).toBe(`value-${i}`);
    }
  };

  it('parses 10 000 commands in one chunk', () => check(readAll([pipeline]).results));
  it('parses 10 000 commands in 64 KB chunks', () => {
    const cuts = [];
    for (let i = 65536; i < pipeline.length; i += 65536) cuts.push(i);
    check(readAll(splitAt(pipeline, cuts)).results);
  });
  it('parses 10 000 commands in 7-byte chunks', () => {
    const cuts = [];
    for (let i = 7; i < pipeline.length; i += 7) cuts.push(i);
    check(readAll(splitAt(pipeline, cuts)).results);
  });
  it('parses 10 000 inline commands', () => {
    const inline = Buffer.from(Array.from({ length: N }, (_, i) => `GET key:${i}\r\n`).join(''));
    const { results } = readAll([inline]);
    expect(results).toHaveLength(N);
    expect(commands(results.slice(-1))).toEqual([['GET', `key:${N - 1}`]]);
  });
});

describe('property: any binary multibulk round-trips under any chunking', () => {
  const arg = fc.uint8Array({ minLength: 0, maxLength: 64 });
  const command = fc.array(arg, { minLength: 1, maxLength: 8 });

  it('small arguments, all 256 byte values', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), (cmds, rawCuts) => {
        const bytes = Buffer.concat(cmds.map((c) => encodeCommand(c)));
        const cuts = rawCuts.map((c) => c % (bytes.length + 1));
        const { results } = readAll(splitAt(bytes, cuts));
        expect(results.map((r) => (r.kind === 'command' ? r.args.map((a) => [...a]) : r.message))).toEqual(
          cmds.map((c) => c.map((a) => [...a])),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('large arguments (big-argument path)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 255 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (sizes, seed, rawCuts) => {
          const args = sizes.map((n, k) => {
            const a = Buffer.allocUnsafe(n);
            for (let i = 0; i < n; i++) a[i] = (i * 31 + seed + k) & 255;
            return a;
          });
          const bytes = Buffer.concat([encodeCommand(args), encodeCommand(['PING'])]);
          const cuts = rawCuts.map((c) => c % (bytes.length + 1));
          const { results } = readAll(splitAt(bytes, cuts));
          expect(results).toHaveLength(2);
          const got = results[0].kind === 'command' ? results[0].args : [];
          expect(got.length).toBe(args.length);
          got.forEach((g, i) => expect(g.equals(args[i])).toBe(true));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('differential fuzz against redis-server', () => {
  // Random requests built from protocol-significant pieces. Replies are not predicted (commands vary);
  // what must agree is how many replies come before the protocol error, the error, and the close.
  const pieces = ['*', '$', '1', '2', '3', '0', '-', '\r', '\n', '\r\n', ' ', '"', "'", '\\', 'x4', 'A', 'PING', 'ECHO', '\x00', '\t', 'a'];
  const input = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 16 }).map((p) => p.join(''));

  /** Number of complete RESP2 replies in buf. */
  function countReplies(buf: Buffer): { count: number; last: string } {
    let pos = 0;
    let count = 0;
    let last = '';
    const one = (): boolean => {
      const eol = buf.indexOf('\r\n', pos);
      if (eol < 0) return false;
      const type = buf[pos];
      const line = buf.toString('latin1', pos + 1, eol);
      pos = eol + 2;
      if (type === 36) {
        const n = Number(line);
        if (n >= 0) pos += n + 2;
      } else if (type === 42) {
        for (let i = 0; i < Number(line); i++) if (!one()) return false;
      } else if (type === 45) {
        last = line;
      }
      return pos <= buf.length;
    };
    while (pos < buf.length && one()) count++;
    return { count, last };
  }

  it('agrees on 400 random inputs', async () => {
    const seed = Date.now();
    const samples = fc.sample(input, { numRuns: 400, seed });
    for (let i = 0; i < samples.length; i += 50) {
      await Promise.all(
        samples.slice(i, i + 50).map(async (s) => {
          const bytes = b(s);
          const { results } = readAll([bytes]);
          const real = await exchange(bytes, { auth: true });
          const err = results.find((r) => r.kind === 'protocol-error');
          const { count, last } = countReplies(real.reply);
          const label = `seed ${seed} input ${JSON.stringify(s)}`;
          expect(count, label).toBe(results.length);
          expect(real.closed, label).toBe(err !== undefined);
          if (err && err.kind === 'protocol-error') expect(last, label).toBe(err.message);
        }),
      );
    }
  });
});
