// MONITOR through the proxy (issue 5): +OK, then one status line per command in Redis' own format from
// the upstream's /monitor stream, compared with a direct redis-server; redis-cli monitor and ioredis;
// RESET, QUIT and disconnect; refusal; reconnection after the stream drops; RESP3.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { Redis as IORedis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreams } from '../../src/platform/kv/events.js';
import { startProxy } from '../../src/proxy/server.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, connectDataStore, startStack, startTestProxy, type Stack } from '../helpers/stack.js';
import { trackChild } from '../helpers/cleanup.js';

let stack: Stack;
let port: number;
let oraclePort: number;
let store: IORedis;

beforeAll(async () => {
  stack = await startStack();
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

describe('MONITOR, compared with redis-server', () => {
  it('+OK, then one line per command executed by other connections, arguments escaped as Redis does', async () => {
    const commands: (string | Buffer)[][] = [
      ['SET', 'mon:k', 'v'],
      ['GET', 'mon:k'],
      ['SET', 'mon:bin', ALL_BYTES],
      ['HSET', 'mon:h', 'a field', 'with "quotes" and \\ backslash'],
      ['DEL', 'mon:k', 'mon:bin', 'mon:h'],
    ];
    const seen: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const m = await RawClient.connect(side);
      const other = await RawClient.connect(side);
      // The platform opens its Redis connection at its first command: MONITOR would show its AUTH.
      await other.call(['GET', 'mon:warm-up']);
      expect((await m.call(['MONITOR']))[0].toString()).toBe('+OK\r\n');
      for (const c of commands) await other.call(c);
      const lines = await m.replies(commands.length);
      for (const l of lines) expect(l.toString('latin1')).toMatch(LINE);
      seen[name] = lines.map(commandPart);
      m.close();
      other.close();
    }
    expect(seen.proxy).toEqual(seen.oracle);
    expect(seen.proxy[0]).toBe('"SET" "mon:k" "v"');
    expect(seen.proxy[2]).toContain('"\\x00\\x01\\x02');
    await until(() => openStreams.count === 0, 'monitor stream closed');
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

  it('QUIT answers +OK and closes; a disconnect closes the stream too', async () => {
    const m = await RawClient.connect(port);
    await m.call(['MONITOR']);
    await until(() => openStreams.count === 1, 'monitor stream open');
    expect((await m.call(['QUIT']))[0].toString()).toBe('+OK\r\n');
    await m.untilClosed();
    await until(() => openStreams.count === 0, 'closed after QUIT');
    const d = await RawClient.connect(port);
    await d.call(['MONITOR']);
    await until(() => openStreams.count === 1, 'monitor stream open');
    d.close();
    await until(() => openStreams.count === 0, 'closed after disconnect');
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

  it('a monitor connection killed on the data store is re-established and logged; later lines arrive', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const proxy = await startProxy(
      {
        host: '127.0.0.1',
        port: 0,
        upstreamUrl: stack.platform.url,
        upstreamToken: stack.platform.token,
        upstreamTimeoutMs: 5000,
        upstreamConnections: 4,
        maxBatch: 1000,
        maxBulkLength: 512 * 1024 * 1024,
      },
      pino({ level: 'info' }, sink),
    );
    try {
      const m = await RawClient.connect(proxy.port);
      await m.call(['MONITOR']);
      const list = String(await store.client('LIST'));
      const id = /id=(\d+) [^\n]*flags=O/.exec(list)?.[1];
      expect(id).toBeDefined();
      await store.client('KILL', 'ID', id!);
      await until(() => lines.some((l) => l.includes('re-established')), 're-established in the log');
      expect(lines.some((l) => l.includes('dropped'))).toBe(true);
      const other = await RawClient.connect(proxy.port);
      await other.call(['SET', 'mon:again', '1']);
      expect(commandPart((await m.replies(1))[0])).toBe('"SET" "mon:again" "1"');
      expect(lines.join('\n')).not.toContain(stack.platform.token);
      m.close();
      other.close();
      await until(() => openStreams.count === 0, 'monitor stream closed');
    } finally {
      await proxy.stop();
    }
  });
});
