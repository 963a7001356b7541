// The proxy's lean HTTP/1.1 client (src/upstream/http1-pool.ts) against raw TCP servers that answer
// byte by byte, chunked, with 1xx, framed by the end of the connection, or misbehave: what reaches the
// handler (the undici DispatchHandler that http-exchange.ts uses) and whether a request was sent.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dispatcher } from 'undici';
import { Http1Pool } from '../../src/upstream/http1-pool.js';
import { exchange } from '../../src/upstream/http-exchange.js';
import { callPool } from '../../src/upstream/undici-pool.js';
import { largeBuffers } from '../../src/resp/large-buffers.js';

interface Outcome {
  started: boolean;
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body: Buffer;
  pieces: number;
  error?: Error & { code?: string };
}

/** One request through the pool; resolves with what the handler saw. */
function call(
  pool: Http1Pool,
  options: { path?: string; headers?: Record<string, string>; body?: string | Buffer | null } = {},
  onStart?: (c: Dispatcher.DispatchController) => void,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { started: false, body: Buffer.alloc(0), pieces: 0 };
    const chunks: Buffer[] = [];
    pool.dispatch(
      {
        method: 'POST',
        path: options.path ?? '/pipeline',
        headers: options.headers ?? { 'content-type': 'application/json' },
        body: options.body ?? '[]',
      },
      {
        onRequestStart(c) {
          out.started = true;
          onStart?.(c);
        },
        onResponseStart(_c, status, headers) {
          out.status = status;
          out.headers = headers;
        },
        onResponseData(_c, chunk) {
          chunks.push(Buffer.from(chunk));
        },
        onResponseEnd() {
          out.body = Buffer.concat(chunks);
          out.pieces = chunks.length;
          resolve(out);
        },
        onResponseError(_c, error) {
          out.error = error;
          resolve(out);
        },
      },
    );
  });
}

interface Received {
  head: string;
  body: Buffer;
}

/**
 * A raw HTTP server: `answer(socket, request, n)` writes what it likes for the n-th request of all
 * connections. Records every request and every accepted connection.
 */
async function rawServer(answer: (socket: net.Socket, request: Received, n: number) => unknown) {
  const requests: Received[] = [];
  const sockets: net.Socket[] = [];
  const ends: number[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    let pending = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('end', () => ends.push(Date.now()));
    socket.on('data', (data) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = pending.toString('latin1', 0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const request = { head, body: Buffer.from(pending.subarray(end + 4, end + 4 + length)) };
        pending = pending.subarray(end + 4 + length);
        requests.push(request);
        void answer(socket, request, requests.length);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  opened.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port, requests, sockets, ends, origin: `http://127.0.0.1:${port}` };
}

const opened: (() => void)[] = [];
const pools: Http1Pool[] = [];
function pool(origin: string, connections = 2): Http1Pool {
  const p = new Http1Pool(origin, { connections, connectTimeoutMs: 2000 });
  pools.push(p);
  return p;
}
afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const close of opened.splice(0)) close();
});

const tick = () => new Promise((r) => setTimeout(r, 5));
async function writeSlowly(socket: net.Socket, text: string | Buffer, step = 1): Promise<void> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += step) {
    socket.write(bytes.subarray(i, i + step));
    await tick();
  }
}

describe('Http1Pool', () => {
  it('reads header names right whether an answer spells them as the last one did or not (names are remembered by line)', async () => {
    const heads = [
      'Content-Type: application/json\r\nX-A: 1\r\nContent-Length: 2',
      'Content-Type: text/plain\r\nX-A: 2\r\nContent-Length: 2',
      'content-TYPE: text/x\r\nX-B: 3\r\nX-A: 4\r\nX-A: 5\r\nContent-Length: 2',
      'Content-Length: 2\r\n X-A : 6\r\nContent-Type: a/b',
    ];
    const s = await rawServer((socket, _r, n) => socket.write(`HTTP/1.1 200 OK\r\n${heads[n - 1]}\r\n\r\nok`));
    const p = pool(s.origin, 1);
    const seen = [];
    for (let i = 0; i < heads.length; i++) seen.push((await call(p)).headers);
    expect(seen).toEqual([
      { 'content-type': 'application/json', 'x-a': '1', 'content-length': '2' },
      { 'content-type': 'text/plain', 'x-a': '2', 'content-length': '2' },
      { 'content-type': 'text/x', 'x-b': '3', 'x-a': ['4', '5'], 'content-length': '2' },
      { 'content-length': '2', 'x-a': '6', 'content-type': 'a/b' },
    ]);
  });

  it('sends one request per write with host and content-length, reads an answer that arrives byte by byte, and reuses the connection', async () => {
    const s = await rawServer(async (socket, _r, n) => {
      await writeSlowly(
        socket,
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Twice: a\r\nX-Twice: b\r\nContent-Length: 5\r\n\r\nok ${n}!`,
      );
    });
    const p = pool(s.origin);
    const first = await call(p, { body: '["GET","k"]', headers: { authorization: 'Bearer t', 'content-type': 'application/json' } });
    expect(first).toMatchObject({ started: true, status: 200 });
    expect(first.body.toString()).toBe('ok 1!');
    expect(first.headers).toMatchObject({ 'content-type': 'application/json', 'x-twice': ['a', 'b'], 'content-length': '5' });
    const second = await call(p, { body: Buffer.from('[1]') });
    expect(second.body.toString()).toBe('ok 2!');
    expect(s.sockets).toHaveLength(1);
    expect(s.requests[0].head).toBe(
      `POST /pipeline HTTP/1.1\r\nhost: 127.0.0.1:${s.port}\r\nauthorization: Bearer t\r\ncontent-type: application/json\r\ncontent-length: 11`,
    );
    expect(s.requests.map((r) => r.body.toString())).toEqual(['["GET","k"]', '[1]']);
  });

  it('reads a chunked answer (extensions, trailers, split anywhere) and passes the chunks on as they come', async () => {
    const answer = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n';
    const s = await rawServer(async (socket, _r, n) => {
      if (n === 1) await writeSlowly(socket, answer);
      else socket.write(answer);
    });
    const p = pool(s.origin);
    const slow = await call(p);
    expect(slow.body.toString()).toBe('hello, world');
    expect(slow.pieces).toBeGreaterThan(1);
    expect((await call(p)).body.toString()).toBe('hello, world');
    expect(s.sockets).toHaveLength(1);
  });

  it('skips a 100 Continue, takes 204 as empty, and reads an answer framed by the end of the connection', async () => {
    const s = await rawServer((socket, _r, n) => {
      if (n === 1) socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi');
      else if (n === 2) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
      else socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end');
    });
    const p = pool(s.origin);
    expect(await call(p)).toMatchObject({ status: 201, started: true });
    expect(await call(p)).toMatchObject({ status: 204, pieces: 0 });
    const third = await call(p);
    expect(third).toMatchObject({ status: 200 });
    expect(third.error).toBeUndefined();
    expect(third.body.toString()).toBe('until the end');
  });

  it('opens a new connection after `connection: close` and after an answer framed by the end', async () => {
    const s = await rawServer((socket, _r, n) => {
      socket.write(`HTTP/1.1 200 OK\r\n${n === 1 ? 'Connection: close\r\n' : ''}Content-Length: 1\r\n\r\n${n}`);
    });
    const p = pool(s.origin);
    expect((await call(p)).body.toString()).toBe('1');
    expect((await call(p)).body.toString()).toBe('2');
    expect(s.sockets).toHaveLength(2);
  });

  it('fails a request whose answer is cut off as sent ("other side closed"), and serves the next on a new connection', async () => {
    const s = await rawServer((socket, _r, n) => {
      if (n === 1) {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
        setTimeout(() => socket.destroy(), 20);
      } else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const p = pool(s.origin);
    const cut = await call(p);
    expect(cut.started).toBe(true);
    expect(cut.error).toMatchObject({ message: 'other side closed', code: 'UND_ERR_SOCKET' });
    expect((await call(p)).body.toString()).toBe('ok');
  });

  it('fails a request to a closed port as not sent, with the system error', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(port));
      });
    });
    const p = pool(`http://127.0.0.1:${closed}`);
    const outcomes = await Promise.all([call(p), call(p), call(p)]);
    for (const o of outcomes) {
      expect(o.started).toBe(false);
      expect(o.error).toMatchObject({ code: 'ECONNREFUSED', message: `connect ECONNREFUSED 127.0.0.1:${closed}` });
    }
    // Through exchange(): "not sent", so the proxy says "not executed".
    expect(await exchange(p as unknown as Dispatcher, { path: '/pipeline', headers: {}, body: '[]' }, 1000)).toMatchObject({
      ok: false,
      notSent: true,
      code: 'ECONNREFUSED',
    });
  });

  it('writes nothing for a request abandoned at its start (its deadline passed while it waited), and the connection stays in use', async () => {
    const s = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    const p = pool(s.origin, 1);
    expect((await call(p)).body.toString()).toBe('ok');
    const abandoned = await call(p, {}, (c) => c.abort(new Error('request abandoned after its deadline')));
    expect(abandoned.error?.message).toBe('request abandoned after its deadline');
    expect((await call(p)).body.toString()).toBe('ok');
    expect(s.requests).toHaveLength(2);
    expect(s.sockets).toHaveLength(1);
  });

  it('queues requests beyond its connections and answers them in order', async () => {
    const s = await rawServer((socket, request) => {
      setTimeout(() => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${request.body.length}\r\n\r\n${request.body.toString()}`), 5);
    });
    const p = pool(s.origin, 2);
    const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => call(p, { body: `[${i}]` })));
    expect(answers.map((a) => a.body.toString())).toEqual(Array.from({ length: 7 }, (_, i) => `[${i}]`));
    expect(s.sockets).toHaveLength(2);
  });

  it('refuses a header value or path that would split the request, without sending it', async () => {
    const s = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    const p = pool(s.origin);
    const injected = await call(p, { headers: { authorization: 'Bearer x\r\nX-Evil: 1' } });
    expect(injected).toMatchObject({ started: false, error: { code: 'UND_ERR_INVALID_ARG', message: 'invalid authorization header' } });
    expect(await call(p, { path: '/pipeline HTTP/1.1\r\n' })).toMatchObject({ started: false, error: { code: 'UND_ERR_INVALID_ARG' } });
    expect(s.requests).toHaveLength(0);
  });

  it('sends a large body whole (not copied into the head) and a string body by its byte length', async () => {
    const s = await rawServer((socket, request) =>
      socket.write(`HTTP/1.1 200 OK\r\nX-Got: ${request.body.length}\r\nContent-Length: 0\r\n\r\n`),
    );
    const p = pool(s.origin);
    const large = Buffer.alloc(300_000, 7);
    large[299_999] = 9;
    expect(await call(p, { body: large })).toMatchObject({ status: 200, headers: { 'x-got': '300000' } });
    expect(s.requests[0].body.equals(large)).toBe(true);
    await call(p, { body: 'é€' });
    expect(s.requests[1].head).toMatch(/content-length: 5$/);
    expect(s.requests[1].body.toString()).toBe('é€');
  });

  it('drops a connection that sends bytes nobody asked for; the next request gets a new one', async () => {
    const s = await rawServer((socket, _r, n) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n${n}`);
      if (n === 1) setTimeout(() => socket.write('garbage'), 10);
    });
    const p = pool(s.origin, 1);
    expect((await call(p)).body.toString()).toBe('1');
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(p)).body.toString()).toBe('2');
    expect(s.sockets).toHaveLength(2);
  });

  it('fails an answer without an HTTP/1.x status line or with a broken content-length, as sent', async () => {
    const s = await rawServer((socket, _r, n) => {
      if (n === 1) socket.write('HTTP/2 200\r\n\r\n');
      else if (n === 2) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n');
      else socket.write('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const p = pool(s.origin, 1);
    expect(await call(p)).toMatchObject({
      started: true,
      error: { code: 'UND_ERR_SOCKET', message: 'invalid answer from the upstream: HTTP/2 200' },
    });
    expect(await call(p)).toMatchObject({
      started: true,
      error: { code: 'UND_ERR_SOCKET', message: 'invalid content-length from the upstream' },
    });
    // HTTP/1.0 without keep-alive: answered, then the connection is not reused.
    expect((await call(p)).body.toString()).toBe('ok');
    expect((await call(p)).body.toString()).toBe('ok');
    expect(s.sockets).toHaveLength(4);
  });

  it("closes an idle connection before the server's keep-alive timeout", async () => {
    const s = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=3\r\nContent-Length: 0\r\n\r\n'));
    const p = pool(s.origin);
    await call(p);
    const answeredAt = Date.now();
    // timeout=3 less undici's 2 s margin: closed after ~1 s idle, well before the server's 3 s.
    await new Promise((r) => setTimeout(r, 2200));
    expect(s.ends).toHaveLength(1);
    expect(s.ends[0] - answeredAt).toBeLessThan(2200);
  });

  it('close() lets the request in flight finish, then refuses new ones; destroy() fails what is in flight', async () => {
    const s = await rawServer((socket, _r, n) => {
      if (n === 1) setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'), 30);
    });
    const p = pool(s.origin);
    const inFlight = call(p);
    await new Promise((r) => setTimeout(r, 10));
    const closed = p.close();
    expect((await inFlight).body.toString()).toBe('ok');
    await closed;
    expect(p.closed).toBe(true);
    expect(await call(p)).toMatchObject({ started: false, error: { code: 'UND_ERR_CLOSED' } });

    const q = pool(s.origin);
    const stuck = call(q); // n = 2: never answered
    await new Promise((r) => setTimeout(r, 20));
    await q.destroy();
    expect(await stuck).toMatchObject({ started: true, error: { code: 'UND_ERR_DESTROYED' } });
    expect(q.destroyed).toBe(true);
  });

  it("is the proxy's call pool unless RESPGATE_UPSTREAM_HTTP=undici asks for undici's Pool", async () => {
    const options = { connections: 2, connectTimeoutMs: 1000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000 };
    const lean = callPool('http://127.0.0.1:1', options);
    expect(lean).toBeInstanceOf(Http1Pool);
    await lean.destroy();
    const before = process.env.RESPGATE_UPSTREAM_HTTP;
    process.env.RESPGATE_UPSTREAM_HTTP = 'undici';
    try {
      const undici = callPool('http://127.0.0.1:1', options);
      expect(undici).not.toBeInstanceOf(Http1Pool);
      expect(undici.constructor.name).toBe('Pool');
      await undici.destroy();
    } finally {
      if (before === undefined) delete process.env.RESPGATE_UPSTREAM_HTTP;
      else process.env.RESPGATE_UPSTREAM_HTTP = before;
    }
  });
});

/** One request; resolves with the chunks the handler got, as they are (not copied), or the error. */
function callRaw(p: Http1Pool): Promise<{ chunks: Buffer[]; error?: Error & { code?: string }; started: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let started = false;
    p.dispatch(
      { method: 'POST', path: '/pipeline', body: '[]' },
      {
        onRequestStart: () => void (started = true),
        onResponseData: (_c, chunk) => void chunks.push(chunk),
        onResponseEnd: () => resolve({ chunks, started }),
        onResponseError: (_c, error) => resolve({ chunks, error, started }),
      },
    );
  });
}

/** `size` bytes of pattern `seed`, every byte value, CR LF among them. */
function pattern(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed + (i >> 9)) & 255;
  return out;
}

/** Writes `bytes` in pieces of the given sizes (cycled), a pause after every few, so the reader gets many reads. */
async function writeInPieces(socket: net.Socket, bytes: Buffer, sizes: number[]): Promise<void> {
  let k = 0;
  for (let at = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length];
    socket.write(bytes.subarray(at, at + size));
    at += size;
    if (k % 3 === 2) await tick();
  }
}

describe('Http1Pool: answers read where the connection says (plain TCP)', () => {
  it('reads a large body that arrives in many reads of odd sizes into one buffer of its size from the large-value pool', async () => {
    const bodies = [pattern(1024 * 1024 + 3, 1), pattern(1024 * 1024 + 3, 2), pattern(300_000, 3)];
    const s = await rawServer(async (socket, _r, n) => {
      const body = bodies[n - 1];
      if (!body) return socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      // The head's end and the body's first bytes in one write, then pieces of odd sizes.
      const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`);
      await writeInPieces(socket, Buffer.concat([head, body]), [head.length - 3, 10, 1, 65_537, 4095, 200_001, 7]);
    });
    const p = pool(s.origin, 1);
    const first = await callRaw(p);
    expect(first.error).toBeUndefined();
    expect(first.chunks).toHaveLength(1);
    expect(first.chunks[0].equals(bodies[0])).toBe(true);
    expect(largeBuffers.owns(first.chunks[0])).toBe(true);
    // Given back, the same memory takes the next large body: the first one's bytes are overwritten only now.
    const copy = Buffer.from(first.chunks[0]);
    largeBuffers.give(first.chunks[0]);
    const second = await callRaw(p);
    expect(second.chunks).toHaveLength(1);
    expect(second.chunks[0].equals(bodies[1])).toBe(true);
    expect(second.chunks[0].buffer).toBe(first.chunks[0].buffer);
    expect(copy.equals(bodies[0])).toBe(true);
    const third = await callRaw(p);
    expect(Buffer.concat(third.chunks).equals(bodies[2])).toBe(true);
    // And the connection goes on with small answers.
    expect(Buffer.concat((await callRaw(p)).chunks).toString()).toBe('ok');
    expect(s.sockets).toHaveLength(1);
  });

  it('keeps small answers as views that later reads never overwrite, with large bodies read between them', async () => {
    const s = await rawServer(async (socket, _r, n) => {
      if (n % 10 === 0) {
        const body = pattern(200_000, n);
        // The head alone in one read: the body starts at the next read.
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
        await tick();
        return writeInPieces(socket, body, [70_000, 3, 50_000]);
      }
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${String(n).length + 1}\r\n\r\n#${n}`);
    });
    const p = pool(s.origin, 1);
    const kept: Buffer[][] = [];
    for (let i = 1; i <= 300; i++) kept.push((await callRaw(p)).chunks);
    for (let i = 1; i <= 300; i++) {
      const got = Buffer.concat(kept[i - 1]);
      if (i % 10 === 0) expect(got.equals(pattern(200_000, i)), `answer ${i}`).toBe(true);
      else expect(got.toString(), `answer ${i}`).toBe(`#${i}`);
    }
    expect(s.sockets).toHaveLength(1);
  });

  it('reads bodies larger than a read buffer but not read into one buffer (under 128 KiB, over 16 MiB) in pieces as read', async () => {
    const medium = pattern(100_000, 5); // above 64 KiB, under 128 KiB: read as it comes
    const huge = pattern(17 * 1024 * 1024, 6); // above 16 MiB: no buffer of a size the server merely claims
    const s = await rawServer((socket, _r, n) => {
      const body = n === 1 ? medium : huge;
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body);
    });
    const p = pool(s.origin, 1);
    const m = await callRaw(p);
    expect(Buffer.concat(m.chunks).equals(medium)).toBe(true);
    expect(m.chunks.length).toBeGreaterThan(1);
    const h = await callRaw(p);
    expect(h.chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(h.chunks).equals(huge)).toBe(true);
    expect(h.chunks.some((c) => largeBuffers.owns(c))).toBe(false);
  });

  it('fails a request whose large body is cut off mid-way, as sent ("other side closed"), and the next gets a new connection', async () => {
    const body = pattern(1024 * 1024, 7);
    const s = await rawServer(async (socket, _r, n) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      if (n > 1) return socket.write(body);
      await writeInPieces(socket, body.subarray(0, 600_000), [65_536]);
      await tick();
      socket.destroy();
    });
    const p = pool(s.origin, 1);
    const cut = await callRaw(p);
    expect(cut.started).toBe(true);
    expect(cut.chunks).toHaveLength(0); // nothing half-read reaches the handler
    expect(cut.error).toMatchObject({ message: 'other side closed', code: 'UND_ERR_SOCKET' });
    const next = await callRaw(p);
    expect(next.chunks).toHaveLength(1);
    expect(next.chunks[0].equals(body)).toBe(true);
    expect(s.sockets).toHaveLength(2);
  });
});
