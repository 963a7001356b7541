// A RESP port made of a command table and its handlers (the vector and queue side ports): the shared
// listeners (TCP, TLS, maxclients, idle timeout, drain), the shared connection core, password
// authentication, SLOWLOG, INFO commandstats and its metrics, with the same limits and error texts
// as the proxy port.
import type { TlsListenerConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { ClientAuth } from './auth.js';
import { CommandStats } from './command-stats.js';
import { CommandTable, type PortCommand } from './command-table.js';
import type { ConnectionLimits } from './connection.js';
import type { Monitors, ServerState } from './context.js';
import { startListeners, type Listeners } from './listener.js';
import { PauseControl } from './pause.js';
import { Slowlog } from './slowlog.js';
import { createReadBuffer } from './socket-input.js';
import { tablePortCommands } from './table-commands.js';
import { TableSession, type TablePort } from './table-session.js';

/** What every listener of a table port takes (the proxy port's flags, per port: docs/security.md). */
export interface PortLimits extends ConnectionLimits {
  maxClients: number;
  idleTimeoutSec: number;
  shutdownGraceMs: number;
  slowlogLogSlowerThanUs: number;
  slowlogMaxLen: number;
}

export interface TablePortOptions {
  /** `vector` or `queue`: metrics names, INFO, HELP and errors. */
  role: string;
  host: string;
  port: number;
  tls?: TlsListenerConfig;
  requirepass?: string;
  limits: PortLimits;
  /** The port's own commands (the handshake, INFO, COMMAND, SLOWLOG and HELP are added). */
  commands: PortCommand[];
  upstreamInfo(): string[];
  /** The error text of a handler's failure that is not a CommandError; undefined = an internal error. */
  errorText(err: unknown): string | undefined;
  /** The error when a port is taken, naming the flag that changes it. */
  busyText(port: number): string;
}

export interface RunningTablePort {
  host: string;
  port: number;
  tlsPort: number | undefined;
  connections(): number;
  /** Closes the listeners and every connection at once. */
  stop(): void;
  /** SIGTERM: stops accepting, lets every connection write the replies it owes, then closes them. */
  shutdown(): Promise<void>;
}

/** A table port has no MONITOR: nothing ever watches it. */
const NO_MONITORS: Monitors = {
  add: () => undefined,
  delete: () => undefined,
  feed: () => undefined,
  queue: () => undefined,
  take: () => [],
};

export async function startTablePort(options: TablePortOptions, log: Logger): Promise<RunningTablePort> {
  const { limits, role } = options;
  const auth = new ClientAuth(undefined, {
    requirepass: options.requirepass,
    passThrough: false,
    aclUsers: false,
    cacheMs: 0,
  });
  // The listeners start once the port's state exists; until then there is no connection.
  const live: { listeners?: Listeners<TableSession> } = {};
  const sessions = (): ReadonlySet<TableSession> => live.listeners?.connections ?? new Set();
  const stats = { calls: 0, commands: 0 };
  const server: ServerState = {
    connections: sessions,
    get acceptedConnections() {
      return live.listeners?.accepted ?? 0;
    },
    startedAt: Date.now(),
    stats,
    requirepass: options.requirepass,
    auth,
    slowlog: new Slowlog(limits.slowlogLogSlowerThanUs, limits.slowlogMaxLen),
    settings: limits,
    monitors: NO_MONITORS,
    pause: new PauseControl(),
    commandStats: new CommandStats(),
    traffic: () => live.listeners?.traffic() ?? { input: 0, output: 0 },
  };
  const port: TablePort = {
    role,
    table: new CommandTable([...tablePortCommands(), ...options.commands]),
    server,
    upstreamInfo: options.upstreamInfo,
    host: { limits, log, readBuffer: createReadBuffer(), authRequired: auth.required },
    errorText: options.errorText,
    counters: stats,
  };
  const started = await startListeners(
    { ...limits, settings: limits, host: options.host, port: options.port, tls: options.tls, busyText: options.busyText, log },
    (socket, id, onClosed) => new TableSession(socket, id, port, onClosed),
  );
  live.listeners = started;
  observedGauge(`respgate_${role}_sideport_connections`, `Client connections open on the ${role} side port`, () => sessions().size);
  observedCounter(`respgate_${role}_sideport_commands_total`, `Requests received by the ${role} side port`, () => stats.commands);
  observedCounter(
    `respgate_${role}_sideport_connections_received_total`,
    `Client connections accepted by the ${role} side port (maxclients refusals not counted)`,
    () => started.accepted,
  );
  log.debug({ port: started.port, tlsPort: started.tlsPort, role }, 'side port listening');
  return {
    host: options.host,
    port: started.port,
    tlsPort: started.tlsPort,
    connections: () => started.connections.size,
    stop: () => started.stop(),
    shutdown: () => started.shutdown(),
  };
}
