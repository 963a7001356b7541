// A loopback HTTP app serving web-standard handlers (what @upstash/workflow's `serve` returns) by
// path, as a generic platform would, for workflow tests against the real platform.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WorkflowApp {
  url: string;
  routes: Map<string, (req: Request) => Promise<Response>>;
  close(): Promise<void>;
}

export async function startWorkflowApp(): Promise<WorkflowApp> {
  const routes = new Map<string, (req: Request) => Promise<Response>>();
  let url = '';
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) for (const x of Array.isArray(v) ? v : [v ?? '']) headers.append(k, x);
      const request = new Request(`${url}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
      });
      const route = routes.get(new URL(request.url).pathname);
      const response = route ? await route(request) : new Response('no such route', { status: 404 });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, routes, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Polls `probe` until it answers something (not undefined). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
