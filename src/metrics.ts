// Prometheus metrics of every role in this process (one list, so the dev stack's /metrics shows the
// proxy and the platform together). Values that other modules already count are read at scrape
// time through collect callbacks, so the hot paths do no extra work.
//
// The metrics are our own small counters, gauges and histograms, which give prom-client's registry
// the same series as its own classes when scraped (test/metrics.unit.test.ts compares the text).
// prom-client itself, with Node's default metrics (process_*, nodejs_*: GC, event-loop lag), loads on
// the first scrape: a sidecar nobody scrapes never pays its ~4 MiB and ~40 ms of start (issue 25).
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Counter as PromCounter, Metric as PromMetric, Registry } from 'prom-client';

export type Labels = Record<string, string | number>;

/** A metric as prom-client's registry reads it when scraped (its `get()`). */
export interface Metric {
  readonly name: string;
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ScrapedValue[] }>;
  reset(): void;
}

interface ScrapedValue {
  labels: Labels;
  value: number;
  metricName?: string;
  exemplar?: null;
}

const metrics = new Map<string, Metric>();

/** Adds `metric` to what /metrics shows; one of the same name is replaced (a second proxy in one process: tests). */
export function register<T extends Metric>(metric: T): T {
  metrics.delete(metric.name);
  metrics.set(metric.name, metric);
  return metric;
}

export function unregister(name: string): void {
  metrics.delete(name);
}

/** Resets every metric (prom-client's registry.resetMetrics()). */
export function resetMetrics(): void {
  for (const m of metrics.values()) m.reset();
}

interface SeriesOptions<T> {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** Called when scraped, before the values are read: sets them from counts kept elsewhere. */
  collect?: (this: T) => void;
}

/** A counter's or a gauge's series, keyed as prom-client keys them (label values in name order). */
abstract class Series<T> implements Metric {
  abstract readonly type: 'counter' | 'gauge';
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  private readonly sortedNames: readonly string[];
  private readonly collect?: (this: T) => void;
  protected values = new Map<string, { value: number; labels: Labels }>();

  constructor(o: SeriesOptions<T>) {
    this.name = o.name;
    this.help = o.help;
    this.labelNames = o.labelNames ?? [];
    this.sortedNames = [...this.labelNames].sort();
    this.collect = o.collect;
    register(this);
    this.reset();
  }

  reset(): void {
    this.values = new Map();
    if (this.labelNames.length === 0) this.values.set('', { value: 0, labels: {} });
  }

  protected key(labels: Labels): string {
    let key = '';
    for (const n of this.sortedNames) if (labels[n] !== undefined) key += `${n}:${labels[n]},`;
    for (const n in labels)
      if (!this.labelNames.includes(n))
        throw new Error(`Added label "${n}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`);
    return key;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ScrapedValue[] }> {
    this.collect?.call(this as unknown as T);
    return Promise.resolve({ help: this.help, name: this.name, type: this.type, values: [...this.values.values()], aggregator: 'sum' });
  }
}

/** prom-client's Counter: inc(), inc(n), inc(labels), inc(labels, n); only upwards. */
export class Counter extends Series<Counter> {
  readonly type = 'counter';

  inc(labels?: Labels | number, value?: number): void {
    if (typeof labels !== 'object') [value, labels] = [labels, {}];
    const key = this.key(labels);
    if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (value !== undefined && value < 0) throw new Error('It is not possible to decrease a counter');
    const entry = this.values.get(key);
    if (entry) entry.value += value ?? 1;
    else this.values.set(key, { value: value ?? 1, labels });
  }
}

/** prom-client's Gauge: set(n), set(labels, n). */
export class Gauge extends Series<Gauge> {
  readonly type = 'gauge';

  set(labels: Labels | number, value?: number): void {
    if (typeof labels !== 'object') [value, labels] = [labels, {}];
    if (typeof value !== 'number') throw new TypeError(`Value is not a valid number: ${value}`);
    this.values.set(this.key(labels), { value, labels });
  }
}

/**
 * A histogram without labels, counting into an array: prom-client's observe() costs 0.3-0.6 µs
 * (label hashing, a closure, number-keyed objects), a sizeable share of the proxy's CPU per command
 * at -P 16 (bench/cpu-per-command.ts). Scraped, it gives the same series as prom-client's Histogram.
 */
export class CountingHistogram implements Metric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
    register(this);
  }

  /** `count` observations of `value` (the sum adds it `count` times, as that many observe() calls would). */
  observe(value: number, count = 1): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i] += count;
        break;
      }
    }
    for (let i = 0; i < count; i++) this.sum += value;
    this.count += count;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ScrapedValue[] }> {
    const bucket = `${this.name}_bucket`;
    const values: ScrapedValue[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i];
      values.push({ labels: { le: this.bounds[i] }, value: cumulative, metricName: bucket, exemplar: null });
    }
    values.push(
      { labels: { le: '+Inf' }, value: this.count, metricName: bucket, exemplar: null },
      { labels: {}, value: this.sum, metricName: `${this.name}_sum` },
      { labels: {}, value: this.count, metricName: `${this.name}_count` },
    );
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}

export const platformRequests = new Counter({
  name: 'respgate_platform_http_requests_total',
  help: 'HTTP requests answered by the local platform, by area and status code',
  labelNames: ['area', 'status'],
});

/** A gauge whose value is read from `read` when scraped. */
export function observedGauge(name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose total is read from `read` when scraped (for counts kept elsewhere). */
export function observedCounter(name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

let promClient: Promise<{ prom: typeof import('prom-client'); defaults: Registry }> | undefined;

/** prom-client and a registry of Node's default metrics, loaded on the first scrape. */
function loadPromClient(): NonNullable<typeof promClient> {
  // The default export: bundled (scripts/bundle.mjs), a CommonJS package's dynamic import gives its
  // module.exports there only; Node's own import gives it there too, beside the named exports.
  return (promClient ??= import('prom-client').then(({ default: prom }) => {
    const defaults = new prom.Registry();
    prom.collectDefaultMetrics({ register: defaults, prefix: 'respgate_' });
    // Its CPU counters count from their registration: they start at what the process used before, so
    // that their totals stay the process's, as when prom-client loaded with the process.
    const used = process.cpuUsage();
    const start: [string, number][] = [
      ['respgate_process_cpu_user_seconds_total', used.user],
      ['respgate_process_cpu_system_seconds_total', used.system],
      ['respgate_process_cpu_seconds_total', used.user + used.system],
    ];
    for (const [name, micros] of start) (defaults.getSingleMetric(name) as PromCounter | undefined)?.inc(micros / 1e6);
    return { prom, defaults };
  }));
}

/** The registry a scrape reads: Node's default metrics, then ours in the order they were registered. */
export async function scrapeRegistry(): Promise<Registry> {
  const { prom, defaults } = await loadPromClient();
  const ours = new prom.Registry();
  for (const m of metrics.values()) ours.registerMetric(m as unknown as PromMetric);
  return prom.Registry.merge([defaults, ours]);
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  const registry = await scrapeRegistry();
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
  // node:http loads here, not with the module: ~3 ms of a proxy's start without --metrics-port.
  const server = process.getBuiltinModule('node:http').createServer((req, res) => {
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
