// The proxy's own plain-TCP connector (src/upstream/tcp-connector.ts) against undici's, the one it
// replaces for plain TCP: the same connections and, word for word, the same errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { buildConnector as BuildConnector } from 'undici';
import { connectTcp } from '../../src/upstream/tcp-connector.js';

const buildConnector = createRequire(import.meta.url)('undici/lib/core/connect.js') as typeof BuildConnector;

type Outcome = { socket?: net.Socket; error?: Error & { code?: string } };

function ours(hostname: string, port: number, timeoutMs = 2000, onread?: Parameters<typeof connectTcp>[0]['onread']): Promise<Outcome> {
  return new Promise((resolve) =>
    connectTcp({ hostname, port, timeoutMs, onread }, (error, socket) => resolve(error ? { error } : { socket: socket! })),
  );
}

function undicis(hostname: string, port: number, timeoutMs = 2000): Promise<Outcome> {
  const connect = buildConnector({ timeout: timeoutMs });
  return new Promise((resolve) =>
    connect(
      {
        hostname,
        host: `${hostname}:${port}`,
        protocol: 'http:',
        port: String(port),
        servername: undefined,
        localAddress: null,
        httpSocket: undefined,
      },
      (error, socket) => resolve(error ? { error: error as Outcome['error'] } : { socket: socket as net.Socket }),
    ),
  );
}

function listen(host: string, onConnection: (s: net.Socket) => void = () => undefined): Promise<net.Server> {
  return new Promise((resolve) => {
    const server = net
      .createServer((s) => {
        s.on('error', () => undefined); // the client's destroy may reset it
        onConnection(s);
      })
      .listen(0, host, () => resolve(server));
  });
}

const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

describe('connectTcp', () => {
  it('opens a connection whose reads land where `onread` says', async () => {
    const server = await listen('127.0.0.1', (s) => s.end('hello'));
    const landing = Buffer.alloc(64);
    const reads: string[] = [];
    const { socket, error } = await ours('127.0.0.1', portOf(server), 2000, {
      buffer: () => landing,
      callback: (bytes, buffer) => void reads.push(buffer.toString('latin1', 0, bytes)),
    });
    expect(error).toBeUndefined();
    await new Promise((resolve) => socket!.once('end', resolve));
    expect(reads.join('')).toBe('hello');
    socket!.destroy();
    server.close();
  });

  it('takes an IPv6 address as the URL spells it, in brackets', async () => {
    const server = await listen('::1', (s) => s.end('six'));
    const { socket, error } = await ours('[::1]', portOf(server));
    expect(error).toBeUndefined();
    expect(socket!.remoteAddress).toBe('::1');
    socket!.destroy();
    server.close();
  });

  it('fails a refused connection with the system error, as undici does', async () => {
    const server = await listen('127.0.0.1');
    const port = portOf(server);
    await new Promise((resolve) => server.close(resolve));
    const [a, b] = await Promise.all([ours('127.0.0.1', port), undicis('127.0.0.1', port)]);
    expect(a.error).toMatchObject({ code: 'ECONNREFUSED', message: `connect ECONNREFUSED 127.0.0.1:${port}` });
    expect({ code: a.error!.code, message: a.error!.message }).toEqual({ code: b.error!.code, message: b.error!.message });
  });

  describe('a server that never completes the connection (its accept queue full: Linux drops the SYN)', () => {
    let listener: ChildProcess;
    let port: number;
    const held: net.Socket[] = [];

    beforeAll(async () => {
      // Node accepts every connection; a python socket with listen(0) accepts none, so after one
      // queued connection the next never completes.
      listener = spawn('python3', [
        '-c',
        "import socket,sys,time\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(0)\nprint(s.getsockname()[1], flush=True)\ntime.sleep(120)",
      ]);
      port = await new Promise<number>((resolve) => listener.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString()))));
      const first = await ours('127.0.0.1', port);
      held.push(first.socket!);
    });

    afterAll(() => {
      for (const s of held) s.destroy();
      listener.kill();
    });

    it("fails after the connect timeout with undici's ConnectTimeoutError, word for word", async () => {
      const started = performance.now();
      const [a, b] = await Promise.all([ours('127.0.0.1', port, 300), undicis('127.0.0.1', port, 300)]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      expect(a.error).toMatchObject({
        name: 'ConnectTimeoutError',
        code: 'UND_ERR_CONNECT_TIMEOUT',
        message: `Connect Timeout Error (attempted address: 127.0.0.1:${port}, timeout: 300ms)`,
      });
      expect({ name: a.error!.name, code: a.error!.code, message: a.error!.message }).toEqual({
        name: b.error!.name,
        code: b.error!.code,
        message: b.error!.message,
      });
    });

    it('waits with a connect timeout of 0, as undici does (no timer)', async () => {
      let outcome: unknown = 'pending';
      connectTcp({ hostname: '127.0.0.1', port, timeoutMs: 0 }, (error, socket) => {
        outcome = error ?? 'connected';
        socket?.destroy();
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(outcome).toBe('pending');
    });
  });
});
