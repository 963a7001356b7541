// Prometheus metrics of every role in this process (one registry, so the dev stack's /metrics shows
// the proxy and the platform together). Values that other modules already count are read at scrape
// time through collect callbacks, so the hot paths do no extra work.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'respgate_' });

export const platformRequests = new Counter({
  name: 'respgate_platform_http_requests_total',
  help: 'HTTP requests answered by the local platform, by area and status code',
  labelNames: ['area', 'status'] as const,
  registers: [registry],
});

/** A gauge whose value is read from `read` when scraped. */
export function observedGauge(name: string, help: string, read: () => number): void {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose total is read from `read` when scraped (for counts kept elsewhere). */
export function observedCounter(name: string, help: string, read: () => number): void {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** Readiness for /readyz: ready, or the reason it is not. */
export type Readiness = () => Promise<{ ready: boolean; problem?: string }>;

/**
 * Answers /healthz (the process is up: always 200) and /readyz (200 when `readiness` says ready, else
 * 503 with the reason), as JSON; true when the request was one of them.
 */
export function answerHealth(path: string, res: http.ServerResponse, readiness: Readiness): boolean {
  if (path === '/healthz') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"status":"ok"}');
    return true;
  }
  if (path !== '/readyz') return false;
  readiness().then(
    ({ ready, problem }) => {
      res.writeHead(ready ? 200 : 503, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(ready ? { status: 'ready' } : { status: 'not ready', problem }));
    },
    (err: unknown) => {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'not ready', problem: String((err as Error)?.message ?? err) }));
    },
  );
  return true;
}

/** Another path the operations port serves (the proxy's /console): true when it answered. */
export type ExtraRoute = (req: http.IncomingMessage, res: http.ServerResponse, path: string) => boolean;

/**
 * A small HTTP server answering GET /metrics, /healthz and /readyz (`--metrics-port` of the proxy and
 * side-port roles), and whatever `extra` answers (`extra.paths` names it in the 404's list).
 */
export async function startMetricsServer(
  host: string,
  port: number,
  readiness: Readiness = async () => ({ ready: true }),
  extra?: { route: ExtraRoute; paths: string },
): Promise<{ port: number; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (answerHealth(path, res, readiness)) return;
    if (extra?.route(req, res, path)) return;
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end(`served here: /metrics, /healthz, /readyz${extra ? `, ${extra.paths}` : ''}\n`);
    }
    metricsText().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'Content-Type': contentType });
        res.end(body);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`metrics port ${port} on ${host} is already in use; choose another with --metrics-port`)
          : err,
      ),
    );
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the console's keep-alive fetches must not hold the exit
      }),
  };
}
