// Sharded pub/sub through the proxy (issue 22): SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB SHARDCHANNELS
// and SHARDNUMSUB against a direct redis-server, byte for byte in RESP2 and RESP3 (the service is one
// shard: Redis 7.0's standalone semantics, `smessage` pushes and counts of their own); SPUBLISH over
// REST reaching a subscriber of the proxy; and Socket.IO's sharded Redis adapter working through it.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShardedAdapter } from '@socket.io/redis-adapter';
import { createClient } from 'redis';
import { Server as SocketServer } from 'socket.io';
import { io as socketClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreams } from '../../src/platform/kv/events.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { kv } from '../helpers/platform.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let ports: { oracle: number; proxy: number };

beforeAll(async () => {
  stack = await startStack();
  ports = { oracle: stack.oracle.endpoint.port, proxy: stack.proxy.port };
});

afterAll(async () => {
  await stack?.stop();
});

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const printable = (b: Buffer) => JSON.stringify(b.toString('latin1'));

/** How many replies Redis sends for a command (one per name for the subscribe family). */
function replyCount(args: (string | Buffer)[]): number {
  return /^[ps]?(un)?subscribe$/i.test(args[0].toString()) ? Math.max(1, args.length - 1) : 1;
}

function send(c: RawClient, ...commands: (string | Buffer)[][]): Promise<Buffer[]> {
  c.write(encodeCommands(commands));
  return c.replies(commands.reduce((n, cmd) => n + replyCount(cmd), 0));
}

async function until(cond: () => boolean, what: string, ms = 8000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Runs `steps` on each side (the oracle, then the proxy) with a subscriber and a publisher connection,
 * and returns every frame the subscriber and publisher read, in order.
 */
async function onBoth(
  steps: (sub: RawClient, pub: RawClient, out: Buffer[]) => Promise<void>,
): Promise<{ oracle: string[]; proxy: string[] }> {
  const result = { oracle: [] as string[], proxy: [] as string[] };
  for (const side of ['oracle', 'proxy'] as const) {
    const [sub, pub] = await Promise.all([RawClient.connect(ports[side]), RawClient.connect(ports[side])]);
    const out: Buffer[] = [];
    try {
      await steps(sub, pub, out);
    } finally {
      sub.close();
      pub.close();
    }
    result[side] = out.map(printable);
    await until(() => openStreams.count === 0, 'no upstream stream left');
  }
  return result;
}

describe('SSUBSCRIBE, SUNSUBSCRIBE and their counts, byte for byte with redis-server', () => {
  const sequence: (string | Buffer)[][] = [
    ['SUNSUBSCRIBE'],
    ['SUNSUBSCRIBE', 'never'],
    ['SSUBSCRIBE', 's1', 's2', 's1'],
    ['SUBSCRIBE', 'c1'],
    ['PSUBSCRIBE', 'p*'],
    ['SSUBSCRIBE', ALL_BYTES, ''],
    ['CLIENT', 'INFO'],
    ['GET', 'k'],
    ['PING'],
    ['PING', 'x'],
    ['SUNSUBSCRIBE', 's1', 'zz'],
    ['UNSUBSCRIBE'],
    ['PUNSUBSCRIBE'],
    ['SUNSUBSCRIBE', ALL_BYTES, ''],
    ['GET', 'k'],
    ['SUNSUBSCRIBE'],
    ['SUNSUBSCRIBE'],
    ['PING'],
  ];

  for (const burst of [false, true]) {
    it(`RESP2, ${burst ? 'as one pipelined burst' : 'one command at a time'}: confirmations, shard counts apart from channels + patterns, subscribe mode`, async () => {
      const r = await onBoth(async (sub, _pub, out) => {
        if (burst) out.push(...(await send(sub, ...sequence)));
        else for (const cmd of sequence) out.push(...(await send(sub, cmd)));
      });
      expect(r.proxy).toEqual(r.oracle);
      expect(r.proxy).toContain(printable(Buffer.from('*3\r\n$10\r\nssubscribe\r\n$2\r\ns2\r\n:2\r\n')));
    });
  }

  it('RESP3: push confirmations, commands while subscribed, smessage pushes', async () => {
    const r = await onBoth(async (sub, pub, out) => {
      await sub.call(['HELLO', '3']); // its map holds the connection id: not compared
      out.push(...(await send(sub, ['SSUBSCRIBE', 'r3:a', 'r3:b'], ['SUBSCRIBE', 'r3:a'], ['GET', 'k'])));
      out.push(...(await pub.call(['SPUBLISH', 'r3:a', 'shard'])));
      out.push(...(await sub.replies(1)));
      out.push(...(await pub.call(['PUBLISH', 'r3:a', 'plain'])));
      out.push(...(await sub.replies(1)));
      // Without arguments Redis leaves them in its hash table's order: named here.
      out.push(...(await send(sub, ['SUNSUBSCRIBE', 'r3:a', 'r3:b'], ['UNSUBSCRIBE'], ['PING'])));
    });
    expect(r.proxy).toEqual(r.oracle);
    expect(r.proxy).toContain(printable(Buffer.from('>3\r\n$8\r\nsmessage\r\n$4\r\nr3:a\r\n$5\r\nshard\r\n')));
  });
});

describe('SPUBLISH and the shard channel namespace', () => {
  it('smessage frames for binary, empty and CRLF payloads; PUBLISH does not reach a shard channel, nor SPUBLISH a channel', async () => {
    const payloads = [Buffer.from('hello'), Buffer.alloc(0), Buffer.from('a,b\r\nc\nd'), ALL_BYTES];
    const channel = Buffer.concat([Buffer.from('sm:'), ALL_BYTES]);
    const r = await onBoth(async (sub, pub, out) => {
      out.push(...(await send(sub, ['SSUBSCRIBE', channel, 'sm:both'], ['SUBSCRIBE', 'sm:both'])));
      for (const payload of payloads) {
        out.push(...(await pub.call(['SPUBLISH', channel, payload])));
        out.push(...(await sub.replies(1)));
      }
      // The same name as a shard channel and a channel: each publish reaches its own namespace only.
      out.push(...(await pub.call(['SPUBLISH', 'sm:both', 'to the shard channel'])));
      out.push(...(await sub.replies(1)));
      out.push(...(await pub.call(['PUBLISH', 'sm:both', 'to the channel'])));
      out.push(...(await sub.replies(1)));
      out.push(...(await pub.call(['SPUBLISH', 'sm:nobody', 'x'], ['PUBLISH', channel, 'not a channel'])));
      out.push(
        ...(await pub.call(
          ['PUBSUB', 'SHARDCHANNELS', 'sm:b*'],
          ['PUBSUB', 'SHARDNUMSUB', 'sm:both', 'sm:nobody'],
          ['PUBSUB', 'CHANNELS', 'sm:*'],
        )),
      );
    });
    expect(r.proxy).toEqual(r.oracle);
    expect(r.proxy.filter((f) => f.includes('smessage'))).toHaveLength(payloads.length + 1);
  });

  it('SPUBLISH over REST (POST /spublish) reaches a subscriber of the proxy; the stream closes with SUNSUBSCRIBE', async () => {
    const sub = await RawClient.connect(ports.proxy);
    await send(sub, ['SSUBSCRIBE', 'rest:s']);
    const answer = await kv(stack.platform, '/spublish/rest:s', { method: 'POST', body: ALL_BYTES });
    expect(answer.json).toEqual({ result: 1 });
    const [frame] = await sub.replies(1);
    expect(printable(frame)).toBe(
      printable(Buffer.concat([Buffer.from('*3\r\n$8\r\nsmessage\r\n$6\r\nrest:s\r\n$256\r\n'), ALL_BYTES, Buffer.from('\r\n')])),
    );
    const [info] = await sub.call(['SUNSUBSCRIBE']);
    expect(info.toString()).toBe('*3\r\n$12\r\nsunsubscribe\r\n$6\r\nrest:s\r\n:0\r\n');
    expect((await sub.call(['CLIENT', 'INFO']))[0].toString()).toMatch(/ sub=0 psub=0 ssub=0 /);
    await until(() => openStreams.count === 0, 'the stream closed');
    sub.close();
  });

  it('CLIENT INFO counts shard channels in ssub= (RESP3 connection)', async () => {
    const sub = await RawClient.connect(ports.proxy);
    await sub.call(['HELLO', '3']);
    await send(sub, ['SSUBSCRIBE', 'ci:a', 'ci:b'], ['SUBSCRIBE', 'ci:c']);
    expect((await sub.call(['CLIENT', 'INFO']))[0].toString()).toMatch(/ flags=P .* sub=1 psub=0 ssub=2 /);
    sub.close();
    await until(() => openStreams.count === 0, 'the streams closed');
  });
});

describe("Socket.IO's sharded Redis adapter (createShardedAdapter, node-redis) through the proxy", () => {
  it('two servers: a broadcast from one reaches a client of the other, and fetchSockets sees across servers', async () => {
    const redisClients = Array.from({ length: 4 }, () => createClient({ socket: { host: '127.0.0.1', port: ports.proxy } }));
    await Promise.all(redisClients.map((c) => c.connect()));
    const https: HttpServer[] = [];
    const servers: SocketServer[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const http = createServer();
        const server = new SocketServer(http, { adapter: createShardedAdapter(redisClients[2 * i], redisClients[2 * i + 1]) });
        await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
        https.push(http);
        servers.push(server);
      }
      // The adapters subscribe at start; wait until both servers' shard channels are up.
      await until(() => openStreams.count >= 2, 'the adapters subscribed');
      const [a, b] = servers;
      a.on('connection', (socket) => void socket.join('room1'));
      const client = socketClient(`http://127.0.0.1:${(https[0].address() as AddressInfo).port}`, { transports: ['websocket'] });
      try {
        await new Promise<void>((resolve, reject) => {
          client.on('connect', resolve);
          client.on('connect_error', reject);
        });
        const got = new Promise<string>((resolve) => client.on('news', resolve));
        await until(() => a.of('/').adapter.rooms.get('room1')?.size === 1, 'the client in room1');
        // Server a subscribes to the room's shard channel when the socket joins; b publishes once it is up.
        const probe = await RawClient.connect(ports.proxy);
        const roomChannels = async () => (await probe.call(['PUBSUB', 'SHARDCHANNELS', '*room1*']))[0].toString();
        for (let i = 0; i < 200 && (await roomChannels()) === '*0\r\n'; i++) await new Promise((r) => setTimeout(r, 20));
        expect(await roomChannels()).toContain('room1');
        probe.close();
        b.to('room1').emit('news', 'from server b');
        expect(await got).toBe('from server b');
        const sockets = await b.fetchSockets();
        expect(sockets.map((s) => s.id)).toEqual([client.id]);
      } finally {
        client.disconnect();
      }
    } finally {
      for (const s of servers) await new Promise((resolve) => s.close(() => resolve(undefined)));
      for (const c of redisClients) await c.close().catch(() => undefined);
    }
    await until(() => openStreams.count === 0, 'the adapters unsubscribed');
  });
});
