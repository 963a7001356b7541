// The proxy's listeners (TCP, and TLS with --tls-port) and its wiring: builds one ProxyContext
// (batcher, upstream clients, client authentication, limits, the registry of connections) and gives
// each accepted client a Session.
import net from 'node:net';
import tls from 'node:tls';
import { checkExposure, resolveProxyConfig, type ProxyConfig, type ResolvedProxyConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { EventStreamClient } from '../upstream/event-stream.js';
import { KvClient } from '../upstream/kv-client.js';
import { ClientAuth } from './auth.js';
import { Batcher } from './batcher.js';
import { ClientCost } from './client-cost.js';
import { CommandStats } from './command-stats.js';
import type { ProxyContext, ServerState } from './context.js';
import { explainRequestSizeErrors } from './limits-hint.js';
import { createProxyMetrics, registerClientCost, type ConnectionState } from './proxy-metrics.js';
import { Session } from './session.js';
import { PauseControl } from './local/pause.js';
import { MonitorHub } from './monitor.js';
import { Slowlog } from './slowlog.js';
import { UpstreamWatch } from './upstream-watch.js';
import { createReadBuffer } from './socket-input.js';

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
const MAX_CLIENTS = Buffer.from('-ERR max number of clients reached\r\n');

export async function startProxy(proxyConfig: ProxyConfig, log: Logger): Promise<RunningProxy> {
  const config = resolveProxyConfig(proxyConfig);
  const passThrough = config.upstreamToken === '';
  if (config.aclUsers && passThrough) {
    throw new Error("--acl-users needs --upstream-token: the proxy asks the upstream for the users' tokens with it (ACL RESTTOKEN)");
  }
  const client = new KvClient({
    url: config.upstreamUrl,
    token: config.upstreamToken,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    maxRequestBytes: config.maxRequestBytes,
    format: config.upstreamFormat,
    upstreamMaxRequestBytes: config.upstreamMaxRequestBytes,
    ca: config.upstreamCa,
  });
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
  const sessions = new Set<Session>();
  let accepted = 0;
  /** Bytes of connections already closed (open ones are read from their sockets). */
  const closedBytes = { input: 0, output: 0 };
  const traffic = () => {
    let input = closedBytes.input,
      output = closedBytes.output;
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
  const clientCost = new ClientCost();
  registerClientCost(clientCost);
  const batcher = new Batcher(client, {
    cost: clientCost,
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
    settings: config,
    monitors: new MonitorHub(),
    pause: new PauseControl(),
    commandStats: new CommandStats(),
    clientCost,
    traffic,
    auth,
  };
  const ctx: ProxyContext = {
    config,
    batcher,
    log,
    pushUpstream: { client: events, log, confirmTimeoutMs: config.upstreamTimeoutMs },
    readBuffer: createReadBuffer(),
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
  const accept = (socket: net.Socket) => {
    if (sessions.size >= config.maxClients) {
      // Redis' text, then the connection closes (networking.c acceptCommonHandler).
      socket.on('error', () => undefined);
      socket.end(MAX_CLIENTS);
      return;
    }
    const session = new Session(socket, ++accepted, ctx, closed);
    sessions.add(session);
    log.debug({ conn: session.id, client: session.address }, 'connection opened');
  };
  // Half-open: a client that ends its side still gets the replies it is owed (see Session).
  const listener = net.createServer({ allowHalfOpen: true }, accept);
  await listen(listener, config.port, config.host, '--port or RESPGATE_PORT (npm start -- --port 6390)');
  const tlsListener = config.tls ? tlsServer(config, accept, log) : undefined;
  if (tlsListener && config.tls) {
    try {
      await listen(tlsListener, config.tls.port, config.host, '--tls-port');
    } catch (err) {
      listener.close();
      throw err;
    }
  }
  // Always running: CONFIG SET timeout can turn the idle timeout on later.
  const idleTimer = setInterval(() => config.idleTimeoutSec > 0 && closeIdle(sessions, config), 1000);
  idleTimer.unref();
  const port = (listener.address() as net.AddressInfo).port;
  const tlsPort = tlsListener ? (tlsListener.address() as net.AddressInfo).port : undefined;
  log.debug({ port, tlsPort }, 'proxy listening');
  // The check at start: logged, never fatal; it keeps checking in the background until the upstream
  // answers. In pass-through mode there is no token of the proxy's own to check.
  const upstreamChecked = passThrough ? Promise.resolve(true) : watch.start();
  const closeListeners = () => {
    watch.stop();
    clearInterval(idleTimer);
    listener.close();
    tlsListener?.close();
  };
  const release = async () => {
    await events.close();
    await client.close();
  };
  return {
    upstreamChecked,
    port,
    host: config.host,
    tlsPort,
    connections: () => sessions.size,
    upstream: watch,
    stop: async () => {
      closeListeners();
      for (const s of sessions) s.destroy();
      await release();
    },
    shutdown: async () => {
      closeListeners();
      const deadline = Date.now() + config.shutdownGraceMs;
      for (const s of sessions) s.drain();
      // Every connection closes once its owed replies are written; past the deadline, at once.
      while (sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const s of sessions) s.destroy();
      await release();
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

function listen(server: net.Server, port: number, host: string, flag: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} on ${host} is already in use, often by a system redis-server (stop it with 'sudo systemctl stop redis-server'); or choose another port with ${flag}`,
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve());
  });
}

/** The TLS listener: redis-server's tls-port, tls-cert-file, tls-key-file, tls-ca-cert-file, tls-auth-clients. */
function tlsServer(config: ResolvedProxyConfig, accept: (socket: net.Socket) => void, log: Logger): tls.Server {
  const t = config.tls!;
  const server = tls.createServer(
    {
      cert: t.cert,
      key: t.key,
      ca: t.ca,
      requestCert: t.authClients !== 'no',
      rejectUnauthorized: t.authClients === 'yes',
      allowHalfOpen: true,
    },
    accept,
  );
  // A failed handshake (plain text on the TLS port, a refused certificate) is the client's problem.
  server.on('tlsClientError', (err) => log.debug({ problem: err.message }, 'TLS handshake failed'));
  return server;
}

/** Redis `timeout`: idle clients are closed; subscribers, MONITOR and blocked clients are not idle. */
function closeIdle(sessions: Set<Session>, config: ResolvedProxyConfig): void {
  const limit = Date.now() - config.idleTimeoutSec * 1000;
  for (const s of sessions) {
    if (s.lastInteractionAt < limit && s.idle) s.destroy();
  }
}
