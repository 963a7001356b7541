// The proxy's TCP listener: accepts Redis clients and gives each a session in front of the
// shared batcher and upstream client.
import net from 'node:net';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { EventStreamClient } from '../upstream/event-stream.js';
import { KvClient } from '../upstream/kv-client.js';
import { Batcher } from './batcher.js';
import { attachStreamUpstream, type StreamUpstream } from './pubsub.js';
import { Session, type SessionOptions, type SessionRegistry } from './session.js';

export interface ProxyOptions {
  host: string;
  port: number;
  upstreamUrl: string;
  upstreamToken: string;
  upstreamTimeoutMs: number;
  upstreamConnections: number;
  /** Most commands in one upstream call. */
  maxBatch: number;
  requirepass?: string;
  maxBulkLength: number;
  /** Blocking commands emulated by polling: the longest wait between two polls, in ms (default 100). */
  blockPollIntervalMs?: number;
}

export interface RunningProxy {
  port: number;
  host: string;
  connections(): number;
  stop(): Promise<void>;
}

export async function startProxy(options: ProxyOptions, log: Logger): Promise<RunningProxy> {
  const client = new KvClient({
    url: options.upstreamUrl,
    token: options.upstreamToken,
    timeoutMs: options.upstreamTimeoutMs,
    connections: options.upstreamConnections,
    maxRequestBytes: 1_000_000,
  });
  // Pub/sub and MONITOR: one upstream event stream per channel, pattern or MONITOR (pubsub.ts).
  const events = new EventStreamClient({ url: options.upstreamUrl, token: options.upstreamToken, timeoutMs: options.upstreamTimeoutMs });
  const streamUpstream: StreamUpstream = { client: events, log, confirmTimeoutMs: options.upstreamTimeoutMs };
  const batcher = new Batcher(client, { maxBatch: options.maxBatch, maxInFlight: options.upstreamConnections });
  const sessions = new Set<Session>();
  let ids = 0;
  const registry: SessionRegistry = {
    sessions: () => sessions,
    remove: (s) => sessions.delete(s),
    nextId: () => ++ids,
    nextIdPeek: () => ids,
    batcher,
    startedAt: Date.now(),
  };
  const sessionOptions: SessionOptions = {
    requirepass: options.requirepass,
    maxBulkLength: options.maxBulkLength,
    maxPendingReplies: 20_000,
    blockPollIntervalMs: options.blockPollIntervalMs ?? 100,
  };
  // Half-open: a client that ends its side still gets the replies it is owed (see Session).
  observedGauge('respgate_proxy_connections', 'Client connections open on the proxy', () => sessions.size);
  observedCounter('respgate_proxy_upstream_calls_total', 'Upstream /pipeline calls made by the batcher', () => batcher.stats.calls);
  observedCounter('respgate_proxy_forwarded_commands_total', 'Commands sent upstream by the batcher', () => batcher.stats.commands);
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    attachStreamUpstream(socket, streamUpstream);
    sessions.add(new Session(socket, registry, sessionOptions));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE'
        ? new Error(`port ${options.port} on ${options.host} is already in use, often by a system redis-server (stop it with 'sudo systemctl stop redis-server'); or choose another port with --port or RESPGATE_PORT (npm start -- --port 6390)`)
        : err));
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  log.debug({ port }, 'proxy listening');
  return {
    port,
    host: options.host,
    connections: () => sessions.size,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.socket.destroy();
      });
      await events.close();
      await client.close();
    },
  };
}
