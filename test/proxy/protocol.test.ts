// The proxy's wire protocol against a direct redis-server (the oracle), byte for byte: frames split
// at every position, inline commands, big pipelines, Redis' own protocol-error cases (reply, then the
// connection closes and later commands do not run), ignored empty multibulks, QUIT, big values.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let proxyPort: number;
let oraclePort: number;

beforeAll(async () => {
  stack = await startStack();
  proxyPort = stack.proxy.port;
  oraclePort = stack.oracle.endpoint.port;
});

afterAll(async () => {
  await stack?.stop();
});

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const show = (x: Buffer | Buffer[]) => (Array.isArray(x) ? x.map((r) => r.toString('latin1')) : x.toString('latin1'));

/** Writes and waits until the bytes left this process, so the next write is a separate TCP segment. */
function writeFlushed(c: RawClient, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => c.socket.write(bytes, () => resolve()));
}

/** Sends `bytes` in one write to a fresh connection on `port` and reads `n` replies. */
async function oneShot(port: number, bytes: Buffer, n: number): Promise<Buffer[]> {
  const c = await RawClient.connect(port);
  try {
    c.write(bytes);
    return await c.replies(n, 30_000);
  } finally {
    c.close();
  }
}

/** The same bytes to the proxy and to the oracle: the same replies. */
async function expectSameReplies(bytes: Buffer, n: number): Promise<Buffer[]> {
  const [proxied, direct] = await Promise.all([oneShot(proxyPort, bytes, n), oneShot(oraclePort, bytes, n)]);
  expect(show(proxied)).toEqual(show(direct));
  return direct;
}

/**
 * Everything a server sends for `bytes` until it closes the connection. `later` is written 300 ms
 * after, if the connection is still open by then (the server must not wait for it).
 */
async function untilClose(port: number, bytes: Buffer, later?: Buffer): Promise<Buffer> {
  const c = await RawClient.connect(port);
  const timer =
    later &&
    setTimeout(() => {
      if (!c.closed) c.socket.write(later, () => undefined);
    }, 300);
  try {
    c.write(bytes);
    return Buffer.from(await c.untilClosed(10_000));
  } finally {
    clearTimeout(timer);
    c.close();
  }
}
async function getBoth(key: string): Promise<[string, string]> {
  const [p, o] = await Promise.all([
    oneShot(proxyPort, encodeCommands([['GET', key]]), 1),
    oneShot(oraclePort, encodeCommands([['GET', key]]), 1),
  ]);
  return [p[0].toString('latin1'), o[0].toString('latin1')];
}

async function flushBoth(): Promise<void> {
  await Promise.all([oneShot(proxyPort, encodeCommands([['FLUSHALL']]), 1), oneShot(oraclePort, encodeCommands([['FLUSHALL']]), 1)]);
}

// A self-contained pipeline (it deletes its keys first, so every run gives the same replies) mixing
// forwarded commands, local ones, errors made locally and by the upstream, and inline commands.
const MIXED_COMMANDS: string[][] = [
  ['DEL', 'p:s', 'p:c', 'p:l', 'p:h', 'p:z'],
  ['SET', 'p:s', 'hello world'],
  ['GET', 'p:s'],
  ['APPEND', 'p:s', '!'],
  ['INCR', 'p:c'],
  ['INCRBY', 'p:c', '41'],
  ['PING'],
  ['ECHO', 'bulk\r\nwith crlf'],
  ['RPUSH', 'p:l', 'a', 'b', 'c'],
  ['LRANGE', 'p:l', '0', '-1'],
  ['HSET', 'p:h', 'f1', 'v1', 'f2', ''],
  ['HGETALL', 'p:h'],
  ['GET', 'p:missing'],
  ['LPOP', 'p:s'], // WRONGTYPE, from the upstream
  ['NOSUCHCMD', 'x'], // unknown, answered locally
  ['GET'], // arity, answered locally
  ['ZADD', 'p:z', '1', 'one', '2.5', 'two'],
  ['ZRANGE', 'p:z', '0', '-1', 'WITHSCORES'],
  ['SELECT', '0'],
  ['INCRBYFLOAT', 'p:c', '0.5'],
];
const MIXED = Buffer.concat([
  encodeCommands(MIXED_COMMANDS),
  b('PING\r\n'),
  b('get p:s\r\n'),
  b('\r\n'), // an empty inline line is ignored
  encodeCommands([['EXISTS', 'p:s', 'p:l', 'p:nope']]),
]);
const MIXED_REPLIES = MIXED_COMMANDS.length + 3;

describe('framing', () => {
  it("a mixed pipeline in one write gives the oracle's replies", async () => {
    await expectSameReplies(MIXED, MIXED_REPLIES);
  });

  it("the mixed pipeline fed one byte at a time gives the oracle's replies", async () => {
    const expected = await oneShot(oraclePort, MIXED, MIXED_REPLIES);
    const c = await RawClient.connect(proxyPort);
    try {
      c.socket.setNoDelay(true);
      for (let i = 0; i < MIXED.length; i++) {
        await writeFlushed(c, MIXED.subarray(i, i + 1));
        if (i % 8 === 7) await sleep(1); // let the proxy see many of the bytes as separate reads
      }
      const got = await c.replies(MIXED_REPLIES);
      expect(show(got)).toEqual(show(expected));
    } finally {
      c.close();
    }
  });

  it("the mixed pipeline split in two at every byte position gives the oracle's replies", async () => {
    const expected = show(await oneShot(oraclePort, MIXED, MIXED_REPLIES));
    const c = await RawClient.connect(proxyPort);
    try {
      c.socket.setNoDelay(true);
      for (let cut = 1; cut < MIXED.length; cut++) {
        await writeFlushed(c, MIXED.subarray(0, cut));
        await sleep(1);
        await writeFlushed(c, MIXED.subarray(cut));
        const got = show(await c.replies(MIXED_REPLIES));
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          expect({ cut, got }).toEqual({ cut, got: expected });
        }
      }
    } finally {
      c.close();
    }
  });

  it('a pipeline of 10 000 commands in one write: every reply, in order, as the oracle', async () => {
    await flushBoth();
    const commands: string[][] = [];
    for (let i = 0; i < 10_000; i++) {
      switch (i % 5) {
        case 0:
          commands.push(['SET', `big:${i % 997}`, `v${i}`]);
          break;
        case 1:
          commands.push(['GET', `big:${(i * 7) % 997}`]);
          break;
        case 2:
          commands.push(['INCR', 'big:counter']);
          break;
        case 3:
          commands.push(['RPUSH', 'big:list', String(i)]);
          break;
        default:
          commands.push(i % 2 === 0 ? ['PING'] : ['LLEN', 'big:list']);
      }
    }
    const direct = await expectSameReplies(encodeCommands(commands), commands.length);
    expect(direct.at(-3)!.toString()).toBe(':2000\r\n'); // the last INCR
  });
});

describe('inline commands', () => {
  it('PING, quoted arguments, escapes and empty lines as the oracle', async () => {
    await flushBoth();
    const bytes = b(
      'PING\r\n' +
        'PING\n' + // a bare LF ends a line too
        'ping "hello world"\r\n' +
        'SET "inline key" \'single quoted\'\r\n' +
        'GET "inline key"\r\n' +
        'SET esc "\\x41\\x00\\xff\\n\\t\\"q\\"\\\\"\r\n' +
        'GET esc\r\n' +
        'STRLEN esc\r\n' +
        '\r\n' +
        '   \r\n' + // only spaces: no arguments, ignored
        'EXISTS   "inline key"    esc   \r\n' +
        "ECHO 'it\\'s'\r\n" +
        'ECHO ""\r\n' +
        'nosuch "a b" c\r\n',
    );
    const replies = await expectSameReplies(bytes, 12);
    expect(show(replies[7])).toBe(':9\r\n');
  });
});

describe("protocol errors: the oracle's reply, then the connection closes, later commands do not run", () => {
  // Each case: bytes that make a protocol error. A SET pipelined before it runs; one after it does not.
  // The "too big" cases have no line end: the server must give up by itself (the rest is sent
  // 300 ms later, if the connection is still open).
  const cases: Array<{ name: string; bad: Buffer; error: string; tooBig?: true }> = [
    { name: 'out of range multibulk length', bad: b('*3000000000\r\n'), error: 'invalid multibulk length' },
    { name: 'non-number multibulk length', bad: b('*blabla\r\n'), error: 'invalid multibulk length' },
    { name: 'bad bulk length (not a number)', bad: b('*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n'), error: 'invalid bulk length' },
    { name: 'negative bulk length', bad: b('*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n'), error: 'invalid bulk length' },
    { name: 'out of range bulk length', bad: b('*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n'), error: 'invalid bulk length' },
    { name: 'wrong bulk header', bad: b('*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n'), error: "expected '$', got 'f'" },
    { name: 'multibulk not followed by bulks', bad: b('*1\r\nfoo\r\n'), error: "expected '$', got 'f'" },
    { name: '*3 then *abcde', bad: b('*3\r\n*abcde\r\n'), error: "expected '$', got '*'" },
    { name: 'unbalanced double quotes', bad: b('set """test-key""" test-value\r\n'), error: 'unbalanced quotes in request' },
    { name: 'unbalanced single quote', bad: b("SET k 'abc\r\n"), error: 'unbalanced quotes in request' },
    { name: 'unterminated quote', bad: b('ping "\r\n'), error: 'unbalanced quotes in request' },
    {
      name: 'too big inline request',
      bad: Buffer.concat([b('SET '), Buffer.alloc(70 * 1024, 0x61)]),
      error: 'too big inline request',
      tooBig: true,
    },
    {
      name: 'too big mbulk count string',
      bad: Buffer.concat([b('*'), Buffer.alloc(70 * 1024, 0x31)]),
      error: 'too big mbulk count string',
      tooBig: true,
    },
    {
      name: 'too big bulk count string',
      bad: Buffer.concat([b('*1\r\n$'), Buffer.alloc(70 * 1024, 0x31)]),
      error: 'too big bulk count string',
      tooBig: true,
    },
  ];
  // Redis' "Protocol desync regression" tests: a NUL stops the line search, and garbage follows.
  const garbage = Buffer.from(('A'.repeat(1024) + '\n').repeat(66));
  cases.push(
    { name: 'desync \\x00 + garbage', bad: Buffer.concat([b('\x00'), garbage]), error: 'too big inline request' },
    { name: 'desync *\\x00 + garbage', bad: Buffer.concat([b('*\x00'), garbage]), error: 'too big mbulk count string' },
    { name: 'desync $\\x00 + garbage', bad: Buffer.concat([b('$\x00'), garbage]), error: 'too big inline request' },
  );

  cases.forEach(({ name, bad, error, tooBig }, n) => {
    it(name, async () => {
      const before = `perr:${n}:before`;
      const after = `perr:${n}:after`;
      // When the bad bytes end mid-request, the line end completes it; then the SET is the next command.
      const rest = Buffer.concat([b('\r\n'), encodeCommands([['SET', after, 'ran']])]);
      const first = Buffer.concat([encodeCommands([['SET', before, 'ran']]), bad]);
      const [proxied, direct] = tooBig
        ? await Promise.all([untilClose(proxyPort, first, rest), untilClose(oraclePort, first, rest)])
        : await Promise.all([untilClose(proxyPort, Buffer.concat([first, rest])), untilClose(oraclePort, Buffer.concat([first, rest]))]);
      expect(show(direct)).toBe(`+OK\r\n-ERR Protocol error: ${error}\r\n`);
      expect(show(proxied)).toBe(show(direct));
      expect(await getBoth(before)).toEqual(['$3\r\nran\r\n', '$3\r\nran\r\n']);
      expect(await getBoth(after)).toEqual(['$-1\r\n', '$-1\r\n']);
    });
  });

  it('an error after pipelined forwarded commands still waits for their replies, in order', async () => {
    const cmds: string[][] = [];
    for (let i = 0; i < 50; i++) cmds.push(['INCR', 'perr:ordered']);
    const bytes = Buffer.concat([
      encodeCommands([['DEL', 'perr:ordered'], ...cmds]),
      b('*1\r\nfoo\r\n'),
      encodeCommands([['INCR', 'perr:ordered']]),
    ]);
    const [proxied, direct] = await Promise.all([untilClose(proxyPort, bytes), untilClose(oraclePort, bytes)]);
    expect(show(proxied)).toBe(show(direct));
    expect(await getBoth('perr:ordered')).toEqual(['$2\r\n50\r\n', '$2\r\n50\r\n']);
  });
});

describe('ignored and closing requests', () => {
  it('*0 and negative multibulk counts are ignored', async () => {
    const bytes = b('*0\r\n*-10\r\n*-1\r\nPING\r\n*0\r\n*1\r\n$4\r\nPING\r\n');
    const replies = await expectSameReplies(bytes, 2);
    expect(show(replies)).toEqual(['+PONG\r\n', '+PONG\r\n']);
    // Nothing else arrives.
    const c = await RawClient.connect(proxyPort);
    try {
      c.write(bytes);
      await c.replies(2);
      c.write(encodeCommands([['ECHO', 'last']]));
      expect(show(await c.replies(1))).toEqual(['$4\r\nlast\r\n']);
    } finally {
      c.close();
    }
  });

  it('QUIT answers +OK and closes; commands after it do not run', async () => {
    const bytes = Buffer.concat([encodeCommands([['SET', 'quit:before', '1'], ['QUIT'], ['SET', 'quit:after', '1']])]);
    const [proxied, direct] = await Promise.all([untilClose(proxyPort, bytes), untilClose(oraclePort, bytes)]);
    expect(show(direct)).toBe('+OK\r\n+OK\r\n');
    expect(show(proxied)).toBe(show(direct));
    expect(await getBoth('quit:before')).toEqual(['$1\r\n1\r\n', '$1\r\n1\r\n']);
    expect(await getBoth('quit:after')).toEqual(['$-1\r\n', '$-1\r\n']);
    // Inline QUIT too.
    expect(show(await untilClose(proxyPort, b('quit\r\n')))).toBe('+OK\r\n');
  });
});

describe('half-closed clients', () => {
  /** Sends `bytes` then ends the client's side (FIN); collects everything until the server closes. */
  function sendAndEnd(port: number, bytes: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => s.end(bytes));
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no close; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
      }, 10_000);
      s.on('data', (d: Buffer) => chunks.push(d));
      s.on('error', () => undefined);
      s.on('close', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks).toString('latin1'));
      });
    });
  }

  it('commands sent before the client ends its side are answered, then the connection closes (printf … | nc -N)', async () => {
    const bytes = Buffer.concat([
      encodeCommands([['DEL', 'half:n'], ['SET', 'half:a', '1'], ['PING'], ['GET', 'half:a']]),
      b('INCR half:n\r\nINCR half:n\r\n'),
      encodeCommands([['ECHO', 'last']]),
    ]);
    const [proxied, direct] = await Promise.all([sendAndEnd(proxyPort, bytes), sendAndEnd(oraclePort, bytes)]);
    expect(direct).toBe(':0\r\n+OK\r\n+PONG\r\n$1\r\n1\r\n:1\r\n:2\r\n$4\r\nlast\r\n');
    expect(proxied).toBe(direct);
  });

  it('connections closed by QUIT, protocol errors and half-closes are all released', async () => {
    const baseline = stack.proxy.connections();
    await Promise.all([
      untilClose(proxyPort, b('QUIT\r\n')),
      untilClose(proxyPort, b('*1\r\nfoo\r\n')),
      sendAndEnd(proxyPort, b('PING\r\n')),
      sendAndEnd(proxyPort, encodeCommands([['GET', 'half:a']])),
    ]);
    const deadline = Date.now() + 3000;
    while (stack.proxy.connections() > baseline && Date.now() < deadline) await sleep(20);
    expect(stack.proxy.connections()).toBe(baseline);
  });
});

describe('big values', () => {
  it('a 5 MB value round-trips byte for byte', async () => {
    const value = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = 0x20 + (i % 95); // printable, so it goes as JSON text
    const c = await RawClient.connect(proxyPort);
    try {
      const [set, len, got] = await c.call(['SET', 'bigvalue', value], ['STRLEN', 'bigvalue'], ['GET', 'bigvalue']);
      expect(show(set)).toBe('+OK\r\n');
      expect(show(len)).toBe(`:${value.length}\r\n`);
      const header = b(`$${value.length}\r\n`);
      expect(got.length).toBe(header.length + value.length + 2);
      expect(got.subarray(0, header.length).equals(header)).toBe(true);
      expect(got.subarray(header.length, header.length + value.length).equals(value)).toBe(true);
    } finally {
      c.close();
    }
  });

  it('a 5 MB binary value (every byte value) round-trips byte for byte', async () => {
    const value = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = (i * 31 + (i >> 8)) & 0xff;
    const c = await RawClient.connect(proxyPort);
    try {
      const [set, got] = await c.call(['SET', 'bigbinary', value], ['GET', 'bigbinary']);
      expect(show(set)).toBe('+OK\r\n');
      const header = b(`$${value.length}\r\n`);
      expect(got.subarray(0, header.length).equals(header)).toBe(true);
      expect(got.subarray(header.length, header.length + value.length).equals(value)).toBe(true);
    } finally {
      c.close();
    }
  });
});
