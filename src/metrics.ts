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
  new Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
}

/** A counter whose total is read from `read` when scraped (for counts kept elsewhere). */
export function observedCounter(name: string, help: string, read: () => number): void {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new Counter({ name, help, registers: [registry], collect() { this.reset(); this.inc(read()); } });
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** A small HTTP server answering GET /metrics (for `respgate proxy --metrics-port`). */
export async function startMetricsServer(host: string, port: number): Promise<{ port: number; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end('only /metrics is served here\n');
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
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
