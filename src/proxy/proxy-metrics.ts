// The proxy's Prometheus metrics beyond the counters server.ts reads at scrape time: latency
// histograms (client-observed per command, and per upstream call), batch sizes, upstream errors by
// kind, connections by state, event streams open and bytes in/out.
import { Counter, CountingHistogram, Gauge } from '../metrics.js';
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
  /** `count` forwarded commands answered (default one), each `seconds` from read to upstream reply. */
  command(seconds: number, count?: number): void;
  /** One upstream call of `size` commands. */
  upstreamCall(seconds: number, size: number): void;
  upstreamError(kind: UpstreamErrorKind): void;
}

/** Metrics are process-wide: a second proxy in the same process (tests) replaces the first's (metrics.ts register()). */
export function createProxyMetrics(gauges: ProxyGauges): ProxyMetrics {
  const commandSeconds = new CountingHistogram(
    'respgate_proxy_command_duration_seconds',
    'Forwarded commands: time from read to upstream reply, as the client observes it (batching wait included)',
    LATENCY_BUCKETS,
  );
  const upstreamSeconds = new CountingHistogram(
    'respgate_proxy_upstream_call_duration_seconds',
    'Duration of one upstream HTTP call (/pipeline or a blocking poll)',
    LATENCY_BUCKETS,
  );
  const batchSize = new CountingHistogram('respgate_proxy_batch_size', 'Commands per upstream call', BATCH_BUCKETS);
  const errors = new Counter({
    name: 'respgate_proxy_upstream_errors_total',
    help: 'Commands that failed because of the upstream, by kind (timeout, unreachable, connection, auth, malformed, server_error, refused)',
    labelNames: ['kind'],
  });
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
  new Gauge({
    name: 'respgate_proxy_connections_by_state',
    help: 'Client connections by state: normal, multi (in MULTI), subscribed (pub/sub), monitor, blocked (in a blocking command)',
    labelNames: ['state'],
    collect() {
      for (const [state, n] of Object.entries(gauges.connectionsByState())) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'respgate_proxy_event_streams',
    help: 'Upstream event streams open for pub/sub and MONITOR',
    collect() {
      this.set(gauges.eventStreams());
    },
  });
  new Counter({
    name: 'respgate_proxy_net_bytes_total',
    help: 'Bytes read from (in) and written to (out) client connections',
    labelNames: ['direction'],
    collect() {
      const b = gauges.bytes();
      this.reset();
      this.inc({ direction: 'in' }, b.input);
      this.inc({ direction: 'out' }, b.output);
    },
  });
  return {
    command: (s, count = 1) => commandSeconds.observe(s, count),
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
  new Counter({
    name,
    help,
    labelNames: [label],
    collect() {
      this.reset();
      for (const [key, c] of series()) this.inc({ [label]: key }, value(c));
    },
  });
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
