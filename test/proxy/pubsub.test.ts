// Pub/sub through the proxy (issue 5): replies and counts byte for byte against a direct redis-server,
// RESP2 subscribe-mode errors and PING, messages (binary included) published through the proxy, the
// REST API and redis-cli reaching every subscriber (raw, ioredis, node-redis, redis-cli), many
// channels and patterns per connection, upstream stream clean-up, refusals, reconnection after the
// upstream stream drops, and RESP3 push frames.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Writable } from 'node:stream';
import { Redis as IORedis } from 'ioredis';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreams } from '../../src/platform/kv/events.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { trackChild } from '../helpers/cleanup.js';
import { restartablePort } from '../helpers/ports.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, connectDataStore, startStack, startTestProxy, type Stack } from '../helpers/stack.js';
import { run } from './clients-run.js';

let stack: Stack;
let port: number;
let oraclePort: number;
/** A direct connection to the platform's data store (PUBSUB NUMSUB, CLIENT KILL, publishing around the proxy). */
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

async function until(cond: () => boolean | Promise<boolean>, what = 'condition', ms = 8000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every upstream stream is closed: the platform has none open and the data store no subscriber. */
async function streamsGone(): Promise<void> {
  await until(() => openStreams.count === 0, 'platform open streams = 0');
  await until(
    async () =>
      Number(await store.pubsub('NUMPAT')) === 0 &&
      ((await store.pubsub('CHANNELS')) as string[]).length === 0 &&
      ((await store.call('PUBSUB', 'SHARDCHANNELS')) as string[]).length === 0,
    'no subscription on the data store',
  );
}

/** How many replies Redis sends for a command (one per channel for the subscribe family). */
function replyCount(args: (string | Buffer)[]): number {
  const name = args[0].toString().toLowerCase();
  if (/^[ps]?(un)?subscribe$/.test(name)) return Math.max(1, args.length - 1);
  return 1;
}

const printable = (b: Buffer) => JSON.stringify(b.toString('latin1'));

/** Sends commands and reads every reply they get (one per channel for the subscribe family). */
function send(c: RawClient, ...commands: (string | Buffer)[][]): Promise<Buffer[]> {
  c.write(encodeCommands(commands));
  return c.replies(commands.reduce((n, cmd) => n + replyCount(cmd), 0));
}

/** Sends the same commands to the oracle and the proxy (one at a time, or as one burst); returns both reply lists. */
async function both(commands: (string | Buffer)[][], burst = false): Promise<{ oracle: Buffer[]; proxy: Buffer[] }> {
  const [o, p] = await Promise.all([RawClient.connect(oraclePort), RawClient.connect(port)]);
  try {
    const out = { oracle: [] as Buffer[], proxy: [] as Buffer[] };
    if (burst) {
      const n = commands.reduce((s, c) => s + replyCount(c), 0);
      o.write(encodeCommands(commands));
      p.write(encodeCommands(commands));
      [out.oracle, out.proxy] = await Promise.all([o.replies(n), p.replies(n)]);
    } else {
      for (const c of commands) {
        o.write(encodeCommands([c]));
        p.write(encodeCommands([c]));
        const [a, b] = await Promise.all([o.replies(replyCount(c)), p.replies(replyCount(c))]);
        out.oracle.push(...a);
        out.proxy.push(...b);
      }
    }
    return out;
  } finally {
    o.close();
    p.close();
  }
}

function expectSame(r: { oracle: Buffer[]; proxy: Buffer[] }): void {
  expect(r.proxy.map(printable)).toEqual(r.oracle.map(printable));
}

describe('replies and counts, byte for byte with redis-server (RESP2)', () => {
  const sequence: (string | Buffer)[][] = [
    ['SUBSCRIBE', 'a', 'a', 'b'],
    ['PSUBSCRIBE', 'a*', 'b*', 'a*'],
    ['PING'],
    ['PING', 'x y'],
    ['GET', 'ps:none'],
    ['SET', 'ps:k', 'v'],
    ['CLIENT', 'ID'],
    ['HELLO', '2'],
    ['MONITOR'],
    ['SUNSUBSCRIBE'],
    ['SUNSUBSCRIBE', 's1', 's2'],
    ['UNSUBSCRIBE', 'a', 'zz'],
    ['PUNSUBSCRIBE', 'a*', 'zz*'],
    ['UNSUBSCRIBE'],
    ['PUNSUBSCRIBE'],
    ['UNSUBSCRIBE'],
    ['PUNSUBSCRIBE'],
    ['GET', 'ps:none'],
    ['UNSUBSCRIBE', 'never'],
    ['PING'],
  ];

  it('subscribe, psubscribe, unsubscribe, punsubscribe, sunsubscribe, errors and PING in subscribe mode — one by one', async () => {
    expectSame(await both(sequence));
    await streamsGone();
  });

  it('the same sequence as one pipelined burst (replies wait for the upstream confirmation in order)', async () => {
    expectSame(await both(sequence, true));
    await streamsGone();
  });

  it('subscribing again to a channel or pattern, and every argument spelling', async () => {
    const seq = [
      ['subscribe', 'x'],
      ['Subscribe', 'x', 'y', 'x'],
      ['PSUBSCRIBE', '*'],
      ['psubscribe', '*', 'h?llo', '[ab]*'],
      ['UNSUBSCRIBE', 'y'],
      ['UNSUBSCRIBE', 'y'],
      ['PUNSUBSCRIBE', 'h?llo', '*'],
      ['PUNSUBSCRIBE', '[ab]*'],
      ['UNSUBSCRIBE', 'x'],
      ['PING', 'back'],
    ];
    expectSame(await both(seq));
    expectSame(await both(seq, true));
    await streamsGone();
  });

  it('binary and empty channel and pattern names (all 256 byte values)', async () => {
    const seq = [
      ['SUBSCRIBE', ALL_BYTES, '', 'a,b', '..', 'with space'],
      ['PSUBSCRIBE', Buffer.concat([ALL_BYTES, Buffer.from('*')])],
      ['UNSUBSCRIBE', ALL_BYTES, ''],
      ['PUNSUBSCRIBE', Buffer.concat([ALL_BYTES, Buffer.from('*')])],
      ['UNSUBSCRIBE', 'a,b', '..', 'with space'],
    ];
    expectSame(await both(seq));
    await streamsGone();
  });

  it('RESET leaves subscribe mode; QUIT answers +OK and closes', async () => {
    expectSame(await both([['SUBSCRIBE', 'r1', 'r2'], ['PSUBSCRIBE', 'r*'], ['RESET'], ['GET', 'ps:none'], ['UNSUBSCRIBE']]));
    await streamsGone();
    for (const side of [oraclePort, port]) {
      const c = await RawClient.connect(side);
      const replies = await c.call(['SUBSCRIBE', 'q1'], ['QUIT']);
      expect(replies.map(String)).toEqual(['*3\r\n$9\r\nsubscribe\r\n$2\r\nq1\r\n:1\r\n', '+OK\r\n']);
      await c.untilClosed();
    }
    await streamsGone();
  });

  it('100 channels and 20 patterns on one connection: counts as Redis, UNSUBSCRIBE without arguments leaves all', async () => {
    const channels = Array.from({ length: 100 }, (_, i) => `many:${i}`);
    const patterns = Array.from({ length: 20 }, (_, i) => `many:${i}*`);
    const [o, p] = await Promise.all([RawClient.connect(oraclePort), RawClient.connect(port)]);
    try {
      for (const c of [o, p])
        c.write(
          encodeCommands([
            ['SUBSCRIBE', ...channels],
            ['PSUBSCRIBE', ...patterns],
          ]),
        );
      const [ro, rp] = await Promise.all([o.replies(120), p.replies(120)]);
      expect(rp.map(printable)).toEqual(ro.map(printable));
      await until(() => openStreams.count === 120, '120 upstream streams');
      expect(await store.pubsub('NUMPAT')).toBe(20);
      // Redis goes through its hash table in its own order; the names and the falling counts must agree.
      const shape = (rs: Buffer[]) => ({
        names: rs.map((r) => r.toString().split('\r\n')[4]).sort(),
        counts: rs.map((r) => r.toString().split('\r\n')[5]),
      });
      const unsubscribeAll = (c: RawClient, name: string, n: number) => {
        c.write(encodeCommands([[name]]));
        return c.replies(n);
      };
      const [uo, up] = await Promise.all([unsubscribeAll(o, 'UNSUBSCRIBE', 100), unsubscribeAll(p, 'UNSUBSCRIBE', 100)]);
      expect(shape(up)).toEqual(shape(uo));
      const [po, pp] = await Promise.all([unsubscribeAll(o, 'PUNSUBSCRIBE', 20), unsubscribeAll(p, 'PUNSUBSCRIBE', 20)]);
      expect(shape(pp)).toEqual(shape(po));
      expect(shape(pp).counts.at(-1)).toBe(':0');
    } finally {
      o.close();
      p.close();
    }
    await streamsGone();
  });
});

describe('messages, byte for byte with redis-server', () => {
  it('message then pmessage, as Redis orders them, for text, empty, comma/CRLF and all-256-byte payloads and channels', async () => {
    const channels = [Buffer.from('m:1'), Buffer.concat([Buffer.from('m:'), ALL_BYTES]), Buffer.from('m:a,b')];
    const payloads = [Buffer.from('hello'), Buffer.alloc(0), Buffer.from('a,b\r\nc\nd\re'), ALL_BYTES];
    const frames: Record<string, string[]> = {};
    for (const [name, p] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const sub = await RawClient.connect(p);
      const pub = await RawClient.connect(p);
      await send(sub, ['SUBSCRIBE', ...channels], ['PSUBSCRIBE', 'm:*']);
      // A message and the pmessage of the same PUBLISH come from two upstream streams; the proxy
      // writes them in Redis' order, message first (pubsub-order.ts).
      frames[name] = [];
      for (const ch of channels)
        for (const payload of payloads) {
          expect((await pub.call(['PUBLISH', ch, payload]))[0].toString()).toBe(':2\r\n');
          frames[name].push(...(await sub.replies(2)).map(printable));
        }
      sub.close();
      pub.close();
    }
    expect(frames.proxy).toEqual(frames.oracle);
    await streamsGone();
  });

  it('keeps the order of messages within a channel', async () => {
    const sub = await RawClient.connect(port);
    await sub.call(['SUBSCRIBE', 'order']);
    const pub = new IORedis({ port, host: '127.0.0.1' });
    const p = pub.pipeline();
    for (let i = 0; i < 500; i++) p.publish('order', `m${i}`);
    await p.exec();
    const got = await sub.replies(500);
    expect(got.map((r) => r.toString().split('\r\n')[6])).toEqual(Array.from({ length: 500 }, (_, i) => `m${i}`));
    sub.close();
    pub.disconnect();
    await streamsGone();
  });
});

describe('every subscriber gets every message, binary payloads included', () => {
  it('raw, ioredis, node-redis (RESP 2) and redis-cli subscribers; publishers: the proxy, POST /publish, redis-cli via the proxy and on the data store', async () => {
    const channel = 'fan';
    // Subscribers.
    const raw = await RawClient.connect(port);
    await raw.call(['SUBSCRIBE', channel]);
    const io = new IORedis({ port, host: '127.0.0.1' });
    const ioGot: Buffer[] = [];
    io.on('messageBuffer', (_ch: Buffer, msg: Buffer) => ioGot.push(msg));
    expect(await io.subscribe(channel)).toBe(1);
    const nr = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false }, RESP: 2 });
    await nr.connect();
    const nrGot: Buffer[] = [];
    await nr.subscribe(channel, (msg: Buffer) => nrGot.push(msg), true);
    const cli = spawnCli(['subscribe', channel]);
    await until(async () => ((await store.pubsub('NUMSUB', channel)) as [string, number])[1] === 4, '4 subscribers upstream');

    // Publishers.
    const pub = new IORedis({ port, host: '127.0.0.1' });
    expect(await pub.publish(channel, ALL_BYTES)).toBe(4);
    const rest = await kv(stack.platform, `/publish/${channel}`, { method: 'POST', body: ALL_BYTES });
    expect(rest.json).toEqual({ result: 4 });
    const viaCli = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '-x', 'publish', channel], { input: ALL_BYTES });
    expect(viaCli.stdout).toBe('4\n');
    const ds = stack.platform.dataStore;
    const direct = await runWithEnv(
      'redis-cli',
      ['-h', ds.host, '-p', String(ds.port), ...(ds.username ? ['--user', ds.username] : []), '-x', 'publish', channel],
      ALL_BYTES,
      { REDISCLI_AUTH: ds.password ?? '' },
    );
    expect(direct.stdout).toBe('4\n');

    const frame = Buffer.concat([Buffer.from(`*3\r\n$7\r\nmessage\r\n$3\r\nfan\r\n$256\r\n`), ALL_BYTES, Buffer.from('\r\n')]);
    const rawGot = await raw.replies(4);
    for (const r of rawGot) expect(printable(r)).toBe(printable(frame));
    await until(() => ioGot.length === 4 && nrGot.length === 4, 'ioredis and node-redis messages');
    for (const m of [...ioGot, ...nrGot]) expect(m.equals(ALL_BYTES)).toBe(true);
    const cliLine = Buffer.concat([Buffer.from('message\nfan\n'), ALL_BYTES, Buffer.from('\n')]);
    await until(() => cli.out().length >= Buffer.from('subscribe\nfan\n1\n').length + 4 * cliLine.length, 'redis-cli output');
    expect(printable(cli.out())).toBe(printable(Buffer.concat([Buffer.from('subscribe\nfan\n1\n'), cliLine, cliLine, cliLine, cliLine])));

    cli.kill();
    raw.close();
    io.disconnect();
    pub.disconnect();
    await nr.close();
    await streamsGone();
  });
});

describe('ioredis 5', () => {
  it('subscribe, psubscribe, messageBuffer/pmessageBuffer, unsubscribe and quit', async () => {
    const sub = new IORedis({ port, host: '127.0.0.1' });
    const pub = new IORedis({ port, host: '127.0.0.1' });
    const got: string[] = [];
    sub.on('messageBuffer', (ch: Buffer, msg: Buffer) => got.push(`message ${ch} ${msg.equals(ALL_BYTES) ? '<256 bytes>' : msg}`));
    sub.on('pmessageBuffer', (pat: Buffer, ch: Buffer, msg: Buffer) =>
      got.push(`pmessage ${pat} ${ch} ${msg.equals(ALL_BYTES) ? '<256 bytes>' : msg}`),
    );
    expect(await sub.subscribe('io:a', 'io:b')).toBe(2);
    expect(await sub.psubscribe('io:*')).toBe(3);
    expect(await pub.publish('io:a', ALL_BYTES)).toBe(2);
    expect(await pub.publish('io:c', 'only the pattern')).toBe(1);
    await until(() => got.length === 3, 'ioredis messages');
    expect(got.sort()).toEqual(['message io:a <256 bytes>', 'pmessage io:* io:a <256 bytes>', 'pmessage io:* io:c only the pattern']);
    expect(await sub.unsubscribe('io:a')).toBe(2);
    expect(await sub.punsubscribe('io:*')).toBe(1); // (argument-less punsubscribe() hangs in ioredis 5, against redis-server too)
    expect(await pub.publish('io:a', 'x')).toBe(0);
    expect(await sub.quit()).toBe('OK');
    pub.disconnect();
    await streamsGone();
  });
});

describe('node-redis 6', () => {
  it('with RESP: 2: subscribe, pSubscribe (buffers), unsubscribe, close', async () => {
    const sub = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false }, RESP: 2 });
    const pub = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false }, RESP: 2 });
    await Promise.all([sub.connect(), pub.connect()]);
    const got: string[] = [];
    await sub.subscribe(
      ['nr:a', 'nr:b'],
      (msg: Buffer, ch: Buffer) => got.push(`${ch} ${msg.equals(ALL_BYTES) ? '<256 bytes>' : msg}`),
      true,
    );
    // String mode: the binary payload is decoded by node-redis, so only its channel is checked.
    await sub.pSubscribe('nr:*', (msg: string, ch: string) => got.push(`* ${ch} ${ch === 'nr:b' ? '<binary>' : msg}`));
    expect(await pub.publish('nr:b', ALL_BYTES)).toBe(2);
    expect(await pub.publish('nr:c', 'text')).toBe(1);
    await until(() => got.length === 3, 'node-redis messages');
    expect(got.slice().sort()).toEqual(['* nr:b <binary>', '* nr:c text', 'nr:b <256 bytes>']);
    await sub.unsubscribe();
    await sub.pUnsubscribe();
    expect(await pub.publish('nr:b', 'x')).toBe(0);
    await sub.close();
    await pub.close();
    await streamsGone();
  });

  it('with its default RESP3: subscribe and pSubscribe (push frames), and commands on the subscribed connection', async () => {
    const client = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
    await client.connect();
    const sub = client.duplicate();
    await sub.connect();
    const got: string[] = [];
    await sub.subscribe('nr3:a', (msg: Buffer) => got.push(`a ${msg.equals(ALL_BYTES) ? '<256 bytes>' : msg}`), true);
    await sub.pSubscribe('nr3:*', (msg: string, ch: string) => got.push(`* ${ch} ${msg}`));
    // RESP3: the subscribed connection still runs commands.
    expect(await sub.set('nr3:k', 'v')).toBe('OK');
    expect(await client.publish('nr3:a', ALL_BYTES)).toBe(2);
    expect(await client.publish('nr3:z', 'text')).toBe(1);
    await until(() => got.length === 3, 'node-redis RESP3 messages');
    expect(got).toContain('a <256 bytes>');
    expect(got).toContain('* nr3:z text');
    await sub.unsubscribe();
    await sub.pUnsubscribe();
    await sub.close();
    await client.close();
    await streamsGone();
  });
});

describe('RESP3 push frames', () => {
  it('subscribe/psubscribe/unsubscribe confirmations, messages, PING and commands in subscribe mode as redis-server sends them after HELLO 3', async () => {
    const seq = [
      ['UNSUBSCRIBE'],
      ['PUNSUBSCRIBE'],
      ['SUBSCRIBE', 'p3:a', 'p3:b'],
      ['PSUBSCRIBE', 'p3:*'],
      ['PING'],
      ['PING', 'x'],
      ['GET', 'ps:none'],
      ['SET', 'p3:k', 'v'],
      ['GET', 'p3:k'],
      ['HGETALL', 'p3:none'],
      ['SUBSCRIBE', 'p3:a', 'p3:c'],
      ['UNSUBSCRIBE', 'p3:a', 'p3:zz'],
      ['PUNSUBSCRIBE', 'p3:*', 'p3:zz*'],
      ['SUNSUBSCRIBE'],
      ['UNSUBSCRIBE', 'p3:b'],
      ['UNSUBSCRIBE', 'p3:c'],
      ['UNSUBSCRIBE'],
      ['DEL', 'p3:k'],
    ];
    const [o, p] = await Promise.all([RawClient.connect(oraclePort), RawClient.connect(port)]);
    try {
      const ho = await o.call(['HELLO', '3']);
      const hp = await p.call(['HELLO', '3']);
      expect(ho).toHaveLength(1);
      expect(hp).toHaveLength(1);
      for (const cmd of seq) {
        const [a, b] = await Promise.all([send(o, cmd), send(p, cmd)]);
        expect(b.map(printable)).toEqual(a.map(printable));
      }
      // Messages as push frames.
      await Promise.all([send(o, ['SUBSCRIBE', 'p3:m']), send(p, ['SUBSCRIBE', 'p3:m'])]);
      const pubO = await RawClient.connect(oraclePort);
      const pubP = await RawClient.connect(port);
      await pubO.call(['PUBLISH', 'p3:m', ALL_BYTES]);
      await pubP.call(['PUBLISH', 'p3:m', ALL_BYTES]);
      const [[mo], [mp]] = await Promise.all([o.replies(1), p.replies(1)]);
      expect(printable(mp)).toBe(printable(mo));
      expect(mp[0]).toBe(0x3e); // '>'
      // PSUBSCRIBE's pmessage, then a pipelined burst of commands on the subscribed connection.
      await Promise.all([send(o, ['PSUBSCRIBE', 'p3:*']), send(p, ['PSUBSCRIBE', 'p3:*'])]);
      await pubO.call(['PUBLISH', 'p3:x', 'only the pattern']);
      await pubP.call(['PUBLISH', 'p3:x', 'only the pattern']);
      const [[po], [pp]] = await Promise.all([o.replies(1), p.replies(1)]);
      expect(printable(pp)).toBe(printable(po));
      const burst = [['SET', 'p3:k', 'v'], ['GET', 'p3:k'], ['PING'], ['UNSUBSCRIBE'], ['PUNSUBSCRIBE'], ['DEL', 'p3:k']];
      const [bo, bp] = await Promise.all([send(o, ...burst), send(p, ...burst)]);
      expect(bp.map(printable)).toEqual(bo.map(printable));
      pubO.close();
      pubP.close();
    } finally {
      o.close();
      p.close();
    }
    await streamsGone();
  });

  it('HELLO 2 on a subscribed RESP3 connection: later messages and confirmations are RESP2 arrays, and subscribe-mode rules apply', async () => {
    const frames: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const c = await RawClient.connect(side);
      const pub = await RawClient.connect(side);
      await c.call(['HELLO', '3']); // the map holds the connection id: not compared
      const out = await send(c, ['SUBSCRIBE', 'h2:a']);
      await c.call(['HELLO', '2']);
      out.push(...(await send(c, ['SUBSCRIBE', 'h2:b'], ['GET', 'ps:none'], ['PING'])));
      await pub.call(['PUBLISH', 'h2:b', 'now RESP2']);
      out.push(...(await c.replies(1)));
      out.push(...(await send(c, ['RESET'], ['GET', 'ps:none'])));
      frames[name] = out.map(printable);
      c.close();
      pub.close();
    }
    expect(frames.proxy).toEqual(frames.oracle);
    await streamsGone();
  });

  it('a subscriber publishing to its own channel: the same frames; Redis pushes the message before the PUBLISH reply, the proxy may not', async () => {
    const frames: Record<string, string[]> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const c = await RawClient.connect(side);
      await c.call(['HELLO', '3']);
      await send(c, ['SUBSCRIBE', 'self']);
      frames[name] = (await send(c, ['PUBLISH', 'self', 'me'], ['PING']).then(async (r) => [...r, ...(await c.replies(1))]))
        .map(printable)
        .sort();
      c.close();
    }
    expect(frames.proxy).toEqual(frames.oracle);
    await streamsGone();
  });
});

describe('redis-cli', () => {
  it('`redis-cli subscribe` and `redis-cli psubscribe` print what they print against redis-server', async () => {
    const outputs: Record<string, string> = {};
    for (const [name, p] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const sub = spawnCli(['subscribe', 'cli:a', 'cli:b'], p);
      const psub = spawnCli(['psubscribe', 'cli:*'], p);
      await until(
        () => sub.out().toString().includes('cli:b\n2\n') && psub.out().toString().includes('cli:*\n1\n'),
        `redis-cli subscribed (${name})`,
      );
      for (const args of [
        ['publish', 'cli:a', 'hello world'],
        ['publish', 'cli:b', ''],
        ['publish', 'cli:c', 'pattern only'],
      ]) {
        await run('redis-cli', ['-h', '127.0.0.1', '-p', String(p), ...args]);
      }
      await until(
        () => psub.out().toString().endsWith('cli:c\npattern only\n') && sub.out().toString().endsWith('message\ncli:b\n\n'),
        `redis-cli messages (${name})`,
      );
      outputs[name] = `${sub.out()}---\n${psub.out()}`;
      sub.kill();
      psub.kill();
    }
    expect(outputs.proxy).toBe(outputs.oracle);
    expect(outputs.proxy).toContain('message\ncli:a\nhello world\n');
    await streamsGone();
  });
});

describe('upstream stream clean-up', () => {
  it('UNSUBSCRIBE and PUNSUBSCRIBE close exactly the streams they leave', async () => {
    const c = await RawClient.connect(port);
    await send(c, ['SUBSCRIBE', 'cl:a', 'cl:b', 'cl:c'], ['PSUBSCRIBE', 'cl:*', 'cl:?']);
    await until(() => openStreams.count === 5, '5 streams');
    await c.call(['UNSUBSCRIBE', 'cl:b']);
    await until(
      async () => openStreams.count === 4 && ((await store.pubsub('NUMSUB', 'cl:a', 'cl:b')) as unknown[]).join() === 'cl:a,1,cl:b,0',
      'cl:b closed',
    );
    await c.call(['PUNSUBSCRIBE', 'cl:?']);
    await until(async () => openStreams.count === 3 && Number(await store.pubsub('NUMPAT')) === 1, 'cl:? closed');
    await send(c, ['UNSUBSCRIBE'], ['PUNSUBSCRIBE']);
    await streamsGone();
    c.close();
  });

  it('RESET, QUIT and a disconnect close every stream', async () => {
    for (const leave of ['RESET', 'QUIT', 'disconnect']) {
      const c = await RawClient.connect(port);
      await send(c, ['SUBSCRIBE', 'cl:x', 'cl:y'], ['PSUBSCRIBE', 'cl:*']);
      await until(() => openStreams.count === 3, `3 streams before ${leave}`);
      if (leave === 'disconnect') c.close();
      else expect((await c.call([leave]))[0].toString()).toBe(leave === 'RESET' ? '+RESET\r\n' : '+OK\r\n');
      await streamsGone();
      c.close();
    }
  });

  it('a disconnect while subscriptions are still being confirmed leaves nothing behind', async () => {
    for (let i = 0; i < 20; i++) {
      const c = await RawClient.connect(port);
      c.write(
        encodeCommands([
          ['SUBSCRIBE', `race:${i}`, 'race:x'],
          ['PSUBSCRIBE', 'race:*'],
        ]),
      );
      if (i % 2 === 0) await new Promise((r) => setTimeout(r, i));
      c.close();
    }
    await streamsGone();
  });

  it('UNSUBSCRIBE and RESET pipelined right behind SUBSCRIBE answer in order', async () => {
    const seq = [
      ['SUBSCRIBE', 'pl:a', 'pl:b'],
      ['UNSUBSCRIBE', 'pl:a'],
      ['PSUBSCRIBE', 'pl:*'],
      ['RESET'],
      ['SUBSCRIBE', 'pl:c'],
      ['QUIT'],
    ];
    expectSame(await both(seq, true));
    await streamsGone();
  });
});

describe('a subscriber that does not read', () => {
  it('is disconnected once more than 32 MB wait for it, like Redis (client-output-buffer-limit pubsub)', async () => {
    const results: Record<string, boolean> = {};
    for (const [name, side] of [
      ['oracle', oraclePort],
      ['proxy', port],
    ] as const) {
      const sub = await RawClient.connect(side);
      await send(sub, ['SUBSCRIBE', 'slow']);
      sub.socket.pause();
      const pub = new IORedis({ port: side, host: '127.0.0.1' });
      const big = Buffer.alloc(1024 * 1024, 'x');
      for (let i = 0; i < 48 && !sub.socket.destroyed; i++) await pub.publish('slow', big);
      sub.socket.resume();
      results[name] = await sub.untilClosed(10_000).then(
        () => true,
        () => false,
      );
      pub.disconnect();
      sub.close();
    }
    expect(results).toEqual({ oracle: true, proxy: true });
    await streamsGone();
  }, 60_000);
});

describe('refusals', () => {
  it('a channel the token may not use: NOPERM as Redis, for the whole command, and nothing stays subscribed', async () => {
    const setup = ['ACL', 'SETUSER', 'limited', 'on', '>limited-pass', '~*', '&allowed:*', '+@all'];
    expect((await command(stack.platform, setup)).json).toEqual({ result: 'OK' });
    const tokenAnswer = await command(stack.platform, ['ACL', 'RESTTOKEN', 'limited', 'limited-pass']);
    const token = tokenAnswer.json.result as string;
    const proxy = await startTestProxy({ url: stack.platform.url, token });
    const oracleSetup = await RawClient.connect(oraclePort);
    await oracleSetup.call(setup.map(String));
    oracleSetup.close();
    try {
      const seq = [
        ['SUBSCRIBE', 'forbidden'],
        ['SUBSCRIBE', 'allowed:1', 'forbidden'],
        ['PSUBSCRIBE', 'forbidden*'],
        ['SUBSCRIBE', 'allowed:2'],
        ['PSUBSCRIBE', 'allowed:*'],
        ['UNSUBSCRIBE'],
        ['PUNSUBSCRIBE'],
      ];
      const [o, p] = await Promise.all([RawClient.connect(oraclePort), RawClient.connect(proxy.port)]);
      await o.call(['AUTH', 'limited', 'limited-pass']);
      const out = { oracle: [] as Buffer[], proxy: [] as Buffer[] };
      for (const cmd of seq) {
        const n = cmd[0].startsWith('SUB') && cmd.length > 2 ? 1 : replyCount(cmd); // a refused command answers one error
        o.write(encodeCommands([cmd]));
        p.write(encodeCommands([cmd]));
        const [a, b] = await Promise.all([o.replies(n), p.replies(n)]);
        out.oracle.push(...a);
        out.proxy.push(...b);
      }
      expectSame(out);
      expect(out.proxy[0].toString()).toBe('-NOPERM this user has no permissions to access one of the channels used as arguments\r\n');
      o.close();
      p.close();
      await streamsGone();
    } finally {
      await proxy.stop();
      const cleanup = await RawClient.connect(oraclePort);
      await cleanup.call(['ACL', 'DELUSER', 'limited']);
      cleanup.close();
      await command(stack.platform, ['ACL', 'DELUSER', 'limited']);
    }
  });

  it('an unreachable upstream answers an error, and the connection stays usable', async () => {
    const proxy = await startTestProxy({ url: 'http://127.0.0.1:1', token: 'unreachable-token-123' }, { upstreamTimeoutMs: 2000 });
    try {
      const c = await RawClient.connect(proxy.port);
      const [sub] = await c.call(['SUBSCRIBE', 'x']);
      expect(sub.toString()).toMatch(/^-ERR upstream event stream failed: .*ECONNREFUSED.*\r\n$/);
      expect(sub.toString()).not.toContain('unreachable-token-123');
      // Not in subscribe mode. (A command pipelined right behind the SUBSCRIBE would have been judged
      // in subscribe mode: the proxy decides when it reads it, before the upstream has answered.)
      expect((await c.call(['PING']))[0].toString()).toBe('+PONG\r\n');
      c.close();
    } finally {
      await proxy.stop();
    }
  });
});

describe('an upstream without the base64 event extension (the real service)', () => {
  it('plain events: names are ours byte for byte, messages are text; what is lost is documented', async () => {
    const http = await import('node:http');
    const open = new Map<string, import('node:http').ServerResponse>();
    let asked: string | undefined;
    const fake = http.createServer((req, res) => {
      asked = req.headers['respgate-event-encoding'] as string;
      const [, kind, name] = (req.url ?? '').split('/');
      res.writeHead(200, { 'Content-Type': 'text/event-stream' }); // no Respgate-Event-Encoding echo
      res.write(`data: ${kind},${decodeURIComponent(name)},1\n\n`);
      open.set(`${kind}/${decodeURIComponent(name)}`, res);
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(fake.address() as import('node:net').AddressInfo).port}`;
    const proxy = await startTestProxy({ url, token: 'plain-upstream-token' });
    try {
      const c = await RawClient.connect(proxy.port);
      await send(c, ['SUBSCRIBE', 'a,b', 'caf\u00e9'], ['PSUBSCRIBE', 'p*']);
      expect(asked).toBe('base64');
      // Streams are separate connections: one event at a time, so the order is known.
      const event = async (stream: string, data: string) => {
        open.get(stream)!.write(data);
        return (await c.replies(1))[0].toString('utf8');
      };
      expect(await event('subscribe/a,b', 'data: message,a,b,hello, world\n\n')).toBe(
        '*3\r\n$7\r\nmessage\r\n$3\r\na,b\r\n$12\r\nhello, world\r\n',
      );
      // CR or CRLF in a message would arrive as LF: several data lines joined.
      expect(await event('subscribe/caf\u00e9', 'data: message,caf\u00e9,two\ndata: lines\n\n')).toBe(
        '*3\r\n$7\r\nmessage\r\n$5\r\ncaf\u00e9\r\n$9\r\ntwo\nlines\r\n',
      );
      expect(await event('psubscribe/p*', 'data: pmessage,p*,p1,x,y\n\n')).toBe(
        '*4\r\n$8\r\npmessage\r\n$2\r\np*\r\n$2\r\np1\r\n$3\r\nx,y\r\n',
      );
      // Channel "p,2": ambiguous in plain text, cut at its first comma.
      expect(await event('psubscribe/p*', 'data: pmessage,p*,p,2,z\n\n')).toBe(
        '*4\r\n$8\r\npmessage\r\n$2\r\np*\r\n$1\r\np\r\n$3\r\n2,z\r\n',
      );
      // Invalid UTF-8 already became U+FFFD upstream.
      expect(await event('subscribe/a,b', 'data: message,a,b,\ufffd\n\n')).toBe('*3\r\n$7\r\nmessage\r\n$3\r\na,b\r\n$3\r\n\ufffd\r\n');
      c.close();
      await until(
        () => [...open.values()].every((r) => r.destroyed || r.writableEnded || r.socket === null || r.socket.destroyed),
        'fake streams closed',
      );
    } finally {
      await proxy.stop();
      fake.closeAllConnections();
      await new Promise<void>((r) => fake.close(() => r()));
    }
  });
});

describe('reconnection after the upstream stream drops', () => {
  /** A proxy whose log lines are kept. */
  async function loggedProxy(platform: { url: string; token: string }): Promise<{ proxy: RunningProxy; lines: () => string[] }> {
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
        upstreamUrl: platform.url,
        upstreamToken: platform.token,
        upstreamTimeoutMs: 5000,
        upstreamConnections: 4,
        maxBatch: 1000,
        maxBulkLength: 512 * 1024 * 1024,
      },
      pino({ level: 'info' }, sink),
    );
    return { proxy, lines: () => lines };
  }

  it('a subscription killed on the data store is re-established and logged; later messages arrive', async () => {
    const { proxy, lines } = await loggedProxy(stack.platform);
    try {
      const sub = await RawClient.connect(proxy.port);
      await send(sub, ['SUBSCRIBE', 'rc:a'], ['PSUBSCRIBE', 'rc:*']);
      await until(() => openStreams.count === 2, '2 streams');
      expect(await store.client('KILL', 'TYPE', 'pubsub')).toBe(2);
      await until(() => lines().filter((l) => l.includes('re-established')).length === 2, 're-established twice in the log');
      const pub = await RawClient.connect(proxy.port);
      expect((await pub.call(['PUBLISH', 'rc:a', 'after']))[0].toString()).toBe(':2\r\n');
      const got = (await sub.replies(2)).map(String).sort();
      expect(got).toEqual([
        '*3\r\n$7\r\nmessage\r\n$4\r\nrc:a\r\n$5\r\nafter\r\n',
        '*4\r\n$8\r\npmessage\r\n$4\r\nrc:*\r\n$4\r\nrc:a\r\n$5\r\nafter\r\n',
      ]);
      const dropped = lines().filter((l) => l.includes('dropped'));
      expect(dropped).toHaveLength(2);
      expect(JSON.parse(dropped[0])).toMatchObject({ level: 40, attempt: 1 });
      expect(lines().join('\n')).not.toContain(stack.platform.token);
      sub.close();
      pub.close();
      await streamsGone();
    } finally {
      await proxy.stop();
    }
  });

  it('a platform that stops and comes back on the same port: the subscriber gets messages again', async () => {
    // Restarted on the same port: one no other test's port-0 bind can take meanwhile.
    const httpPort = await restartablePort();
    const first = await startTestPlatform({ httpPort });
    const { proxy, lines } = await loggedProxy(first);
    let second: RunningPlatform | undefined;
    try {
      const sub = await RawClient.connect(proxy.port);
      expect((await sub.call(['SUBSCRIBE', 'back']))[0].toString()).toBe('*3\r\n$9\r\nsubscribe\r\n$4\r\nback\r\n:1\r\n');
      await first.stop();
      await until(() => lines().some((l) => l.includes('dropped')), 'drop logged');
      second = await startTestPlatform({ httpPort, token: first.token, readonlyToken: first.readonlyToken });
      await until(() => lines().some((l) => l.includes('re-established')), 're-established', 15_000);
      const pub = await RawClient.connect(proxy.port);
      expect((await pub.call(['PUBLISH', 'back', 'again']))[0].toString()).toBe(':1\r\n');
      expect((await sub.replies(1))[0].toString()).toBe('*3\r\n$7\r\nmessage\r\n$4\r\nback\r\n$5\r\nagain\r\n');
      expect(lines().join('\n')).not.toContain(first.token);
      sub.close();
      pub.close();
      await until(() => openStreams.count === 0, 'streams closed');
    } finally {
      await proxy.stop();
      await second?.stop();
    }
  }, 30_000);
});

// ---- helpers: long-running redis-cli ----

function spawnCli(args: string[], p = port) {
  const child: ChildProcessWithoutNullStreams = trackChild(spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(p), ...args]));
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  child.on('error', () => undefined);
  return { out: () => Buffer.concat(chunks), kill: () => child.kill('SIGKILL') };
}

function runWithEnv(
  program: string,
  args: string[],
  input: Buffer,
  env: Record<string, string>,
): Promise<{ stdout: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: { ...process.env, ...env } });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, code }));
    child.stdin.end(input);
  });
}
