// socket-input.ts on real sockets: a plain TCP client socket is read by our onread on its handle
// ('direct'), and keeps what net.Socket's read path did: the bytes in order, 'end' after the last
// of them (a request cut off mid-way), a reset as an error then 'close', pause()/resume() stopping and
// starting the reads, the socket timeout refreshed by reads, nothing after destroy(). Where it does
// not apply (TLS, a Unix socket, pending deprecations, allowDirect false) the older paths read.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReadBuffer, readSocket, type ReadMode } from '../../src/server/socket-input.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';

const readBuffer = createReadBuffer();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Accepted {
  server: net.Server;
  client: net.Socket;
  socket: net.Socket;
  mode: ReadMode;
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
  allowDirect?: boolean;
  listen?: (server: net.Server) => void;
  /** Called after each read is recorded. */
  onRead?: (socket: net.Socket, chunk: Buffer) => void;
}

/** A server socket read by readSocket, and its connected client. */
async function accept({ allowDirect = true, listen = (s) => s.listen(0, '127.0.0.1'), onRead }: AcceptOptions = {}): Promise<Accepted> {
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
  const mode = readSocket(
    socket,
    readBuffer,
    (chunk, shared) => {
      chunks.push(shared ? Buffer.from(chunk) : chunk);
      events.push('data');
      onRead?.(socket, chunk);
    },
    allowDirect,
  );
  socket.on('end', () => events.push('end'));
  socket.on('error', (err: NodeJS.ErrnoException) => events.push(`error ${err.code}`));
  socket.on('close', () => events.push('close'));
  const a = { server, client, socket, mode, chunks, events, text: () => Buffer.concat(chunks).toString('latin1') };
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

describe('direct reads on a plain TCP socket', () => {
  it('reads with our onread on the handle, every byte in order, large writes included', async () => {
    const a = await accept();
    expect(a.mode).toBe('direct');
    expect(handleOnread(a.socket)).toBe('directRead');
    const big = Buffer.alloc(300_000, 'v');
    a.client.write('*1\r\n$4\r\nPING\r\n');
    a.client.write(big);
    a.client.write('tail');
    await until(() => a.text().length === 14 + big.length + 4);
    expect(a.text()).toBe('*1\r\n$4\r\nPING\r\n' + big.toString('latin1') + 'tail');
    expect(a.chunks.length).toBeGreaterThan(1); // more than one read: the buffer is 64 KiB
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

describe('where direct reads do not apply', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  it('allowDirect false: net onread mode, with net onStreamRead on the handle', async () => {
    const a = await accept({ allowDirect: false });
    expect(a.mode).toBe('onread');
    expect(handleOnread(a.socket)).toBe('onStreamRead');
    a.client.end('*1\r\n$4\r\nPING\r\n');
    await until(() => a.events.includes('end'));
    expect(a.text()).toBe('*1\r\n$4\r\nPING\r\n');
  });

  it('a Unix socket: net onread mode', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'respgate-input-'));
    try {
      const a = await accept({ listen: (s) => s.listen(path.join(dir, 's.sock')) });
      expect(a.mode).toBe('onread');
      expect(handleOnread(a.socket)).toBe('onStreamRead');
      a.client.end('PING\r\n');
      await until(() => a.events.includes('end'));
      expect(a.text()).toBe('PING\r\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a TLS socket: the data event, and the decrypted bytes', async () => {
    const server = tls.createServer({ cert: certs.serverCert, key: certs.serverKey });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<tls.TLSSocket>((resolve) => server.once('secureConnection', resolve));
    const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', ca: certs.ca });
    const socket = await accepted;
    try {
      const got: string[] = [];
      expect(readSocket(socket, readBuffer, (chunk, shared) => got.push(`${chunk.toString()} ${shared}`))).toBe('data');
      client.write('*1\r\n$4\r\nPING\r\n');
      await until(() => got.length > 0);
      expect(got).toEqual(['*1\r\n$4\r\nPING\r\n false']);
    } finally {
      client.destroy();
      socket.destroy();
      server.close();
    }
  });

  it('pending deprecations: no process.binding (no DEP0111), net onread mode', async () => {
    const code = `
      import net from 'node:net';
      import { createReadBuffer, readSocket } from './src/server/socket-input.ts';
      const server = net.createServer((socket) => {
        const mode = readSocket(socket, createReadBuffer(), (chunk) => {
          console.log(JSON.stringify({ mode, got: chunk.toString() }));
          socket.end();
          server.close();
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const c = net.connect(server.address().port, '127.0.0.1', () => c.write('PING'));
        c.resume();
        c.on('end', () => c.destroy());
      });
    `;
    const args = ['--pending-deprecation', '--throw-deprecation', '--import', 'tsx', '--input-type=module', '-e', code];
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args);
    expect(stderr).not.toMatch(/DEP0111|DeprecationWarning/);
    expect(JSON.parse(stdout.trim())).toEqual({ mode: 'onread', got: 'PING' });
  });
});
