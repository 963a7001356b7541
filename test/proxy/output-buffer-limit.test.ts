// client-output-buffer-limit (issue 22): CONFIG GET/SET read and change the live limits with Redis'
// syntax and error texts (byte-compared with a direct redis-server); a normal client has no limit by
// default, as in Redis (a slow reader of 50 MB of replies gets them all); a subscriber that does not
// read is disconnected past the pubsub hard limit at once, and past the soft limit once it has lasted
// soft-seconds, on the proxy as on redis-server.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_BUFFER_LIMITS } from '../../src/server/output-limits.js';
import { RawClient, replayOnBoth, startStack, type DifferentialSide, type Stack } from '../helpers/stack.js';

let stack: Stack;
const open: Array<net.Socket | RawClient> = [];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(async () => {
  const side = await connectBoth();
  await replayOnBoth(side, [['CONFIG', 'SET', 'client-output-buffer-limit', DEFAULT_OUTPUT_BUFFER_LIMITS]], false);
  for (const c of open.splice(0)) {
    if (c instanceof RawClient) c.close();
    else c.destroy();
  }
});

async function connectBoth(): Promise<DifferentialSide> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
  open.push(oracle, proxy);
  return { oracle, proxy };
}

const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));
const PARAM = 'client-output-buffer-limit';

describe('CONFIG GET and SET client-output-buffer-limit', () => {
  it("default, classes changed one at a time, units, Redis' errors, all or nothing: byte for byte with redis-server", async () => {
    const [oracle, proxy] = await replayOnBoth(
      await connectBoth(),
      [
        ['CONFIG', 'GET', PARAM],
        ['CONFIG', 'SET', PARAM, 'normal 0 0 0 pubsub 32mb 8mb 60'],
        ['CONFIG', 'GET', PARAM],
        ['CONFIG', 'SET', PARAM, 'replica 1k 2K 3'],
        ['CONFIG', 'SET', PARAM, 'NORMAL 1gb 0 0 slave 5 5 5'],
        ['CONFIG', 'GET', 'client-output-*'],
        ['CONFIG', 'SET', PARAM, 'normal 5B 0 +5 normal 7 0 0 pubsub 1m 1mb 0'],
        ['CONFIG', 'GET', PARAM],
        ['CONFIG', 'SET', PARAM, 'normal 18446744073709551616 0 0'],
        ['CONFIG', 'GET', PARAM],
        ['CONFIG', 'SET', PARAM, 'normal 0 0'],
        ['CONFIG', 'SET', PARAM, '  normal   3 4 5  '],
        ['CONFIG', 'SET', PARAM, 'foo 0 0 0'],
        ['CONFIG', 'SET', PARAM, 'master 0 0 0'],
        ['CONFIG', 'SET', PARAM, 'normal x 0 0'],
        ['CONFIG', 'SET', PARAM, 'normal 1 2 -3'],
        ['CONFIG', 'SET', PARAM, 'normal -1 0 0'],
        ['CONFIG', 'SET', PARAM, 'normal 1.5 0 0'],
        ['CONFIG', 'SET', PARAM, 'normal 0 0 3mb'],
        ['CONFIG', 'SET', PARAM, 'pubsub 1 1 1 normal +5 0 0'],
        ['CONFIG', 'SET', PARAM, 'normal 0 0 0', 'timeout', 'x'],
        ['CONFIG', 'SET', PARAM, 'normal 0 0 0', PARAM, 'normal 0 0 0'],
        ['CONFIG', 'GET', PARAM],
        ['CONFIG', 'SET', PARAM, 'normal 9 9 9', 'timeout', '0'],
        ['CONFIG', 'GET', PARAM],
      ],
      false,
    );
    expect(text(proxy)).toEqual(text(oracle));
    expect(text(proxy)[0]).toBe(`*2\r\n$26\r\n${PARAM}\r\n$${DEFAULT_OUTPUT_BUFFER_LIMITS.length}\r\n${DEFAULT_OUTPUT_BUFFER_LIMITS}\r\n`);
    expect(text(proxy).at(-1)).toContain('normal 9 9 9 slave');
  });
});

describe('normal clients: no limit by default', () => {
  it('a client that pipelines 100 GETs of 512 KB (50 MB) and reads nothing for a while gets every reply', async () => {
    const value = 'v'.repeat(512 * 1024);
    const setter = await RawClient.connect(stack.proxy.port);
    open.push(setter);
    expect(text(await setter.call(['SET', 'obuf:big', value]))).toEqual(['+OK\r\n']);
    const slow = net.connect(stack.proxy.port, '127.0.0.1');
    open.push(slow);
    await new Promise((r) => slow.once('connect', r));
    slow.pause();
    const n = 100;
    slow.write('*2\r\n$3\r\nGET\r\n$8\r\nobuf:big\r\n'.repeat(n));
    const one = `$${value.length}\r\n${value}\r\n`.length;
    // Not read for 1.5 s: the replies pile up in the proxy (past the old 32 MB limit).
    await new Promise((r) => setTimeout(r, 1500));
    let size = 0;
    const all = new Promise<void>((resolve, reject) => {
      slow.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size >= n * one) resolve();
      });
      slow.once('close', () => reject(new Error(`closed after ${size} of ${n * one} bytes`)));
    });
    slow.resume();
    await all;
    expect(size).toBe(n * one);
    expect(slow.destroyed).toBe(false);
  });
});

/** A subscriber to `channel` on `port` that stops reading once subscribed. */
async function stalledSubscriber(port: number, channel: string): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  open.push(socket);
  await new Promise((r) => socket.once('connect', r));
  socket.write(`*2\r\n$9\r\nSUBSCRIBE\r\n$${channel.length}\r\n${channel}\r\n`);
  await new Promise<void>((resolve) => {
    let got = '';
    const onData = (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (got.endsWith(':1\r\n')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
  });
  return socket;
}

/**
 * Publishes on one side, one message at a time (`big` ones first, then `tick`s `pauseMs` apart), until
 * PUBLISH counts no receiver: the subscriber was disconnected (the proxy's upstream subscription ends
 * with it). Returns when that happened.
 */
async function publishUntilDropped(client: RawClient, channel: string, big: number, pauseMs: number): Promise<number> {
  const mb = 'm'.repeat(1024 * 1024);
  for (let i = 0; i < big + 100; i++) {
    const [reply] = await client.call(['PUBLISH', channel, i < big ? mb : 'tick']);
    if (reply.toString() === ':0\r\n') return Date.now();
    if (i >= big) await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error('the subscriber was never disconnected');
}

/** A subscriber's socket, once read again, reaches its end (the server closed it). */
function ends(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.resume();
  });
}

describe('pub/sub clients: the pubsub class limits, as redis-server applies them', () => {
  it('a subscriber that does not read is disconnected past the hard limit (both sides)', async () => {
    const side = await connectBoth();
    await replayOnBoth(side, [['CONFIG', 'SET', PARAM, 'pubsub 4mb 0 0']], false);
    const ports = [stack.oracle.endpoint.port, stack.proxy.port];
    const subs = await Promise.all(ports.map((port) => stalledSubscriber(port, 'obuf:hard')));
    // 1 MB messages until dropped: past the socket buffers and the 4 MB within a few dozen.
    await Promise.all([publishUntilDropped(side.oracle, 'obuf:hard', 60, 0), publishUntilDropped(side.proxy, 'obuf:hard', 60, 0)]);
    await Promise.all(subs.map(ends));
  });

  it('past the soft limit, the subscriber is disconnected only once it has lasted longer than soft-seconds (both sides)', async () => {
    const side = await connectBoth();
    await replayOnBoth(side, [['CONFIG', 'SET', PARAM, 'pubsub 0 1mb 2']], false);
    const ports = [stack.oracle.endpoint.port, stack.proxy.port];
    const subs = await Promise.all(ports.map((port) => stalledSubscriber(port, 'obuf:soft')));
    // 16 MB (past the socket buffers and the soft limit, no hard limit), then a small message every
    // 200 ms: Redis checks the limits as replies are added.
    const started = Date.now();
    const [oracleAt, proxyAt] = await Promise.all([
      publishUntilDropped(side.oracle, 'obuf:soft', 16, 200),
      publishUntilDropped(side.proxy, 'obuf:soft', 16, 200),
    ]);
    expect(oracleAt - started).toBeGreaterThanOrEqual(2000);
    expect(proxyAt - started).toBeGreaterThanOrEqual(2000);
    await Promise.all(subs.map(ends));
  });
});

describe('MONITOR clients are normal clients, as Redis exposes them (getClientType)', () => {
  /** A MONITOR connection on each side that stops reading once MONITOR answered. */
  const monitorBoth = () =>
    Promise.all(
      [stack.oracle.endpoint.port, stack.proxy.port].map(async (port) => {
        const socket = net.connect(port, '127.0.0.1');
        open.push(socket);
        await new Promise((r) => socket.once('connect', r));
        socket.write('*1\r\n$7\r\nMONITOR\r\n');
        await new Promise((r) => socket.once('data', r)); // +OK
        socket.pause();
        return socket;
      }),
    );
  const mb = 'm'.repeat(1024 * 1024);
  /** SETs of 1 MB on both sides: each is a 1 MB MONITOR line, past the socket buffers. */
  const setBoth = async (side: DifferentialSide, n: number) => {
    for (let i = 0; i < n; i++) await replayOnBoth(side, [['SET', 'obuf:monitor', mb]], false);
  };

  it('the replica limit does not apply to them: unlimited by default, they get every line once they read (both sides)', async () => {
    const side = await connectBoth();
    await replayOnBoth(side, [['CONFIG', 'SET', PARAM, 'replica 1mb 1mb 0']], false);
    const monitors = await monitorBoth();
    await setBoth(side, 20);
    await Promise.all(
      monitors.map(
        (socket) =>
          new Promise<void>((resolve, reject) => {
            let size = 0;
            socket.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size >= 20 * mb.length) resolve();
            });
            socket.once('close', () => reject(new Error(`MONITOR closed after ${size} bytes`)));
            socket.resume();
          }),
      ),
    );
  });

  it('the normal limit applies to them (both sides)', async () => {
    const side = await connectBoth();
    await replayOnBoth(side, [['CONFIG', 'SET', PARAM, 'normal 2mb 0 0']], false);
    const monitors = await monitorBoth();
    await setBoth(side, 40);
    await Promise.all(monitors.map(ends));
  });
});
