// A real HTTP server on a free loopback port that records the requests the queue delivers to it,
// answers with a programmable response, and lets a test wait for a number of requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Destination {
  url: string;
  received: Received[];
  /** Decides the answer to each request (default 200 "ok"). */
  respond: (r: Received, index: number) => Reply | Promise<Reply>;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startDestination(): Promise<Destination> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const dest: Destination = {
    url: '',
    received: [],
    respond: () => ({ status: 200, body: 'ok' }),
    waitFor(count, timeoutMs = 10_000) {
      if (dest.received.length >= count) return Promise.resolve(dest.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`destination got ${dest.received.length} of ${count} requests within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(dest.received);
          },
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r: Received = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      const index = dest.received.length;
      dest.received.push(r);
      const reply = dest.respond(r, index);
      // Wake the waiters once the answer is decided, or at once when it is still pending (a hanging endpoint).
      if (!(reply instanceof Promise)) answer(res, reply);
      for (const w of [...waiters])
        if (dest.received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      if (reply instanceof Promise) answer(res, await reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dest.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return dest;
}

function answer(res: http.ServerResponse, reply: Reply): void {
  res.writeHead(reply.status ?? 200, reply.headers ?? {});
  res.end(reply.body ?? '');
}
