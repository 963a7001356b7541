// The proxy's TCP listener and its wiring: builds one ProxyContext (batcher, upstream clients,
// limits, the registry of connections) and gives each accepted client a Session.
import net from 'node:net';
import { resolveProxyConfig, type ProxyConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { EventStreamClient } from '../upstream/event-stream.js';
import { KvClient } from '../upstream/kv-client.js';
import { Batcher } from './batcher.js';
import type { ProxyContext, ServerState } from './context.js';
import { explainRequestSizeErrors } from './limits-hint.js';
import { createProxyMetrics, type ConnectionState } from './proxy-metrics.js';
import { Session } from './session.js';
import { Slowlog } from './slowlog.js';
import { UpstreamWatch } from './upstream-watch.js';

export interface RunningProxy {
  port: number;
  host: string;
  connections(): number;
  /** The upstream as the proxy last saw it (for /readyz). */
  upstream: { readonly ready: boolean; readonly problem: string };
  /** The check at start (PING with the token): true when the upstream answered; it is logged either way. */
  upstreamChecked: Promise<boolean>;
  stop(): Promise<void>;
}

const PING = [[Buffer.from('PING')]];

export async function startProxy(proxyConfig: ProxyConfig, log: Logger): Promise<RunningProxy> {
  const config = resolveProxyConfig(proxyConfig);
  const client = new KvClient({
    url: config.upstreamUrl,
    token: config.upstreamToken,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    maxRequestBytes: config.maxRequestBytes,
    format: config.upstreamFormat,
  });
  // Pub/sub and MONITOR: one upstream event stream per channel, pattern or MONITOR (pubsub.ts).
  const events = new EventStreamClient({ url: config.upstreamUrl, token: config.upstreamToken, timeoutMs: config.upstreamTimeoutMs });
  const sessions = new Set<Session>();
  let accepted = 0;
  /** Bytes of connections already closed (open ones are read from their sockets). */
  const closedBytes = { input: 0, output: 0 };
  const traffic = () => {
    let input = closedBytes.input, output = closedBytes.output;
    for (const s of sessions) {
      input += s.socket.bytesRead;
      output += s.socket.bytesWritten;
    }
    return { input, output };
  };
  const metrics = createProxyMetrics({
    connectionsByState: () => {
      const by: Record<ConnectionState, number> = { normal: 0, multi: 0, subscribed: 0, monitor: 0, blocked: 0 };
      for (const s of sessions) by[connectionState(s)]++;
      return by;
    },
    eventStreams: () => {
      let n = 0;
      for (const s of sessions) n += s.pushes.channelCount + s.pushes.patternCount + (s.pushes.monitoring ? 1 : 0);
      return n;
    },
    bytes: traffic,
  });
  const watch = new UpstreamWatch({
    ping: () => client.pipeline(PING).then((r) => r[0]),
    log,
    origin: new URL(config.upstreamUrl).origin,
    onError: (kind) => metrics.upstreamError(kind),
    intervalMs: config.upstreamErrorLogIntervalMs,
    retryMinMs: config.upstreamRecheckMs,
  });
  const batcher = new Batcher(client, {
    maxBatch: config.maxBatch,
    maxInFlight: config.upstreamConnections,
    observe: (commands, replies, ms) => {
      metrics.upstreamCall(ms / 1000, commands.length);
      watch.observe(commands, replies);
      explainRequestSizeErrors(replies);
    },
  });
  const slowlog = new Slowlog(config.slowlogLogSlowerThanUs, config.slowlogMaxLen);
  const server: ServerState = {
    connections: () => sessions,
    get acceptedConnections() {
      return accepted;
    },
    startedAt: Date.now(),
    stats: batcher.stats,
    requirepass: config.requirepass,
    slowlog,
    traffic,
  };
  const ctx: ProxyContext = {
    config,
    batcher,
    log,
    pushUpstream: { client: events, log, confirmTimeoutMs: config.upstreamTimeoutMs },
    server,
    ops: {
      commandDone(conn, args, readAt) {
        const ms = performance.now() - readAt;
        metrics.command(ms / 1000);
        if (slowlog.record(ms * 1000, args, conn)) {
          log.debug({ conn: conn.id, command: args[0].toString('latin1').toLowerCase(), durationUs: Math.round(ms * 1000) }, 'slow command');
        }
      },
    },
  };
  const closed = (s: Session) => {
    sessions.delete(s);
    closedBytes.input += s.socket.bytesRead;
    closedBytes.output += s.socket.bytesWritten;
    log.debug({ conn: s.id, client: s.address }, 'connection closed');
  };
  observedGauge('respgate_proxy_connections', 'Client connections open on the proxy', () => sessions.size);
  observedCounter('respgate_proxy_upstream_calls_total', 'Upstream /pipeline calls made by the batcher', () => batcher.stats.calls);
  observedCounter('respgate_proxy_forwarded_commands_total', 'Commands sent upstream by the batcher', () => batcher.stats.commands);
  // Half-open: a client that ends its side still gets the replies it is owed (see Session).
  const listener = net.createServer({ allowHalfOpen: true }, (socket) => {
    const session = new Session(socket, ++accepted, ctx, closed);
    sessions.add(session);
    log.debug({ conn: session.id, client: session.address }, 'connection opened');
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE'
        ? new Error(`port ${config.port} on ${config.host} is already in use, often by a system redis-server (stop it with 'sudo systemctl stop redis-server'); or choose another port with --port or RESPGATE_PORT (npm start -- --port 6390)`)
        : err));
    listener.listen(config.port, config.host, resolve);
  });
  const port = (listener.address() as net.AddressInfo).port;
  log.debug({ port }, 'proxy listening');
  // The check at start: logged, never fatal; it keeps checking in the background until the upstream answers.
  const upstreamChecked = watch.start();
  return {
    upstreamChecked,
    port,
    host: config.host,
    connections: () => sessions.size,
    upstream: watch,
    stop: async () => {
      watch.stop();
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const s of sessions) s.socket.destroy();
      });
      await events.close();
      await client.close();
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
