// Reply writer: every encoder against bytes captured live from a real redis-server 7.0 (RESP2, and
// RESP3 after HELLO 3), plus %.17g double formatting and the chunk/zero-copy behaviour.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../helpers/cleanup.js';
import { formatDouble, ReplyWriter, type Protocol } from '../../src/resp/reply-writer.js';

let redis: ChildProcess | undefined;
let port = 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(p));
    });
  });
}

/** End index of the reply starting at pos (RESP2 and RESP3 types), or -1 if incomplete. */
function frameEnd(buf: Buffer, pos: number): number {
  const eol = buf.indexOf('\r\n', pos);
  if (eol < 0) return -1;
  const type = String.fromCharCode(buf[pos]);
  const n = Number(buf.toString('latin1', pos + 1, eol));
  let next = eol + 2;
  if ('$=!'.includes(type)) return n < 0 ? next : next + n + 2 <= buf.length ? next + n + 2 : -1;
  if ('*~>%|'.includes(type)) {
    const count = n < 0 ? 0 : '%|'.includes(type) ? 2 * n : n;
    for (let i = 0; i < count; i++) {
      next = frameEnd(buf, next);
      if (next < 0) return -1;
    }
  }
  return next;
}

function splitFrames(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const end = frameEnd(buf, pos);
    if (end < 0) throw new Error(`incomplete reply: ${buf.toString('latin1', pos)}`);
    out.push(buf.subarray(pos, end));
    pos = end;
  }
  return out;
}

const inline = (args: string[]) => args.map((a) => `"${a.replace(/["\\]/g, (c) => '\\' + c)}"`).join(' ') + '\r\n';

/**
 * Sends the commands on a fresh connection (after HELLO 3 for RESP3) and returns the reply frames, one
 * per command. Commands are written as inline lines with double-quoted arguments.
 */
function capture(protocol: Protocol, cmds: string[][]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    sock.on('data', (d) => got.push(d));
    sock.on('error', reject);
    sock.on('close', () => {
      try {
        const frames = splitFrames(Buffer.concat(got));
        // Drop the HELLO reply (if any) and QUIT's +OK.
        resolve(frames.slice(protocol === 3 ? 1 : 0, -1));
      } catch (e) {
        reject(e);
      }
    });
    sock.on('connect', () => {
      // Keys are named per protocol so that the RESP2 and RESP3 runs do not see each other's data.
      const named = cmds.map((c) => c.map((a) => a.replace(/^w:/, `w${protocol}:`)));
      sock.write((protocol === 3 ? 'HELLO 3\r\n' : '') + named.map(inline).join('') + 'QUIT\r\n');
    });
  });
}

beforeAll(async () => {
  port = await freePort();
  redis = trackChild(
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes'],
      { stdio: 'ignore' },
    ),
  );
  for (let i = 0; i < 200; i++) {
    try {
      const [pong] = await capture(2, [['PING']]);
      if (pong.toString() === '+PONG\r\n') return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('redis-server did not start');
});

afterAll(() => {
  redis?.kill('SIGKILL');
});

type Case = [name: string, cmds: string[][], write: (w: ReplyWriter) => void];

const bigValue = 'v'.repeat(5000) + '\u00e9\u4e2d';

/** Commands whose replies are the same shape in both protocols (the writer decides the bytes). */
const CASES: Case[] = [
  ['+OK', [['SET', 'w:k', 'v']], (w) => w.simple('OK')],
  ['+PONG', [['PING']], (w) => w.simple('PONG')],
  [
    ':n',
    [
      ['DEL', 'w:n'],
      ['INCRBY', 'w:n', '-42'],
    ],
    (w) => w.integer(0).integer(-42),
  ],
  [
    ':big',
    [
      ['DEL', 'w:n2'],
      ['INCRBY', 'w:n2', '9223372036854775807'],
    ],
    (w) => w.integer(0).integer(9223372036854775807n),
  ],
  [
    '$ bulk',
    [
      ['SET', 'w:s', 'hello'],
      ['GET', 'w:s'],
    ],
    (w) => w.simple('OK').bulk('hello'),
  ],
  [
    '$ empty bulk',
    [
      ['SET', 'w:e', ''],
      ['GET', 'w:e'],
    ],
    (w) => w.simple('OK').bulk(Buffer.alloc(0)),
  ],
  [
    '$ large utf-8 bulk',
    [
      ['SET', 'w:l', bigValue],
      ['GET', 'w:l'],
    ],
    (w) => w.simple('OK').bulk(Buffer.from(bigValue)),
  ],
  ['null bulk', [['GET', 'w:missing']], (w) => w.bulk(null)],
  ['null array', [['LMPOP', '1', 'w:nolist', 'LEFT']], (w) => w.nullArray()],
  ['-ERR', [['FOO', 'a']], (w) => w.error("ERR unknown command 'FOO', with args beginning with: 'a' ")],
  [
    '-WRONGTYPE',
    [
      ['SET', 'w:t', 'x'],
      ['LPUSH', 'w:t', 'y'],
    ],
    (w) => w.simple('OK').error('WRONGTYPE Operation against a key holding the wrong kind of value'),
  ],
  [
    'nested arrays',
    [['EVAL', "return {1,{2,'a',{}},{},'b'}", '0']],
    (w) => w.arrayHeader(4).integer(1).arrayHeader(3).integer(2).bulk('a').arrayHeader(0).arrayHeader(0).bulk('b'),
  ],
  [
    'map (HGETALL)',
    [
      ['DEL', 'w:h'],
      ['HSET', 'w:h', 'f', 'v'],
      ['HGETALL', 'w:h'],
    ],
    (w) => w.integer(0).integer(1).mapHeader(1).bulk('f').bulk('v'),
  ],
  [
    'set (SMEMBERS)',
    [
      ['DEL', 'w:set'],
      ['SADD', 'w:set', 'm'],
      ['SMEMBERS', 'w:set'],
    ],
    (w) => w.integer(0).integer(1).setHeader(1).bulk('m'),
  ],
  ['empty map', [['HGETALL', 'w:nohash']], (w) => w.mapHeader(0)],
  ['DEBUG PROTOCOL string', [['DEBUG', 'PROTOCOL', 'string']], (w) => w.bulk('Hello World')],
  ['DEBUG PROTOCOL integer', [['DEBUG', 'PROTOCOL', 'integer']], (w) => w.integer(12345)],
  ['DEBUG PROTOCOL double', [['DEBUG', 'PROTOCOL', 'double']], (w) => w.double(3.141)],
  ['DEBUG PROTOCOL bignum', [['DEBUG', 'PROTOCOL', 'bignum']], (w) => w.bigNumber('1234567999999999999999999999999999999')],
  ['DEBUG PROTOCOL null', [['DEBUG', 'PROTOCOL', 'null']], (w) => w.nullBulk()],
  ['DEBUG PROTOCOL array', [['DEBUG', 'PROTOCOL', 'array']], (w) => w.arrayHeader(3).integer(0).integer(1).integer(2)],
  ['DEBUG PROTOCOL set', [['DEBUG', 'PROTOCOL', 'set']], (w) => w.setHeader(3).integer(0).integer(1).integer(2)],
  [
    'DEBUG PROTOCOL map (booleans)',
    [['DEBUG', 'PROTOCOL', 'map']],
    (w) => w.mapHeader(3).integer(0).boolean(false).integer(1).boolean(true).integer(2).boolean(false),
  ],
  ['DEBUG PROTOCOL verbatim', [['DEBUG', 'PROTOCOL', 'verbatim']], (w) => w.verbatim('This is a verbatim\nstring')],
  ['DEBUG PROTOCOL true', [['DEBUG', 'PROTOCOL', 'true']], (w) => w.boolean(true)],
  ['DEBUG PROTOCOL false', [['DEBUG', 'PROTOCOL', 'false']], (w) => w.boolean(false)],
  ['Lua boolean (RESP3 script)', [['EVAL', 'redis.setresp(3); return true', '0']], (w) => w.boolean(true)],
];

const SCORES = [
  '1.1',
  '3',
  '-0',
  '1e20',
  '0.0001',
  '0.00001',
  'inf',
  '-inf',
  '1e16',
  '1e17',
  '123456789012345678',
  '1000000000000000.25',
  '1000000000000000.75',
  '2.5e-300',
  '-1.5',
  '0.1',
  '5e-324',
  '1.7976931348623157e308',
  '0.30000000000000004',
  '-123.456',
];

describe.each([2, 3] as Protocol[])('RESP%i replies match redis-server', (protocol) => {
  it.each(CASES.map(([name, cmds, write]) => ({ name, cmds, write })))('$name', async ({ cmds, write }) => {
    const frames = await capture(protocol, cmds);
    const w = new ReplyWriter(protocol);
    write(w);
    expect(w.toBuffer().toString('latin1')).toBe(Buffer.concat(frames).toString('latin1'));
  });

  it('attribute and push (DEBUG PROTOCOL attrib / push)', async () => {
    const frames = await capture(protocol, [
      ['DEBUG', 'PROTOCOL', 'attrib'],
      ['DEBUG', 'PROTOCOL', 'push'],
    ]);
    const w = new ReplyWriter(protocol);
    if (protocol === 3) {
      w.attributeHeader(1).bulk('key-popularity').arrayHeader(2).bulk('key:123').integer(90);
      w.bulk('Some real reply following the attribute');
      w.pushHeader(2).bulk('server-cpu-usage').integer(42);
      w.bulk('Some real reply following the push reply');
    } else {
      // No attribute in RESP2; DEBUG PROTOCOL push refuses RESP2.
      expect(() => w.attributeHeader(1)).toThrow();
      w.bulk('Some real reply following the attribute');
      w.error('ERR RESP2 is not supported by this command');
    }
    expect(w.toBuffer().toString('latin1')).toBe(Buffer.concat(frames).toString('latin1'));
  });

  it('pub/sub messages use push frames in RESP3 and arrays in RESP2', async () => {
    const frames = await capture(protocol, [
      ['SUBSCRIBE', 'chan'],
      ['UNSUBSCRIBE', 'chan'],
    ]);
    const w = new ReplyWriter(protocol);
    w.pushHeader(3).bulk('subscribe').bulk('chan').integer(1);
    w.pushHeader(3).bulk('unsubscribe').bulk('chan').integer(0);
    expect(w.toBuffer().toString('latin1')).toBe(Buffer.concat(frames).toString('latin1'));
  });

  it('HELLO reply (map with nested array)', async () => {
    const [hello] = await capture(protocol, [['HELLO', String(protocol)]]);
    const id = Number(/\$2\r\nid\r\n:(\d+)\r\n/.exec(hello.toString())?.[1]);
    const w = new ReplyWriter(protocol);
    w.mapHeader(7).bulk('server').bulk('redis').bulk('version').bulk('7.0.15').bulk('proto').integer(protocol);
    w.bulk('id').integer(id).bulk('mode').bulk('standalone').bulk('role').bulk('master');
    w.bulk('modules').arrayHeader(0);
    expect(w.toBuffer().toString()).toBe(hello.toString());
  });

  it('doubles (ZSCORE, ZINCRBY) are formatted like addReplyDouble', async () => {
    const cmds: string[][] = [['DEL', 'w:z']];
    SCORES.forEach((s, i) => cmds.push(['ZADD', 'w:z', s, `m${i}`]));
    SCORES.forEach((_, i) => cmds.push(['ZSCORE', 'w:z', `m${i}`]));
    cmds.push(['ZINCRBY', 'w:z', '1.1', 'm0']);
    const frames = await capture(protocol, cmds);
    const w = new ReplyWriter(protocol);
    w.integer(0);
    SCORES.forEach(() => w.integer(1));
    // Redis stores -0 as 0 (zadd), so its score reads back as 0.
    const value = (s: string) => (s === 'inf' ? Infinity : s === '-inf' ? -Infinity : s === '-0' ? 0 : Number(s));
    SCORES.forEach((s) => w.double(value(s)));
    w.double(1.1 + 1.1);
    expect(w.toBuffer().toString('latin1')).toBe(Buffer.concat(frames).toString('latin1'));
  });
});

describe('hard-coded Redis 7.0 bytes', () => {
  const enc = (protocol: Protocol, write: (w: ReplyWriter) => void) => {
    const w = new ReplyWriter(protocol);
    write(w);
    return w.toBuffer().toString('latin1');
  };

  it('RESP2', () => {
    expect(enc(2, (w) => w.simple('OK'))).toBe('+OK\r\n');
    expect(enc(2, (w) => w.integer(-7))).toBe(':-7\r\n');
    expect(enc(2, (w) => w.bulk(null))).toBe('$-1\r\n');
    expect(enc(2, (w) => w.nullArray())).toBe('*-1\r\n');
    expect(
      enc(2, (w) =>
        w
          .arrayHeader(2)
          .arrayHeader(1)
          .bulk('a')
          .bulk(Buffer.from([0, 255])),
      ),
    ).toBe('*2\r\n*1\r\n$1\r\na\r\n$2\r\n\x00\xff\r\n');
    expect(enc(2, (w) => w.mapHeader(2))).toBe('*4\r\n');
    expect(enc(2, (w) => w.setHeader(2).pushHeader(3))).toBe('*2\r\n*3\r\n');
    expect(enc(2, (w) => w.double(1.5).double(Infinity).double(-Infinity))).toBe('$3\r\n1.5\r\n$3\r\ninf\r\n$4\r\n-inf\r\n');
    expect(enc(2, (w) => w.boolean(true).boolean(false))).toBe(':1\r\n:0\r\n');
    expect(enc(2, (w) => w.bigNumber(123n))).toBe('$3\r\n123\r\n');
    expect(enc(2, (w) => w.verbatim('hi', 'mkd'))).toBe('$2\r\nhi\r\n');
  });

  it('RESP3', () => {
    expect(enc(3, (w) => w.bulk(null).nullArray().nullBulk())).toBe('_\r\n_\r\n_\r\n');
    expect(enc(3, (w) => w.mapHeader(2).setHeader(1).pushHeader(3).attributeHeader(1))).toBe('%2\r\n~1\r\n>3\r\n|1\r\n');
    expect(enc(3, (w) => w.double(3).double(-Infinity).double(NaN).double(0.1))).toBe(',3\r\n,-inf\r\n,nan\r\n,0.10000000000000001\r\n');
    expect(enc(3, (w) => w.boolean(true).boolean(false))).toBe('#t\r\n#f\r\n');
    expect(enc(3, (w) => w.bigNumber('-12345678901234567890'))).toBe('(-12345678901234567890\r\n');
    expect(enc(3, (w) => w.verbatim('This is a verbatim\nstring'))).toBe('=29\r\ntxt:This is a verbatim\nstring\r\n');
    expect(enc(3, (w) => w.verbatim(Buffer.from('# x'), 'mkd'))).toBe('=7\r\nmkd:# x\r\n');
  });

  it('CR and LF in simple strings and errors become spaces', () => {
    expect(enc(2, (w) => w.error('ERR bad\r\nthing').simple('a\nb'))).toBe('-ERR bad  thing\r\n+a b\r\n');
  });
});

describe('formatDouble (%.17g)', () => {
  it.each([
    [0, '0'],
    [-0, '-0'],
    [3, '3'],
    [-1.5, '-1.5'],
    [0.1, '0.10000000000000001'],
    [2.2000000000000002, '2.2000000000000002'],
    [1e16, '10000000000000000'],
    [1e17, '1e+17'],
    [1e20, '1e+20'],
    [0.0001, '0.0001'],
    [0.00001, '1.0000000000000001e-05'],
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what this case checks
    [123456789012345678, '1.2345678901234568e+17'],
    [1000000000000000.25, '1000000000000000.2'], // exact tie: glibc rounds half to even
    [1000000000000000.75, '1000000000000000.8'],
    [4503599627370495.5, '4503599627370495.5'],
    [5e-324, '4.9406564584124654e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('%d → %s', (d, want) => {
    expect(formatDouble(d)).toBe(want);
  });
});

describe('chunks', () => {
  it('copies small payloads and references large ones without copying', () => {
    const w = new ReplyWriter(2);
    const large = Buffer.alloc(10_000, 1);
    w.arrayHeader(2).bulk('small').bulk(large);
    const chunks = w.take();
    expect(chunks.some((c) => c === large)).toBe(true);
    expect(Buffer.concat(chunks).length).toBe('*2\r\n$5\r\nsmall\r\n$10000\r\n'.length + 10_000 + 2);
    expect(w.length).toBe(0);
  });

  it('never rewrites bytes it already handed out', () => {
    const w = new ReplyWriter(2, 64);
    const taken: [Buffer, string][] = [];
    for (let i = 0; i < 500; i++) {
      w.integer(i).bulk(`v${i}`);
      if (i % 3 === 0) for (const c of w.take()) taken.push([c, c.toString('latin1')]);
    }
    for (const c of w.take()) taken.push([c, c.toString('latin1')]);
    for (const [c, text] of taken) expect(c.toString('latin1')).toBe(text);
    const all = taken.map(([, t]) => t).join('');
    expect(all.startsWith(':0\r\n$2\r\nv0\r\n:1\r\n$2\r\nv1\r\n')).toBe(true);
    expect(all.endsWith(':499\r\n$4\r\nv499\r\n')).toBe(true);
  });

  it('handles payloads larger than the scratch buffer', () => {
    const w = new ReplyWriter(2, 16);
    const s = 'x'.repeat(700);
    w.bulk(s).simple('y'.repeat(100)).raw(Buffer.from('+RAW\r\n'));
    expect(w.toBuffer().toString()).toBe(`$700\r\n${s}\r\n+${'y'.repeat(100)}\r\n+RAW\r\n`);
  });
});
