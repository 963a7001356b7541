// The proxy's Prometheus metrics beyond the counters server.ts reads at scrape time: latency
// histograms (client-observed per command, and per upstream call), batch sizes, upstream errors by
// kind, connections by state, event streams open and bytes in/out.
import { Counter, Gauge, Histogram, type Metric } from 'prom-client';
import { registry } from '../metrics.js';
import type { ClientCost, CostCounters } from './client-cost.js';
import type { UpstreamErrorKind } from './upstream-watch.js';

/** Seconds: from 100 µs (a batched command on loopback) to 10 s (past the default upstream timeout). */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

export type ConnectionState = 'normal' | 'multi' | 'subscribed' | 'monitor' | 'blocked';

/** What the scrape reads from the running proxy. */
export interface ProxyGauges {
  connectionsByState(): Record<ConnectionState, number>;
  eventStreams(): number;
  bytes(): { input: number; output: number };
}

export interface ProxyMetrics {
  /** A forwarded command answered: seconds from read to upstream reply. */
  command(seconds: number): void;
  /** One upstream call of `size` commands. */
  upstreamCall(seconds: number, size: number): void;
  upstreamError(kind: UpstreamErrorKind): void;
}

/** Metrics are process-wide: a second proxy in the same process (tests) replaces the first's. */
function fresh<T>(name: string, make: () => T): T {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  return make();
}

export function createProxyMetrics(gauges: ProxyGauges): ProxyMetrics {
  const commandSeconds = fresh(
    'respgate_proxy_command_duration_seconds',
    () =>
      new CountingHistogram(
        'respgate_proxy_command_duration_seconds',
        'Forwarded commands: time from read to upstream reply, as the client observes it (batching wait included)',
        LATENCY_BUCKETS,
      ),
  );
  const upstreamSeconds = fresh(
    'respgate_proxy_upstream_call_duration_seconds',
    () =>
      new Histogram({
        name: 'respgate_proxy_upstream_call_duration_seconds',
        help: 'Duration of one upstream HTTP call (/pipeline or a blocking poll)',
        buckets: LATENCY_BUCKETS,
        registers: [registry],
      }),
  );
  const batchSize = fresh(
    'respgate_proxy_batch_size',
    () =>
      new Histogram({
        name: 'respgate_proxy_batch_size',
        help: 'Commands per upstream call',
        buckets: BATCH_BUCKETS,
        registers: [registry],
      }),
  );
  const errors = fresh(
    'respgate_proxy_upstream_errors_total',
    () =>
      new Counter({
        name: 'respgate_proxy_upstream_errors_total',
        help: 'Commands that failed because of the upstream, by kind (timeout, unreachable, connection, auth, malformed, server_error, refused)',
        labelNames: ['kind'] as const,
        registers: [registry],
      }),
  );
  // Every kind exported from the start at 0, so that dashboards and alerts see a series before the first error.
  const kinds: Record<UpstreamErrorKind, true> = {
    timeout: true,
    unreachable: true,
    connection: true,
    auth: true,
    malformed: true,
    server_error: true,
    refused: true,
  };
  for (const kind of Object.keys(kinds)) errors.inc({ kind }, 0);
  fresh(
    'respgate_proxy_connections_by_state',
    () =>
      new Gauge({
        name: 'respgate_proxy_connections_by_state',
        help: 'Client connections by state: normal, multi (in MULTI), subscribed (pub/sub), monitor, blocked (in a blocking command)',
        labelNames: ['state'] as const,
        registers: [registry],
        collect() {
          for (const [state, n] of Object.entries(gauges.connectionsByState())) this.set({ state }, n);
        },
      }),
  );
  fresh(
    'respgate_proxy_event_streams',
    () =>
      new Gauge({
        name: 'respgate_proxy_event_streams',
        help: 'Upstream event streams open for pub/sub and MONITOR',
        registers: [registry],
        collect() {
          this.set(gauges.eventStreams());
        },
      }),
  );
  fresh(
    'respgate_proxy_net_bytes_total',
    () =>
      new Counter({
        name: 'respgate_proxy_net_bytes_total',
        help: 'Bytes read from (in) and written to (out) client connections',
        labelNames: ['direction'] as const,
        registers: [registry],
        collect() {
          const b = gauges.bytes();
          this.reset();
          this.inc({ direction: 'in' }, b.input);
          this.inc({ direction: 'out' }, b.output);
        },
      }),
  );
  return {
    command: (s) => commandSeconds.observe(s),
    upstreamCall: (s, n) => {
      upstreamSeconds.observe(s);
      batchSize.observe(n);
    },
    upstreamError: (kind) => errors.inc({ kind }),
  };
}

/** One counter per cost figure, read from `series` (client or command label → counters) when scraped. */
function costCounter(
  name: string,
  help: string,
  label: 'client' | 'command',
  series: () => ReadonlyMap<string, CostCounters>,
  value: (c: CostCounters) => number,
): void {
  fresh(
    name,
    () =>
      new Counter({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          this.reset();
          for (const [key, c] of series()) this.inc({ [label]: key }, value(c));
        },
      }),
  );
}

/**
 * What each client and each command costs upstream (client-cost.ts): commands sent, fair shares of
 * upstream requests, bytes of the commands and of their replies, error replies. Client labels are
 * the connection's name (CLIENT SETNAME), else its lib-name (CLIENT SETINFO), else `(unnamed)`; the
 * first N names get their own series, later ones count under `other`.
 */
export function registerClientCost(cost: ClientCost): void {
  const clients = () => cost.clientSeries();
  const commands = () => cost.commandSeries();
  const per = 'respgate_proxy_client_';
  costCounter(`${per}commands_total`, 'Commands sent upstream, by client name', 'client', clients, (c) => c.commands);
  costCounter(
    `${per}requests_total`,
    'Upstream HTTP requests, by client name (a shared request is split by its commands)',
    'client',
    clients,
    (c) => c.requests,
  );
  costCounter(
    `${per}sent_bytes_total`,
    'Bytes of the commands sent upstream (as RESP), by client name',
    'client',
    clients,
    (c) => c.bytesSent,
  );
  costCounter(
    `${per}received_bytes_total`,
    'Bytes of the upstream replies (as RESP), by client name',
    'client',
    clients,
    (c) => c.bytesReceived,
  );
  costCounter(`${per}errors_total`, 'Error replies from the upstream, by client name', 'client', clients, (c) => c.errors);
  const cmd = 'respgate_proxy_upstream_command_';
  costCounter(`${cmd}calls_total`, 'Commands sent upstream, by command', 'command', commands, (c) => c.commands);
  costCounter(
    `${cmd}requests_total`,
    'Upstream HTTP requests, by command (a shared request is split by its commands)',
    'command',
    commands,
    (c) => c.requests,
  );
  costCounter(
    `${cmd}sent_bytes_total`,
    'Bytes of the commands sent upstream (as RESP), by command',
    'command',
    commands,
    (c) => c.bytesSent,
  );
  costCounter(
    `${cmd}received_bytes_total`,
    'Bytes of the upstream replies (as RESP), by command',
    'command',
    commands,
    (c) => c.bytesReceived,
  );
  costCounter(`${cmd}errors_total`, 'Error replies from the upstream, by command', 'command', commands, (c) => c.errors);
}

/**
 * A histogram without labels, observed once per forwarded command: prom-client's observe() costs
 * 0.3-0.6 µs (label hashing, a closure, number-keyed objects), a sizeable share of the proxy's CPU
 * per command at -P 16 (bench/cpu-per-command.ts). This one counts into an array and gives
 * prom-client's registry the same series as its Histogram when scraped.
 */
/** One series of a scraped histogram, as prom-client's Histogram.get() gives it. */
interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar?: null;
}

export class CountingHistogram {
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
    registry.registerMetric(this as unknown as Metric);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: { labels: Record<string, string | number>; value: number; metricName: string }[];
  }> {
    const bucket = `${this.name}_bucket`;
    const values: HistogramValue[] = [];
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
