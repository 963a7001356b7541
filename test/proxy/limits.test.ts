// Limits: the idle timeout of a client still sending, a configured output-buffer limit for normal clients, the query-buffer
// limit, a command larger than the upstream's max request size, and a client that pipelines without
// reading (backpressure: others keep being served). Real platform and proxy, raw sockets as clients.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOutputBufferLimitFlag, type ProxyConfig } from '../../src/config.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { command, startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';
import { startFaultServer, type FaultServer } from './faults-server.js';

let platform: RunningPlatform;
let fault: FaultServer;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await fault?.stop();
  await platform?.stop();
});

async function proxy(overrides: Partial<ProxyConfig>): Promise<RunningProxy> {
  const p = await startTestProxy({ url: fault.url, token: platform.token }, overrides);
  cleanups.push(() => p.stop());
  return p;
}
async function raw(p: RunningProxy): Promise<RawClient> {
  const c = await RawClient.connect(p.port);
  cleanups.push(() => c.close());
  return c;
}
const str = (b: Buffer[]) => b.map((x) => x.toString('latin1'));

// --maxclients and an idle client's --timeout: test/security/ports.test.ts runs them on every port.

describe('--timeout', () => {
  it('a client still sending a command, one byte at a time, is not idle (any read counts, as in Redis)', async () => {
    const p = await proxy({ idleTimeoutSec: 1 });
    const idle = await raw(p);
    const idleClosed = idle.untilClosed(5000);
    const slow = net.connect(p.port, '127.0.0.1');
    cleanups.push(() => void slow.destroy());
    await new Promise((r) => slow.once('connect', r));
    let replies = '';
    slow.on('data', (d: Buffer) => (replies += d.toString('latin1')));
    let slowClosed = false;
    slow.on('close', () => (slowClosed = true));
    for (const byte of '*1\r\n$4\r\nPING\r\n') {
      slow.write(byte);
      await new Promise((r) => setTimeout(r, 200)); // 14 bytes: ~2.8 s, far past the 1 s timeout
    }
    await until(() => replies === '+PONG\r\n', 'the slow client to get its reply');
    expect(slowClosed).toBe(false);
    await idleClosed; // the client that sent nothing was closed meanwhile
  });
});

describe('output-buffer limit (normal clients: none by default, as in Redis; configurable)', () => {
  it('with a normal limit configured, a client that does not read 20 MB of replies is disconnected at it; others are served', async () => {
    const value = 'x'.repeat(512 * 1024);
    expect((await command(platform, ['SET', 'big:v', value])).json).toEqual({ result: 'OK' });
    const p = await proxy({ outputBufferLimits: parseOutputBufferLimitFlag('normal 2mb 0 0', '--client-output-buffer-limit') });
    const slow = net.connect(p.port, '127.0.0.1');
    cleanups.push(() => void slow.destroy());
    await new Promise((r) => slow.once('connect', r));
    slow.pause(); // never reads
    const closed = new Promise((r) => slow.once('close', r));
    slow.write('*2\r\n$3\r\nGET\r\n$5\r\nbig:v\r\n'.repeat(40));
    await until(() => p.connections() === 0, 'the slow reader to be disconnected');
    slow.resume();
    await closed;
    const other = await raw(p);
    expect(str(await other.call(['PING']))).toEqual(['+PONG\r\n']);
  });

  it('replies held back while a client does not read arrive complete and in order once it reads', async () => {
    const n = 300;
    const values = Array.from({ length: n }, (_, i) => `${i}:`.padEnd(16 * 1024, String.fromCharCode(97 + (i % 26))));
    const set = await command(platform, ['MSET', ...values.flatMap((v, i) => [`order:${i}`, v])]);
    expect(set.json).toEqual({ result: 'OK' });
    const p = await proxy({});
    const late = net.connect(p.port, '127.0.0.1');
    cleanups.push(() => void late.destroy());
    await new Promise((r) => late.once('connect', r));
    late.pause();
    // One GET at a time: each reply is its own write, small enough to go below the Writable stream,
    // until 4.8 MB outgrow the socket buffers and writes have to wait for the reader.
    for (let i = 0; i < n; i++) {
      late.write(`*2\r\n$3\r\nGET\r\n$${`order:${i}`.length}\r\norder:${i}\r\n`);
      await new Promise((r) => setTimeout(r, 1));
    }
    const expected = Buffer.from(values.map((v) => `$${v.length}\r\n${v}\r\n`).join(''));
    const chunks: Buffer[] = [];
    let size = 0;
    const done = new Promise<void>((resolve) => {
      late.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= expected.length) resolve();
      });
    });
    late.resume();
    await done;
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    expect(p.connections()).toBe(1);
  });

  it('a client pipelining 50 000 commands without reading is held back (not buffered without bound), others are served, and it gets every reply once it reads', async () => {
    const p = await proxy({});
    const flood = net.connect(p.port, '127.0.0.1');
    cleanups.push(() => void flood.destroy());
    await new Promise((r) => flood.once('connect', r));
    flood.pause();
    const n = 50_000;
    flood.write('*2\r\n$3\r\nGET\r\n$6\r\nflood0\r\n'.repeat(n));
    const other = await raw(p);
    for (let i = 0; i < 3; i++) expect(str(await other.call(['SET', `other:${i}`, 'v']))).toEqual(['+OK\r\n']);
    let got = 0;
    const done = new Promise<void>((resolve) => {
      flood.on('data', (chunk: Buffer) => {
        for (const byte of chunk) if (byte === 0x0a) got++;
        if (got >= n) resolve();
      });
    });
    flood.resume();
    await done;
    expect(got).toBe(n); // one `$-1\r\n` per GET
  });
});

describe('query-buffer limit', () => {
  it('a request that grows past --client-query-buffer-limit closes the connection without a reply', async () => {
    const p = await proxy({ maxQueryBufferBytes: 64 * 1024 });
    const c = await raw(p);
    await c.call(['PING']);
    c.write('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200000\r\n' + 'y'.repeat(100_000));
    expect((await c.untilClosed()).length).toBe(0);
    const d = await raw(p);
    expect(str(await d.call(['PING']))).toEqual(['+PONG\r\n']);
  });
});

describe("larger than the upstream's max request size", () => {
  it('is refused with a clear error before anything is sent; smaller commands go through', async () => {
    const p = await proxy({ upstreamMaxRequestBytes: 100 * 1024 });
    await p.upstreamChecked; // the proxy's own check at start is done before counting upstream requests
    const c = await raw(p);
    const before = fault.seen.length;
    const [big] = str(await c.call(['SET', 'toolarge:k', 'z'.repeat(200 * 1024)]));
    expect(big).toMatch(
      /^-ERR command too large for the upstream: its request would be \d+ bytes and the upstream accepts at most 102400 \(--upstream-max-request-size\); the command was not executed\r\n$/,
    );
    expect(fault.seen.length).toBe(before);
    const [bin] = str(await c.call([Buffer.from('SET'), Buffer.from('toolarge:b'), Buffer.alloc(200 * 1024, 0xff)]));
    expect(bin).toMatch(/^-ERR command too large for the upstream/);
    const [tx] = str(await c.call(['MULTI'], ['SET', 'toolarge:t', 'z'.repeat(200 * 1024)], ['EXEC'])).slice(2);
    expect(tx).toMatch(/too large for the upstream.*transaction was not executed/);
    expect(str(await c.call(['SET', 'toolarge:k', 'small'], ['EXISTS', 'toolarge:b', 'toolarge:t']))).toEqual(['+OK\r\n', ':0\r\n']);
  });
});
