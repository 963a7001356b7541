// What the parts of the proxy may see of each other beyond what every port shares (server/context.ts),
// as interfaces only: pub/sub, MONITOR and the proxy's handlers depend on these, never on the Session
// class, so no module of proxy/ imports session.ts but server.ts.
import type { ResolvedProxyConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { LocalContext, LocalResult } from '../server/commands/handler.js';
import type { ConnectionHost } from '../server/connection.js';
import type { Connection, ReplyPort, ServerState } from '../server/context.js';
import type { EventStreamClient } from '../upstream/event-stream.js';
import type { Credential } from '../upstream/kv-client.js';
import type { Databases } from './databases.js';
import type { ClientCost } from './client-cost.js';

/** The proxy port as its own parts see it: what every port shares, and what only the proxy keeps. */
export interface ProxyServerState extends ServerState {
  /** What each client and command costs upstream (INFO clientcost, /metrics). */
  readonly clientCost: ClientCost;
  /** The databases SELECT chooses from (databases.ts). */
  readonly databases: Databases;
}

/** What a command the proxy answers itself receives: the shared handlers' context, with the proxy's state. */
export interface ProxyLocalContext extends LocalContext {
  server: ProxyServerState;
  /** Resolves once the connection's earlier commands are answered (INFO keyspace asks every database after them). */
  drained(): Promise<void>;
}

/** A command the proxy port answers itself (INFO, CONFIG …); the shared ones (SHARED_COMMANDS) fit too. */
export type ProxyHandler = (ctx: ProxyLocalContext, args: Buffer[]) => LocalResult;

/** Where pub/sub and MONITOR write, and whose credential their event streams carry. */
export interface PushPort extends ReplyPort {
  /** The client's own upstream token (pass-through, ACL users) when the stream opens; undefined = the configured one. */
  readonly credential: Credential | undefined;
  /** Takes the next reply position, filled when `reply` settles; later requests are not read until then. */
  defer(reply: Promise<Buffer>, then?: () => void): void;
}

/** Operations hooks of the proxy (metrics, SLOWLOG, logs), called from the hot path. */
export interface ProxyOperationsPort {
  /** A forwarded command got its upstream reply, `ms` after it was read. */
  commandDone(conn: Connection, args: Buffer[], ms: number): void;
  /** Whether a command answered `ms` after it was read goes to SLOWLOG (then it goes through commandDone). */
  slow(ms: number): boolean;
  /** `count` forwarded commands got their replies `ms` after they were read, none slow: what `count` commandDone calls do. */
  commandsDone(count: number, ms: number): void;
}

/** What the event streams of every connection share (pub/sub and MONITOR). */
export interface PushUpstream {
  client: EventStreamClient;
  log: Logger;
  /** How long the upstream has to confirm a new stream (its first event). */
  confirmTimeoutMs: number;
}

/** Everything a connection needs from the proxy that accepted it, built once by server.ts. */
export interface ProxyContext {
  readonly config: ResolvedProxyConfig;
  /** Each database's batcher; a connection uses its selected database's (session.ts). */
  readonly databases: Databases;
  readonly log: Logger;
  readonly pushUpstream: PushUpstream;
  readonly server: ProxyServerState;
  readonly ops: ProxyOperationsPort;
  /** The limits, log and read buffer every connection of the proxy port shares (server/connection.ts). */
  readonly host: ConnectionHost;
}
