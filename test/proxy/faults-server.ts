// A fault-injecting HTTP server for upstream-faults.test.ts: it stands where the REST upstream would
// be and, per request, forwards to a real platform or produces a fault the real platform cannot
// (never answering, 500s, malformed bodies, a dropped connection after the command ran). Event
// streams (/subscribe, /psubscribe, /monitor) are forwarded as streams, headers included.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  body: Buffer;
  /** The Authorization header (tests of per-connection tokens). */
  authorization?: string;
}

export type FaultAction =
  /** Pass the request to the real upstream and its answer back. */
  | { kind: 'forward'; delayMs?: number; after?: Promise<unknown> }
  /** Answer this status, content type and body (after delayMs). */
  | { kind: 'answer'; status: number; contentType?: string; body: string | Buffer; delayMs?: number; after?: Promise<unknown> }
  /** Read the request and never answer. */
  | { kind: 'hang' }
  /** Forward (so the command runs upstream), then drop the connection instead of answering. */
  | { kind: 'forward-then-drop' }
  /** Drop the connection without forwarding. */
  | { kind: 'drop' }
  /**
   * Any other fault, written by the test on the raw response (reset mid-body, truncated body, slow
   * body, redirects…); with `forwardFirst` the real upstream runs the request and its answer is given.
   */
  | {
      kind: 'custom';
      forwardFirst?: boolean;
      respond: (res: http.ServerResponse, answer: UpstreamAnswer | undefined) => void;
    };

/** The real upstream's answer, given to a `custom` fault that forwarded first. */
export interface UpstreamAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** A `custom` fault: the first half of the real answer, then the connection reset (its length promised more). */
export function resetMidBody(res: http.ServerResponse, a: UpstreamAnswer | undefined): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(a!.body.length + 100) });
  res.write(a!.body.subarray(0, Math.max(1, a!.body.length >> 1)));
  setImmediate(() => res.socket?.resetAndDestroy());
}

/** A `custom` fault: the whole real answer, then the connection closed 10 bytes short of its length. */
export function truncatedBody(res: http.ServerResponse, a: UpstreamAnswer | undefined): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(a!.body.length + 10) });
  res.write(a!.body);
  res.socket?.end();
}

export interface FaultServer {
  url: string;
  port: number;
  /** Every request received, in order. */
  seen: SeenRequest[];
  /** Decides what to do with each request (default: forward). */
  decide: (req: SeenRequest) => FaultAction;
  stop(): Promise<void>;
}

export async function startFaultServer(upstreamUrl: string | undefined): Promise<FaultServer> {
  const sockets = new Set<import('node:net').Socket>();
  const fault: FaultServer = {
    url: '',
    port: 0,
    seen: [],
    decide: () => ({ kind: 'forward' }),
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };

  const requestHeaders = (req: http.IncomingMessage) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string' && !['host', 'content-length', 'connection', 'transfer-encoding'].includes(k)) headers[k] = v;
    }
    return headers;
  };

  /** An event stream: status and headers at once, then every chunk as it comes; the client leaving closes it upstream. */
  const forwardStream = async (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => {
    if (!upstreamUrl) throw new Error('no upstream to forward to');
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const up = await fetch(upstreamUrl + seen.path, {
      method: seen.method,
      headers: requestHeaders(req),
      body: new Uint8Array(seen.body),
      signal: abort.signal,
    });
    const headers: Record<string, string> = {};
    up.headers.forEach((v, k) => {
      if (!['content-length', 'connection', 'transfer-encoding', 'keep-alive'].includes(k)) headers[k] = v;
    });
    res.writeHead(up.status, headers);
    res.flushHeaders();
    if (up.body) for await (const chunk of up.body) if (!res.destroyed) res.write(chunk);
    res.end();
  };

  const forward = async (req: http.IncomingMessage, seen: SeenRequest) => {
    if (!upstreamUrl) throw new Error('no upstream to forward to');
    const headers = requestHeaders(req);
    const res = await fetch(upstreamUrl + seen.path, {
      method: seen.method,
      headers,
      body: seen.method === 'GET' ? undefined : new Uint8Array(seen.body),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        body: Buffer.concat(chunks),
        authorization: req.headers.authorization,
      };
      fault.seen.push(seen);
      const action = fault.decide(seen);
      // An answer waits for `after` (a gate the test opens), then for delayMs.
      const later = (ms: number | undefined, f: () => void) => {
        const go = () => (ms ? setTimeout(f, ms) : f());
        if ('after' in action && action.after) void action.after.then(go);
        else go();
      };
      const fail = (err: unknown) => {
        res.writeHead(599, { 'content-type': 'text/plain' });
        res.end(`fault server could not forward: ${String(err)}`);
      };
      switch (action.kind) {
        case 'forward':
          later(action.delayMs, () => {
            if (/\/(subscribe|psubscribe)\/|\/monitor$/.test(seen.path.split('?')[0])) {
              forwardStream(req, res, seen).catch(() => res.destroy());
              return;
            }
            forward(req, seen).then((a) => {
              res.writeHead(a.status, { 'content-type': a.contentType });
              res.end(a.body);
            }, fail);
          });
          return;
        case 'answer':
          later(action.delayMs, () => {
            res.writeHead(action.status, { 'content-type': action.contentType ?? 'application/json' });
            res.end(action.body);
          });
          return;
        case 'hang':
          return;
        case 'forward-then-drop':
          forward(req, seen).then(
            () => req.socket.destroy(),
            () => req.socket.destroy(),
          );
          return;
        case 'drop':
          req.socket.destroy();
          return;
        case 'custom':
          if (action.forwardFirst) forward(req, seen).then((a) => action.respond(res, a), fail);
          else action.respond(res, undefined);
          return;
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fault.port = (server.address() as AddressInfo).port;
  fault.url = `http://127.0.0.1:${fault.port}`;
  return fault;
}
