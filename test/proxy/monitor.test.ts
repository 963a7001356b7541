// MONITOR through the proxy (issues 5 and 22): +OK once the upstream allows it, then one status line per
// command the proxy's clients send, in Redis' own format with the client's address, commands the proxy
// answers itself included, compared with a direct redis-server; redis-cli monitor and ioredis; RESET,
// QUIT and disconnect; refusal; RESP3.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreams } from '../../src/platform/kv/events.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, connectDataStore, startStack, startTestProxy, type Stack } from '../helpers/stack.js';
import { trackChild } from '../helpers/cleanup.js';

let stack: Stack;
let port: number;
let oraclePort: number;
let store: IORedis;

beforeAll(async () => {
  stack = await startStack({}, { databases: 4 });
  port = stack.proxy.port;
  oraclePort = stack.oracle.endpoint.port;
  store = await connectDataStore(stack);
});

afterAll(async () => {
  store?.disconnect();
  await stack?.stop();
});

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const LINE = /^\+(\d+\.\d{6}) \[0 (\d+\.\d+\.\d+\.\d+:\d+)\] (.*)\r\n$/s;

async function until(cond: () => boolean | Promise<boolean>, what = 'condition', ms = 8000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The command part of a monitor line (after the timestamp and the address). */
function commandPart(line: Buffer): string {
  const m = LINE.exec(line.toString('latin1'));
  if (!m) throw new Error(`not a monitor line: ${JSON.stringify(line.toString('latin1'))}`);
  return m[3];
}

/** Nothing more arrives on `c` within `ms`. */
async function silent(c: RawClient, ms = 300): Promise<boolean> {
  return c.replies(1, ms).then(
    () => false,
    () => true,
  );
}

/** Every reply that arrives on `c` until nothing more comes for 300 ms. */
async function drain(c: RawClient): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (;;) {
    const next = await c.replies(1, 300).catch(() => undefined);
    if (!next) return out;
    out.push(...next);
  }
}

/**
 * On redis-server, then through the proxy: one connection monitors while another sends `commands`; the
 * monitor's lines and the sender's address. `cleanup` runs on the sender after the lines are read.
 */
async function monitorOnBoth(
  commands: (string | Buffer)[][],
  cleanup: string[][] = [],
): Promise<Record<'oracle' | 'proxy', { lines: Buffer[]; address: string }>> {
  const out = {} as Record<'oracle' | 'proxy', { lines: Buffer[]; address: string }>;
  for (const [name, side] of [
    ['oracle', oraclePort],
    ['proxy', port],
  ] as const) {
    const m = await RawClient.connect(side);
    const other = await RawClient.connect(side);
    expect((await m.call(['MONITOR']))[0].toString()).toBe('+OK\r\n');
    for (const c of commands) await other.call(c);
    out[name] = { lines: await drain(m), address: `${other.socket.localAddress}:${other.socket.localPort}` };
    for (const c of cleanup) await other.call(c);
    m.close();
    other.close();
  }
  return out;
}

describe('MONITOR, compared with redis-server', () => {
  it('+OK, then one line per command executed by other connections, arguments escaped as Redis does', async () => {
    const commands: (string | Buffer)[][] = [
      ['SET', 'mon:k', 'v'],
      ['GET', 'mon:k'],
      ['SET', 'mon:bin', ALL_BYTES],
      ['HSET', 'mon:h', 'a field', 'with "quotes" and \\ backslash'],
      ['DEL', 'mon:k', 'mon:bin', 'mon:h'],
    ];
    const both = await monitorOnBoth(commands);
    for (const { lines } of Object.values(both)) for (const l of lines) expect(l.toString('latin1')).toMatch(LINE);
    const seen = { oracle: both.oracle.lines.map(commandPart), proxy: both.proxy.lines.map(commandPart) };
    expect(seen.oracle).toHaveLength(commands.length);
    expect(seen.proxy).toEqual(seen.oracle);
    expect(seen.proxy[0]).toBe('"SET" "mon:k" "v"');
    expect(seen.proxy[2]).toContain('"\\x00\\x01\\x02');
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });

  it('what clients sent, local commands included: PING, CLIENT SETNAME, WATCH, UNWATCH, MULTI…EXEC, DISCARD, redacted AUTH and HELLO; no line for rejected or admin commands', async () => {
    const commands: (string | Buffer)[][] = [
      ['PING'],
      ['ping', 'hi there'],
      ['ECHO', 'a\tb\r\n"c"\x07\x08'],
      ['CLIENT', 'SETNAME', 'mon-client'],
      ['CLIENT', 'GETNAME'],
      ['WATCH', 'mon:w'],
      ['UNWATCH'],
      ['WATCH', 'mon:w'],
      ['MULTI'],
      ['SET', 'mon:w', '1'],
      ['INCR', 'mon:w'],
      ['NOSUCH'],
      ['EXEC'],
      ['MULTI'],
      ['SET', 'mon:d', '1'],
      ['DISCARD'],
      ['EXEC'],
      ['MULTI'],
      ['SET', 'mon:w', '1'],
      ['INCR', 'mon:w'],
      ['EXEC'],
      ['AUTH', 'secret'],
      ['AUTH', 'user', 'secret'],
      ['HELLO', '2', 'AUTH', 'default', 'secret', 'SETNAME', 'x'],
      ['HELLO', '2'],
      ['SELECT', '0'],
      ['CONFIG', 'GET', 'maxmemory'],
      ['SLOWLOG', 'LEN'],
      ['NOSUCH', 'x'],
      ['GET'],
      ['get', 'mon:w'],
      ['DEL', 'mon:w'],
      ['BLPOP', 'mon:none', '0.01'],
      ['SUBSCRIBE', 'mon:ch'],
      ['PING'],
      ['GET', 'mon:w'],
    ];
    const seen: Record<string, string[]> = {};
    for (const [name, { lines, address }] of Object.entries(await monitorOnBoth(commands))) {
      for (const l of lines) expect(LINE.exec(l.toString('latin1'))?.[2]).toBe(address);
      seen[name] = lines.map(commandPart);
    }
    expect(seen.proxy).toEqual(seen.oracle);
    expect(seen.proxy).toContain('"AUTH" "(redacted)"');
    expect(seen.proxy).toContain('"HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "x"');
    expect(seen.proxy).toContain('"CLIENT" "SETNAME" "mon-client"');
    expect(seen.proxy).toContain('"UNWATCH"');
    // An aborted EXEC runs nothing, DISCARD drops the queue, a transaction shows its commands as EXEC runs them.
    const multi = seen.proxy.indexOf('"MULTI"');
    expect(seen.proxy.slice(multi, multi + 10)).toEqual([
      '"MULTI"',
      '"EXEC"',
      '"MULTI"',
      '"DISCARD"',
      '"EXEC"',
      '"MULTI"',
      '"SET" "mon:w" "1"',
      '"INCR" "mon:w"',
      '"EXEC"',
      '"AUTH" "(redacted)"',
    ]);
  });

  it("scripts' [db lua] lines follow the script's line, as redis-server prints them; the proxy's own scripts (WATCH, transactions) show none", async () => {
    const body = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])";
    const sha = createHash('sha1').update(body).digest('hex');
    const commands: (string | Buffer)[][] = [
      ['EVAL', body, '1', 'mon:e', 'v "q"\n'],
      ['PING'],
      ['SCRIPT', 'LOAD', body],
      ['EVALSHA', sha, '1', 'mon:e', Buffer.from([0, 0xff])],
      ['evalsha_ro', sha, '1', 'mon:e', 'x'],
      ['EVALSHA', '0'.repeat(40), '0'],
      [
        'FUNCTION',
        'LOAD',
        'REPLACE',
        "#!lua name=monlib\nredis.register_function('monget', function(keys) return redis.call('get', keys[1]) end)",
      ],
      ['FCALL', 'monget', '1', 'mon:e'],
      ['MULTI'],
      ['EVAL', "return redis.call('incr', KEYS[1])", '1', 'mon:n'],
      ['GET', 'mon:n'],
      ['EXEC'],
      ['WATCH', 'mon:w'],
      ['MULTI'],
      ['SET', 'mon:w', '1'],
      ['EXEC'],
      ['SELECT', '3'],
      ['EVAL', "return redis.call('exists', KEYS[1])", '1', 'mon:e'],
      ['SELECT', '0'],
      ['GET', 'mon:e'],
    ];
    const seen: Record<string, string[]> = {};
    for (const [name, { lines }] of Object.entries(await monitorOnBoth(commands, [['FUNCTION', 'DELETE', 'monlib']]))) {
      // "[db source] arguments": the timestamp and the client's address differ between the two.
      seen[name] = lines.map((l) =>
        l
          .toString('latin1')
          .replace(/^\+\d+\.\d{6} \[(\d+) (lua|[\d.]+:\d+)\] /, (_, db, src) => `[${db} ${src === 'lua' ? 'lua' : 'client'}] `),
      );
    }
    expect(seen.proxy).toEqual(seen.oracle);
    expect(seen.proxy.slice(0, 4)).toEqual([
      `[0 client] "EVAL" "${body}" "1" "mon:e" "v \\"q\\"\\n"\r\n`,
      '[0 lua] "set" "mon:e" "v \\"q\\"\\n"\r\n',
      '[0 lua] "get" "mon:e"\r\n',
      '[0 client] "PING"\r\n',
    ]);
    expect(seen.proxy).toContain('[3 lua] "exists" "mon:e"\r\n');
    expect(seen.proxy.join('')).not.toMatch(/DUMP|PEXPIRETIME/i);
  });

  it('a second MONITOR gets no reply at all; PING still answers', async () => {
    const out: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const m = await RawClient.connect(side);
      m.write(encodeCommands([['MONITOR'], ['MONITOR'], ['PING']]));
      out[name] = (await m.replies(2)).map(String);
      m.close();
    }
    expect(out.proxy).toEqual(out.oracle);
    expect(out.proxy).toEqual(['+OK\r\n', '+PONG\r\n']);
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });

  it('RESET leaves MONITOR (no more lines), even pipelined before the upstream answered', async () => {
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const m = await RawClient.connect(side);
      m.write(encodeCommands([['MONITOR'], ['RESET']]));
      expect((await m.replies(2)).map(String), name).toEqual(['+OK\r\n', '+RESET\r\n']);
      const other = await RawClient.connect(side);
      await other.call(['SET', 'mon:after-reset', '1']);
      expect(await silent(m), `${name}: no line after RESET`).toBe(true);
      expect((await m.call(['PING']))[0].toString()).toBe('+PONG\r\n');
      m.close();
      other.close();
    }
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });

  it('QUIT answers +OK and closes; a disconnect leaves MONITOR too', async () => {
    const other = await RawClient.connect(port);
    const m = await RawClient.connect(port);
    await m.call(['MONITOR']);
    expect((await m.call(['QUIT']))[0].toString()).toBe('+OK\r\n');
    await m.untilClosed();
    const d = await RawClient.connect(port);
    await d.call(['MONITOR']);
    d.close();
    await d.untilClosed();
    // Neither gets anything more; the proxy keeps running for the others.
    expect((await other.call(['SET', 'mon:after-quit', '1']))[0].toString()).toBe('+OK\r\n');
    other.close();
    await until(() => openStreams.count === 0, 'no upstream stream');
    await until(async () => !String(await store.client('LIST')).includes('flags=O'), 'no monitor on the data store');
  });

  it('RESP3: MONITOR lines stay status replies', async () => {
    for (const side of [oraclePort, port]) {
      const m = await RawClient.connect(side);
      await m.call(['HELLO', '3']);
      expect((await m.call(['MONITOR']))[0].toString()).toBe('+OK\r\n');
      const other = await RawClient.connect(side);
      await other.call(['SET', 'mon:r3', 'x']);
      const [line] = await m.replies(1);
      expect(commandPart(line)).toBe('"SET" "mon:r3" "x"');
      m.close();
      other.close();
    }
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });

  it('in MONITOR mode keyspace commands are refused like on a replica, other commands still answer', async () => {
    const replies: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const m = await RawClient.connect(side);
      await m.call(['MONITOR']);
      m.write(encodeCommands([['GET', 'mon:none'], ['SET', 'mon:none', 'x'], ['PING']]));
      replies[name] = (await m.replies(3)).map(String);
      m.close();
    }
    expect(replies.oracle).toEqual([
      "-ERR Replica can't interact with the keyspace\r\n",
      "-ERR Replica can't interact with the keyspace\r\n",
      '+PONG\r\n',
    ]);
    expect(replies.proxy).toEqual(replies.oracle);
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });
});

describe('clients', () => {
  it('`redis-cli monitor` prints OK then the lines, like against redis-server', async () => {
    const outputs: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const child = trackChild(spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(side), 'monitor']));
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      await until(() => out.startsWith('OK\n'), `redis-cli monitor started (${name})`);
      const other = await RawClient.connect(side);
      await other.call(['SET', 'cli:mon', 'hello world']);
      await other.call(['INCR', 'cli:n']);
      await until(() => out.split('\n').length >= 4, `two lines (${name})`);
      child.kill('SIGKILL');
      other.close();
      const lines = out.split('\n').filter(Boolean);
      outputs[name] = [lines[0], ...lines.slice(1, 3).map((l) => l.replace(/^\d+\.\d{6} \[0 [\d.:]+\] /, ''))];
    }
    expect(outputs.proxy).toEqual(outputs.oracle);
    expect(outputs.proxy).toEqual(['OK', '"SET" "cli:mon" "hello world"', '"INCR" "cli:n"']);
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });

  it('ioredis monitor(): parsed time, arguments and source', async () => {
    const redis = new IORedis({ port, host: '127.0.0.1' });
    const monitor = await redis.monitor();
    const seen: { time: string; args: string[]; source: string }[] = [];
    monitor.on('monitor', (time: string, args: string[], source: string) => seen.push({ time, args, source }));
    await redis.set('io:mon', 'v');
    await until(() => seen.length >= 1, 'ioredis monitor event');
    expect(seen[0].args).toEqual(['set', 'io:mon', 'v']);
    expect(Number(seen[0].time)).toBeGreaterThan(1e9);
    monitor.disconnect();
    redis.disconnect();
    await until(() => openStreams.count === 0, 'monitor stream closed');
  });
});

describe('upstream', () => {
  it('a token without the MONITOR permission: the NOPERM error of Redis', async () => {
    const proxy = await startTestProxy({ url: stack.platform.url, token: stack.platform.readonlyToken });
    try {
      const m = await RawClient.connect(proxy.port);
      expect((await m.call(['MONITOR']))[0].toString()).toBe("-NOPERM this user has no permissions to run the 'monitor' command\r\n");
      expect((await m.call(['PING']))[0].toString()).toBe('+PONG\r\n');
      m.close();
    } finally {
      await proxy.stop();
    }
  });

  it('the upstream /monitor stream stays open while the client monitors (for the lua lines), and closes with it', async () => {
    const m = await RawClient.connect(port);
    expect((await m.call(['MONITOR']))[0].toString()).toBe('+OK\r\n');
    expect(openStreams.count).toBe(1);
    const other = await RawClient.connect(port);
    await other.call(['SET', 'mon:again', '1']);
    expect(commandPart((await m.replies(1))[0])).toBe('"SET" "mon:again" "1"');
    m.close();
    other.close();
    await until(() => openStreams.count === 0, 'the upstream stream closed');
  });
});
