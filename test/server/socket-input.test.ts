// socket-input.ts on real sockets: a plain TCP or Unix client socket is read in net.Socket's onread mode
// into the shared buffer (each chunk lent for the call), and keeps what the Readable path did: the
// bytes in order, 'end' after the last of them (a request cut off mid-way), a reset as an error then
// 'close', pause()/resume() stopping and starting the reads (the connection's backpressure), the socket
// timeout refreshed by reads, nothing after destroy(). A TLS socket keeps the 'data' event.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReadBuffer, readSocket } from '../../src/server/socket-input.js';
import { makeTestCerts, tlsLoopback, type TestCerts } from '../helpers/certs.js';

const readBuffer = createReadBuffer();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Accepted {
  server: net.Server;
  client: net.Socket;
  socket: net.Socket;
  /** Whether every chunk came lent from the shared buffer (the onread mode). */
  shared: boolean;
  /** What was read, in order; `shared` chunks copied (they are only lent). */
  chunks: Buffer[];
  events: string[];
  text(): string;
}

const open: Accepted[] = [];
afterEach(() => {
  for (const a of open.splice(0)) {
    a.client.destroy();
    a.socket.destroy();
    a.server.close();
  }
});

interface AcceptOptions {
  listen?: (server: net.Server) => void;
  /** Called after each read is recorded. */
  onRead?: (socket: net.Socket, chunk: Buffer) => void;
}

/** A server socket read by readSocket, and its connected client. */
async function accept({ listen = (s) => s.listen(0, '127.0.0.1'), onRead }: AcceptOptions = {}): Promise<Accepted> {
  const server = net.createServer({ allowHalfOpen: true });
  const ready = new Promise<void>((resolve) => server.once('listening', resolve));
  listen(server);
  await ready;
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const address = server.address();
  const client = typeof address === 'string' ? net.connect(address) : net.connect(address!.port, '127.0.0.1');
  client.on('error', () => undefined);
  const socket = await accepted;
  const chunks: Buffer[] = [];
  const events: string[] = [];
  const a: Accepted = { server, client, socket, shared: true, chunks, events, text: () => Buffer.concat(chunks).toString('latin1') };
  readSocket(socket, readBuffer, (chunk, shared) => {
    a.shared &&= shared;
    chunks.push(shared ? Buffer.from(chunk) : chunk);
    events.push('data');
    onRead?.(socket, chunk);
  });
  socket.on('end', () => events.push('end'));
  socket.on('error', (err: NodeJS.ErrnoException) => events.push(`error ${err.code}`));
  socket.on('close', () => events.push('close'));
  open.push(a);
  return a;
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

function handleOnread(socket: net.Socket): string | undefined {
  return (socket as unknown as { _handle?: { onread?: { name: string } } })._handle?.onread?.name;
}

describe('a plain TCP socket, read in the onread mode', () => {
  it('reads into the shared buffer, every byte in order, large writes included', async () => {
    const a = await accept();
    expect(handleOnread(a.socket)).toBe('onStreamRead');
    const big = Buffer.alloc(300_000, 'v');
    a.client.write('*1\r\n$4\r\nPING\r\n');
    a.client.write(big);
    a.client.write('tail');
    await until(() => a.text().length === 14 + big.length + 4);
    expect(a.text()).toBe('*1\r\n$4\r\nPING\r\n' + big.toString('latin1') + 'tail');
    expect(a.chunks.length).toBeGreaterThan(1); // more than one read: the buffer is 64 KiB
    expect(a.shared).toBe(true);
  });

  it('a request cut off by the end of input: its bytes, then end, and close after our side ends', async () => {
    const a = await accept();
    a.client.end('*2\r\n$3\r\nGET\r\n$1');
    await until(() => a.events.includes('end'));
    expect(a.text()).toBe('*2\r\n$3\r\nGET\r\n$1');
    expect(a.events).toEqual([...a.chunks.map(() => 'data'), 'end']);
    // Half-open (allowHalfOpen): our side may still write before it ends.
    const got = new Promise<string>((resolve) => a.client.on('data', (d: Buffer) => resolve(d.toString())));
    a.socket.end('-ERR late\r\n');
    expect(await got).toBe('-ERR late\r\n');
    await until(() => a.events.includes('close'));
    expect(a.events.slice(-2)).toEqual(['end', 'close']);
  });

  it('a reset by the client: the read error destroys the socket (ECONNRESET), then close', async () => {
    const a = await accept();
    a.client.write('*1\r\n$4\r\nPING\r\n');
    await until(() => a.chunks.length > 0);
    a.client.resetAndDestroy();
    await until(() => a.events.includes('close'));
    expect(a.events).toEqual(['data', 'error ECONNRESET', 'close']);
    expect(a.socket.destroyed).toBe(true);
  });

  it('pause() stops the reads (the bytes wait in the kernel) and resume() reads them all, in order', async () => {
    const a = await accept();
    a.client.write('first');
    await until(() => a.text() === 'first');
    a.socket.pause();
    const more = Buffer.alloc(200_000, 'p');
    a.client.write(more);
    await sleep(100);
    expect(a.text()).toBe('first');
    a.socket.resume();
    await until(() => a.text().length === 5 + more.length);
    expect(a.text()).toBe('first' + more.toString('latin1'));
  });

  it('backpressure from inside a read: pausing in the callback holds the next reads until resume', async () => {
    let pausedReads = 0;
    let paused = false;
    const a = await accept({
      onRead: (socket) => {
        if (paused) pausedReads++;
        // Like RespConnection.receive with too many replies owed: pause, and resume a little later.
        paused = true;
        socket.pause();
        setTimeout(() => {
          paused = false;
          socket.resume();
        }, 2);
      },
    });
    const total = 1_000_000;
    a.client.write(Buffer.alloc(total, 'b'));
    await until(() => a.text().length === total, 10_000);
    expect(a.chunks.length).toBeGreaterThan(1);
    expect(pausedReads).toBe(0);
    expect(a.text()).toBe('b'.repeat(total));
  });

  it('reads refresh the socket timeout; silence lets it fire', async () => {
    const a = await accept();
    let timeouts = 0;
    a.socket.setTimeout(150, () => timeouts++);
    for (let i = 0; i < 6; i++) {
      a.client.write('x');
      await sleep(60);
    }
    expect(timeouts).toBe(0);
    expect(a.text()).toBe('xxxxxx');
    await until(() => timeouts === 1);
  });

  it('nothing is read after destroy(), and close follows', async () => {
    const a = await accept();
    a.client.write('one');
    await until(() => a.text() === 'one');
    a.socket.destroy();
    a.client.write('two');
    await until(() => a.events.includes('close'));
    await sleep(50);
    expect(a.text()).toBe('one');
    expect(handleOnread(a.socket)).toBeUndefined(); // net dropped the handle
  });
});

describe('other sockets', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  it('a Unix socket: the onread mode too', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'respgate-input-'));
    try {
      const a = await accept({ listen: (s) => s.listen(path.join(dir, 's.sock')) });
      a.client.end('PING\r\n');
      await until(() => a.events.includes('end'));
      expect(a.text()).toBe('PING\r\n');
      expect(a.shared).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a TLS socket: the data event, and the decrypted bytes', async () => {
    const { client, socket, close } = await tlsLoopback(certs);
    try {
      const got: string[] = [];
      readSocket(socket, readBuffer, (chunk, shared) => got.push(`${chunk.toString()} ${shared}`));
      client.write('*1\r\n$4\r\nPING\r\n');
      await until(() => got.length > 0);
      expect(got).toEqual(['*1\r\n$4\r\nPING\r\n false']);
    } finally {
      close();
    }
  });
});
