// The proxy port's wiring: builds one ProxyContext (batcher, upstream clients, client authentication,
// limits) and starts the shared listeners (server/listener.ts: TCP, TLS with --tls-port, maxclients,
// the idle timeout, the drain on SIGTERM), which give each accepted client a Session.
import { checkExposure, resolveProxyConfig, type ProxyConfig, type ResolvedProxyConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { EventStreamClient } from '../upstream/event-stream.js';
import { KvClient } from '../upstream/kv-client.js';
import { ClientAuth } from '../server/auth.js';
import { Batcher, type BatcherOptions } from './batcher.js';
import { Databases } from './databases.js';
import { CommandStats } from '../server/command-stats.js';
import { ClientCost } from './client-cost.js';
import type { ProxyContext, ProxyServerState } from './context.js';
import { explainRequestSizeErrors } from './limits-hint.js';
import { createProxyMetrics, registerClientCost, type ConnectionState } from './proxy-metrics.js';
import { Session } from './session.js';
import { PauseControl } from '../server/pause.js';
import { MonitorHub } from './monitor.js';
import { Slowlog } from '../server/slowlog.js';
import { UpstreamWatch } from './upstream-watch.js';
import { createReadBuffer } from '../server/socket-input.js';
import { startListeners, type Listeners } from '../server/listener.js';

export interface RunningProxy {
  port: number;
  host: string;
  /** The TLS port, when --tls-port is set. */
  tlsPort: number | undefined;
  connections(): number;
  /** The upstream as the proxy last saw it (for /readyz). */
  upstream: { readonly ready: boolean; readonly problem: string };
  /** The check at start (PING with the token): true when the upstream answered; it is logged either way. */
  upstreamChecked: Promise<boolean>;
  /** Closes the listeners and every connection at once. */
  stop(): Promise<void>;
  /**
   * SIGTERM: stops accepting, lets commands in flight be answered (at most shutdownGraceMs), then
   * closes every connection and the upstream clients.
   */
  shutdown(): Promise<void>;
}

const PING = [[Buffer.from('PING')]];

export async function startProxy(proxyConfig: ProxyConfig, log: Logger): Promise<RunningProxy> {
  const config = resolveProxyConfig(proxyConfig);
  const passThrough = config.upstreamToken === '';
  if (config.aclUsers && passThrough) {
    throw new Error("--acl-users needs --upstream-token: the proxy asks the upstream for the users' tokens with it (ACL RESTTOKEN)");
  }
  const client = kvClient(config, config.upstreamUrl, config.upstreamToken);
  const auth = new ClientAuth(client, {
    requirepass: config.requirepass,
    passThrough,
    aclUsers: config.aclUsers,
    cacheMs: config.authCacheMs,
  });
  const warning = checkExposure('the proxy', config.host, auth.required, config.allowUnauthenticated, true);
  if (warning) log.warn(warning);
  // Pub/sub and MONITOR: one upstream event stream per channel, pattern or MONITOR (pubsub.ts).
  const events = new EventStreamClient({
    url: config.upstreamUrl,
    token: config.upstreamToken,
    timeoutMs: config.upstreamTimeoutMs,
    ca: config.upstreamCa,
  });
  // The listeners start once the proxy's state exists (the metrics and INFO read connections through this).
  const live: { listeners?: Listeners<Session> } = {};
  const sessions = (): ReadonlySet<Session> => live.listeners?.connections ?? new Set();
  const traffic = () => live.listeners?.traffic() ?? { input: 0, output: 0 };
  const metrics = createProxyMetrics({ ...sessionGauges(sessions), bytes: traffic });
  const watch = new UpstreamWatch({
    ping: () => client.pipeline(PING).then((r) => r[0]),
    log,
    origin: new URL(config.upstreamUrl).origin,
    onError: (kind) => metrics.upstreamError(kind),
    intervalMs: config.upstreamErrorLogIntervalMs,
    retryMinMs: config.upstreamRecheckMs,
  });
  const clientCost = new ClientCost();
  registerClientCost(clientCost);
  const batcherOptions: BatcherOptions = {
    cost: clientCost,
    maxBatch: config.maxBatch,
    maxInFlight: config.upstreamConnections,
    observe: (commands, replies, ms) => {
      metrics.upstreamCall(ms / 1000, commands.length);
      watch.observe(commands, replies);
      if (replies !== undefined) explainRequestSizeErrors(replies);
    },
  };
  const { databases, upstreamStats } = openDatabases(config, client, batcherOptions);
  const slowlog = new Slowlog(config.slowlogLogSlowerThanUs, config.slowlogMaxLen);
  const state: Omit<ProxyServerState, 'acceptedConnections'> = {
    connections: sessions,
    startedAt: Date.now(),
    stats: upstreamStats,
    databases,
    requirepass: config.requirepass,
    slowlog,
    settings: config,
    monitors: new MonitorHub(),
    pause: new PauseControl(),
    commandStats: new CommandStats(),
    clientCost,
    traffic,
    auth,
  };
  // The getter is defined afterwards, not in the literal: V8 makes an object literal with an accessor a
  // dictionary-mode object, and then every read of its fields (dispatch reads several per command) is a
  // generic lookup (bench/README.md, issue 25, hop branch).
  const server = Object.defineProperty(state, 'acceptedConnections', {
    get: () => live.listeners?.accepted ?? 0,
    enumerable: true,
  }) as ProxyServerState;
  const ctx: ProxyContext = {
    config,
    databases,
    log,
    pushUpstream: { client: events, log, confirmTimeoutMs: config.upstreamTimeoutMs },
    host: { limits: config, log, readBuffer: createReadBuffer(), authRequired: auth.required },
    server,
    ops: {
      commandDone(conn, args, ms) {
        metrics.command(ms / 1000);
        if (slowlog.record(ms * 1000, args, conn)) {
          log.debug(
            { conn: conn.id, command: args[0].toString('latin1').toLowerCase(), durationUs: Math.round(ms * 1000) },
            'slow command',
          );
        }
      },
      slow: (ms) => slowlog.logs(ms * 1000),
      commandsDone: (count, ms) => metrics.command(ms / 1000, count),
    },
  };
  observedGauge('respgate_proxy_connections', 'Client connections open on the proxy', () => sessions().size);
  observedCounter('respgate_proxy_upstream_calls_total', 'Upstream /pipeline calls made by the batcher', () => upstreamStats.calls);
  observedCounter('respgate_proxy_forwarded_commands_total', 'Commands sent upstream by the batcher', () => upstreamStats.commands);
  const started = await startListeners(
    {
      host: config.host,
      port: config.port,
      tls: config.tls,
      settings: config,
      shutdownGraceMs: config.shutdownGraceMs,
      busyText: (p) =>
        `port ${p} on ${config.host} is already in use, often by a system redis-server (stop it with 'sudo systemctl stop redis-server'); or choose another port with ${p === config.tls?.port ? '--tls-port' : '--port or RESPGATE_PORT (npm start -- --port 6390)'}`,
      log,
    },
    (socket, id, onClosed) => {
      // Below debug level a session gets no closure of its own (issue 25: idle connections), and its
      // address is read only when asked for (CLIENT LIST).
      if (!log.isLevelEnabled('debug')) return new Session(socket, id, ctx, onClosed);
      const session = new Session(socket, id, ctx, (s) => {
        onClosed(s);
        log.debug({ conn: s.id, client: s.address }, 'connection closed');
      });
      log.debug({ conn: session.id, client: session.address }, 'connection opened');
      return session;
    },
  );
  live.listeners = started;
  const { port, tlsPort } = started;
  log.debug({ port, tlsPort }, 'proxy listening');
  // The check at start: logged, never fatal; it keeps checking in the background until the upstream
  // answers. In pass-through mode there is no token of the proxy's own to check.
  const upstreamChecked = passThrough ? Promise.resolve(true) : watch.start();
  const release = async () => {
    await events.close();
    await databases.close();
    await client.close();
  };
  return {
    upstreamChecked,
    port,
    host: config.host,
    tlsPort,
    connections: () => started.connections.size,
    upstream: watch,
    stop: async () => {
      watch.stop();
      started.stop();
      await release();
    },
    shutdown: async () => {
      watch.stop();
      await started.shutdown();
      await release();
    },
  };
}

/** The gauges of connections by state and of upstream event streams (proxy-metrics.ts). */
function sessionGauges(sessions: () => ReadonlySet<Session>) {
  return {
    connectionsByState: () => {
      const by: Record<ConnectionState, number> = { normal: 0, multi: 0, subscribed: 0, monitor: 0, blocked: 0 };
      for (const s of sessions()) by[connectionState(s)]++;
      return by;
    },
    eventStreams: () => {
      let n = 0;
      for (const s of sessions()) n += s.pushes.channelCount + s.pushes.patternCount + (s.pushes.monitoring ? 1 : 0);
      return n;
    },
  };
}

function connectionState(s: Session): ConnectionState {
  if (s.isBlocked) return 'blocked';
  if (s.pushes.monitoring) return 'monitor';
  if (s.pushes.subscriptionCount > 0) return 'subscribed';
  if (s.queuedCommands >= 0) return 'multi';
  return 'normal';
}

function kvClient(config: ResolvedProxyConfig, url: string, token: string): KvClient {
  return new KvClient({
    url,
    token,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    maxRequestBytes: config.maxRequestBytes,
    format: config.upstreamFormat,
    upstreamMaxRequestBytes: config.upstreamMaxRequestBytes,
    ca: config.upstreamCa,
  });
}

/** SELECT n: database 0 is the main upstream; the others get their own client and batcher on first use. */
function openDatabases(config: ResolvedProxyConfig, client: KvClient, batcherOptions: BatcherOptions) {
  const batcher = new Batcher(client, batcherOptions);
  const databases = new Databases({ index: 0, batcher, keyspaceDb: 0, close: async () => undefined }, config.databases, (db) => {
    const dbClient = kvClient(config, db.url, db.token ?? config.upstreamToken);
    return {
      index: db.index,
      batcher: new Batcher(dbClient, batcherOptions),
      keyspaceDb: db.keyspaceDb ?? 0,
      close: () => dbClient.close(),
    };
  });
  // INFO stats and /metrics: the upstream calls of every database.
  const upstreamStats = {
    get calls() {
      return databases.stats.get('calls');
    },
    get commands() {
      return databases.stats.get('commands');
    },
  };
  return { databases, upstreamStats };
}
