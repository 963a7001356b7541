// SocketOutput on real loopback sockets: a write the kernel takes at once goes to the handle and
// completes then; a write a client does not read waits in libuv with its buffer, counts as pending
// output, pauses (needsDrain) and arrives whole and in order; the large-value pool gets its buffer back
// only once libuv has written it; a reset peer's error closes the socket; the end comes after the
// last byte. (A TLS socket keeps socket.write: socket-output-tls.test.ts, which makes certificates.)
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LargeBuffers } from '../../src/resp/large-buffers.js';
import { SocketOutput } from '../../src/server/socket-output.js';

interface Pair {
  server: net.Socket;
  client: net.Socket;
  output: SocketOutput;
  drained: number;
  /** socket.write calls on the server socket (the Writable path). */
  streamWrites: number;
}

const open: net.Server[] = [];
const sockets: net.Socket[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of open.splice(0)) s.close();
});

/** A connected loopback pair; the server side is written through a SocketOutput. */
async function pair(serverOptions: net.ServerOpts = {}): Promise<Pair> {
  const server = net.createServer({ allowHalfOpen: true, ...serverOptions });
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  client.on('error', () => undefined);
  const socket = await accepted;
  socket.on('error', () => undefined);
  sockets.push(socket, client);
  const p: Pair = { server: socket, client, output: undefined as unknown as SocketOutput, drained: 0, streamWrites: 0 };
  const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
  socket.write = ((...a: unknown[]) => {
    p.streamWrites++;
    return write(...a);
  }) as typeof socket.write;
  p.output = new SocketOutput(socket, { outputDrained: () => p.drained++ });
  return p;
}

/** Reads `bytes` bytes from the client (resuming it), as one Buffer. */
function readAll(client: net.Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= bytes) {
        client.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    client.on('data', onData);
    client.once('error', reject);
    client.resume();
  });
}

/** A buffer of `bytes` bytes whose every 4 bytes are its own position (order and completeness are checkable). */
function numbered(start: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i + 4 <= bytes; i += 4) b.writeUInt32BE((start + i) >>> 0, i);
  return b;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('SocketOutput', () => {
  it('writes a reply the kernel takes at once on the handle: done at once, nothing pending, counted in bytesWritten', async () => {
    const p = await pair();
    const before = p.server.bytesWritten;
    let doneWith: unknown = 'not called';
    expect(p.output.write(Buffer.from('+OK\r\n'), (err) => (doneWith = err))).toBe(true);
    expect(doneWith).toBe(null);
    expect(p.output.write(Buffer.from(':1\r\n'))).toBe(true);
    expect(p.streamWrites).toBe(0);
    expect(p.output.pendingBytes).toBe(0);
    expect(p.output.needsDrain).toBe(false);
    expect(p.server.bytesWritten - before).toBe(9);
    expect((await readAll(p.client, 9)).toString()).toBe('+OK\r\n:1\r\n');
  });

  it('a client that does not read: writes wait in libuv with their buffers, count as pending, pause, then arrive whole and in order', async () => {
    const p = await pair();
    p.client.pause();
    const CHUNK = 256 * 1024;
    const COUNT = 48; // 12 MiB: far more than loopback's socket buffers hold
    const done: Array<Error | null | undefined> = [];
    for (let i = 0; i < COUNT; i++) p.output.write(numbered(i * CHUNK, CHUNK), (err) => done.push(err));
    expect(p.streamWrites).toBe(0);
    expect(p.output.needsDrain).toBe(true);
    const pending = p.output.pendingBytes;
    expect(pending).toBeGreaterThan(CHUNK);
    expect(pending).toBeLessThanOrEqual(COUNT * CHUNK);
    expect(p.server.writableLength).toBe(0); // the Writable holds none of it
    await tick();
    expect(done.length).toBeLessThan(COUNT);
    const got = await readAll(p.client, COUNT * CHUNK);
    expect(got.length).toBe(COUNT * CHUNK);
    expect(got.equals(numbered(0, COUNT * CHUNK))).toBe(true);
    for (let i = 0; i < 20 && done.length < COUNT; i++) await tick();
    expect(done).toEqual(Array(COUNT).fill(null));
    expect(p.output.pendingBytes).toBe(0);
    expect(p.output.needsDrain).toBe(false);
    expect(p.drained).toBe(1);
    expect(p.server.bytesWritten).toBe(COUNT * CHUNK);
  });

  it('corked writes go out as one writev, in order, each done after it is written', async () => {
    const p = await pair();
    const done: number[] = [];
    p.output.cork();
    p.output.write(Buffer.from('$3\r\n'), () => done.push(1));
    p.output.write(Buffer.from('abc'), () => done.push(2));
    p.output.write(Buffer.from('\r\n'), () => done.push(3));
    expect(done).toEqual([]);
    p.output.uncork();
    expect(p.streamWrites).toBe(0);
    expect((await readAll(p.client, 9)).toString()).toBe('$3\r\nabc\r\n');
    for (let i = 0; i < 10 && done.length < 3; i++) await tick();
    expect(done).toEqual([1, 2, 3]);
  });

  it('gives a large-value buffer back to its pool only once libuv has written it', async () => {
    const p = await pair();
    p.client.pause();
    const pool = new LargeBuffers();
    const filler = numbered(0, 8 * 1024 * 1024);
    p.output.write(filler); // fills the socket buffers: what follows waits
    const view = pool.take(1024 * 1024);
    numbered(filler.length, view.length).copy(view);
    expect(pool.writeGivingBack(p.output, view)).toBe(true);
    await tick();
    expect(pool.owns(view)).toBe(true); // still being written: not free for another value
    expect(pool.freeByteCount).toBe(0);
    const got = await readAll(p.client, filler.length + view.length);
    expect(got.equals(numbered(0, filler.length + view.length))).toBe(true);
    for (let i = 0; i < 10 && pool.owns(view); i++) await tick();
    expect(pool.owns(view)).toBe(false);
    expect(pool.freeByteCount).toBeGreaterThanOrEqual(1024 * 1024);
  });

  it('after the peer resets, a write fails with EPIPE or ECONNRESET and the socket is destroyed', async () => {
    const p = await pair({ pauseOnConnect: true }); // the server does not read: the write sees the reset
    const closed = new Promise<void>((r) => p.server.once('close', () => r()));
    p.client.resetAndDestroy();
    await new Promise((r) => setTimeout(r, 50));
    let error: (Error & { code?: string }) | null | undefined;
    for (let i = 0; i < 100 && !p.server.destroyed; i++) {
      p.output.write(Buffer.alloc(64 * 1024, 1), (err) => (error ??= err));
      await tick();
    }
    await closed;
    expect(p.server.destroyed).toBe(true);
    expect(p.streamWrites).toBe(0); // the error came from the handle's write
    expect(['EPIPE', 'ECONNRESET']).toContain(error?.code);
  });

  it('a write waiting in libuv when the socket is destroyed ends with an error, not with success', async () => {
    const p = await pair();
    p.client.pause();
    const results: Array<Error | null | undefined> = [];
    for (let i = 0; i < 32; i++) p.output.write(Buffer.alloc(512 * 1024, 2), (err) => results.push(err));
    expect(p.output.pendingBytes).toBeGreaterThan(0);
    const closed = new Promise<void>((r) => p.server.once('close', () => r()));
    p.output.destroy();
    await closed;
    for (let i = 0; i < 10 && results.length < 32; i++) await tick();
    expect(results.length).toBe(32);
    expect(results.some((e) => e instanceof Error)).toBe(true);
    expect(p.drained).toBe(0);
  });

  it('end() comes after the last direct write: the client gets every byte, then the end of the stream', async () => {
    const p = await pair();
    p.client.pause();
    const bytes = 4 * 1024 * 1024;
    p.output.write(numbered(0, bytes));
    expect(p.output.pendingBytes).toBeGreaterThan(0);
    let ended = false;
    p.output.end(() => (ended = true));
    const clientEnd = new Promise<void>((r) => p.client.once('end', () => r()));
    const got = await readAll(p.client, bytes);
    await clientEnd;
    expect(got.equals(numbered(0, bytes))).toBe(true);
    for (let i = 0; i < 10 && !ended; i++) await tick();
    expect(ended).toBe(true);
  });

  it('falls back to socket.write while the Writable holds bytes (order kept)', async () => {
    const p = await pair();
    p.server.cork(); // someone else's cork: the Writable holds what follows
    p.output.write(Buffer.from('a'));
    expect(p.streamWrites).toBe(1);
    p.server.uncork();
    p.output.write(Buffer.from('b'));
    expect((await readAll(p.client, 2)).toString()).toBe('ab');
  });
});
