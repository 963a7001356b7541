// What every RESP port's parts may see of each other, as interfaces only (the role ioredis gives
// DataHandledable and undici its client context): the shared commands (server/commands/), the proxy's
// handlers and a side port's handlers depend on these, never on a connection class.
import type { CommandSpec } from '../commands/table.js';
import type { Protocol } from '../resp/protocol.js';
import type { Credential } from '../upstream/kv-client.js';
import type { ClientAuth } from './auth.js';
import type { CommandStats } from './command-stats.js';
import type { OutputBufferLimits } from './output-limits.js';
import type { Slowlog } from './slowlog.js';

/** Where replies of one connection go, in request order; also replies no command asked for. */
export interface ReplyPort {
  readonly id: number;
  /** `ip:port` of the client. */
  readonly address: string;
  readonly protocol: Protocol;
  /** A reply to the command being handled now (it waits for earlier replies before it is written). */
  answer(reply: Buffer): void;
  /** Takes the next reply position now; the returned function fills it (once) and writes what is ready. */
  reserve(): (reply: Buffer) => void;
  /**
   * An unsolicited reply (message, MONITOR line): after every reply owed, written at once if none is
   * missing. A client that lets more than the output limit pile up is disconnected, as Redis does.
   */
  push(reply: Buffer): void;
  /** False once the connection is closing (QUIT) or closed: nothing more is sent, as in Redis. */
  readonly open: boolean;
  /** Closes the connection now (an event stream the upstream refuses to re-establish). */
  destroy(): void;
}

/** Pub/sub subscriptions and MONITOR of one connection (pubsub.ts). */
export interface PushState {
  /** Channels + patterns + shard channels (RESP2 subscribe mode when > 0). */
  readonly subscriptionCount: number;
  /** CLIENT LIST's `sub=`, `psub=` and `ssub=`. */
  readonly channelCount: number;
  readonly patternCount: number;
  readonly shardCount: number;
  readonly monitoring: boolean;
  /** SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBE forms and MONITOR (which joins `server`'s monitors). */
  handle(spec: CommandSpec, args: Buffer[], server: ServerState): void;
  /** PING while subscribed in RESP2: `*2 $4 pong $<n> <arg>`. */
  subscribedPing(args: Buffer[]): Buffer;
  /** RESET, QUIT and disconnect: leaves every subscription and MONITOR, closing the upstream streams. */
  reset(): void;
}

/** CLIENT REPLY: `skip-next` is set by SKIP (its own reply is silenced, then the next command's: `skip`). */
export type ReplyMode = 'on' | 'off' | 'skip-next' | 'skip';

/** What a command handler may see of its connection, and change. */
export interface Connection {
  /** CLIENT REPLY ON|OFF|SKIP. */
  replyMode: ReplyMode;
  readonly id: number;
  readonly createdAt: number;
  readonly lastInteractionAt: number;
  /** Full name of the last command (`client|list`; `exec` while EXEC runs the queued commands). */
  readonly lastCommand: string;
  readonly address: string;
  readonly localAddress: string;
  readonly localPort: number;
  /** The socket's file descriptor, for CLIENT LIST (-1 when unknown). */
  readonly fd: number;
  name: string;
  /** CLIENT SETINFO lib-name and lib-ver ('' until set). */
  libName: string;
  libVersion: string;
  protocol: Protocol;
  /** The selected database (SELECT; CLIENT LIST's `db=`, MONITOR's `[db addr]`); always 0 on a side port. */
  db: number;
  readonly authenticated: boolean;
  /** AUTH, HELLO AUTH, RESET. */
  setAuthenticated(value: boolean): void;
  /** The client's own upstream token (pass-through, ACL users); undefined = the configured one. */
  credential: Credential | undefined;
  readonly pushes: PushState;
  /** Commands queued in the open transaction, or -1 outside MULTI (CLIENT LIST's `multi=`). */
  readonly queuedCommands: number;
  /** RESET: leaves MULTI, dropping the queue. */
  discardTransaction(): void;
  /** In a blocking command now (INFO blocked_clients, connections by state). */
  readonly isBlocked: boolean;
  /** CLIENT KILL: closes the connection (after nothing more: replies owed are dropped, as in Redis). */
  destroy(): void;
  /** CLIENT UNBLOCK: ends a blocking command in progress; false when nothing is blocked. */
  unblock(reason: 'timeout' | 'error'): boolean;
}

/** One port as a whole, as handlers see it (INFO, CLIENT LIST, CLIENT UNBLOCK, SLOWLOG). */
export interface ServerState {
  connections(): Iterable<Connection>;
  /** Connections accepted so far. */
  readonly acceptedConnections: number;
  readonly startedAt: number;
  /** Upstream calls and forwarded commands (INFO stats; a side port counts its requests). */
  readonly stats: { readonly calls: number; readonly commands: number };
  /** The databases SELECT may choose (the proxy's); undefined = database 0 only. */
  readonly databases?: { has(index: number): boolean; readonly count: number };
  /** The password clients must give with AUTH; undefined = none. */
  readonly requirepass: string | undefined;
  /** Client authentication (password, pass-through tokens, ACL users). */
  readonly auth: ClientAuth;
  /** SLOWLOG's record (its thresholds change with CONFIG SET slowlog-*). */
  readonly slowlog: Slowlog;
  /**
   * Redis `timeout` and `maxclients`, read live by the listener, and client-output-buffer-limit, read
   * live by each connection (CONFIG SET changes them on the proxy).
   */
  readonly settings: { idleTimeoutSec: number; maxClients: number; readonly outputBufferLimits: OutputBufferLimits };
  /** MONITOR connections (proxy/monitor.ts; a side port has none). */
  readonly monitors: Monitors;
  /** CLIENT PAUSE (server/pause.ts). */
  readonly pause: PauseState;
  /** INFO commandstats and errorstats. */
  readonly commandStats: CommandStats;
  /** Bytes read from and written to client connections so far (INFO total_net_input_bytes …). */
  traffic(): { input: number; output: number };
}

/** A MONITOR connection, as the port's monitors see it. */
export interface MonitorTarget {
  readonly open: boolean;
  push(reply: Buffer): void;
}

/** The MONITOR connections of one port and what MULTI queues while someone monitors (proxy/monitor.ts MonitorHub). */
export interface Monitors {
  add(target: MonitorTarget): void;
  delete(target: MonitorTarget): void;
  /** A command ran: every monitor gets its line, unless Redis hides it. */
  feed(conn: Connection, spec: CommandSpec, args: Buffer[]): void;
  /** MULTI … EXEC: a queued command, shown when EXEC runs it. */
  queue(conn: object, args: Buffer[]): void;
  /** The queued commands of `conn`, forgotten. */
  take(conn: object): Buffer[][];
}

/** CLIENT PAUSE of one port (server/pause.ts PauseControl). */
export interface PauseState {
  /** CLIENT PAUSE timeout [WRITE|ALL]. */
  start(args: Buffer[]): Buffer;
  /** CLIENT UNPAUSE. */
  stop(): Buffer;
  /** The end of the pause this command must wait for on `conn`, or undefined when it runs now. */
  until(conn: object, spec: CommandSpec, monitoring: boolean): Promise<void> | undefined;
  /** A command queued in MULTI (undefined: the queue is gone), for WRITE pauses of EXEC. */
  noteQueued(conn: object, spec: CommandSpec | undefined): void;
}
