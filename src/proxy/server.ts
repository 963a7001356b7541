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
import { Session } from './session.js';

export interface RunningProxy {
  port: number;
  host: string;
  connections(): number;
  stop(): Promise<void>;
}

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
  const batcher = new Batcher(client, { maxBatch: config.maxBatch, maxInFlight: config.upstreamConnections });
  const sessions = new Set<Session>();
  let accepted = 0;
  const server: ServerState = {
    connections: () => sessions,
    get acceptedConnections() {
      return accepted;
    },
    startedAt: Date.now(),
    stats: batcher.stats,
    requirepass: config.requirepass,
  };
  const ctx: ProxyContext = {
    config,
    batcher,
    log,
    pushUpstream: { client: events, log, confirmTimeoutMs: config.upstreamTimeoutMs },
    server,
  };
  const closed = (s: Session) => sessions.delete(s);
  observedGauge('respgate_proxy_connections', 'Client connections open on the proxy', () => sessions.size);
  observedCounter('respgate_proxy_upstream_calls_total', 'Upstream /pipeline calls made by the batcher', () => batcher.stats.calls);
  observedCounter('respgate_proxy_forwarded_commands_total', 'Commands sent upstream by the batcher', () => batcher.stats.commands);
  // Half-open: a client that ends its side still gets the replies it is owed (see Session).
  const listener = net.createServer({ allowHalfOpen: true }, (socket) => {
    sessions.add(new Session(socket, ++accepted, ctx, closed));
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
  return {
    port,
    host: config.host,
    connections: () => sessions.size,
    stop: async () => {
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const s of sessions) s.socket.destroy();
      });
      await events.close();
      await client.close();
    },
  };
}
