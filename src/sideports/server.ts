// The TCP listener of a side port: accepts Redis clients and gives each a Connection in front of the
// side port's command table (common commands + the vector or queue set).
import net from 'node:net';
import { checkExposure } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge } from '../metrics.js';
import { CommandTable, type CommandSpec } from './command-spec.js';
import { commonCommands } from './common-commands.js';
import { Connection, type SideportContext } from './connection.js';

export interface SideportOptions {
  role: 'vector' | 'queue';
  host: string;
  port: number;
  requirepass?: string;
  /** Start on a non-loopback address without --requirepass (a warning is logged). */
  allowUnauthenticated?: boolean;
  maxBulkLength?: number;
  commands: CommandSpec[];
  upstreamInfo(): string[];
  /** Flag that sets the port, for the busy-port error. */
  portFlag: string;
  /** Called once the listener is closed (the upstream clients). */
  onStop?(): Promise<void>;
}

export interface RunningSideport {
  role: string;
  host: string;
  port: number;
  connections(): number;
  stop(): Promise<void>;
}

export async function startSideport(options: SideportOptions, log: Logger): Promise<RunningSideport> {
  // The side port holds the upstream's token like the proxy: the same rule against an open relay.
  const warning = checkExposure(
    `the ${options.role} side port`,
    options.host,
    options.requirepass !== undefined,
    options.allowUnauthenticated ?? false,
  );
  if (warning) log.warn(warning);
  const connections = new Set<Connection>();
  const stats = { commands: 0 };
  let ids = 0;
  const ctx: SideportContext = {
    role: options.role,
    table: new CommandTable([...commonCommands(), ...options.commands]),
    requirepass: options.requirepass,
    log,
    maxBulkLength: options.maxBulkLength ?? 512 * 1024 * 1024,
    startedAt: Date.now(),
    nextId: () => ++ids,
    upstreamInfo: options.upstreamInfo,
    connections: () => connections.size,
    stats,
  };
  observedGauge(
    `respgate_${options.role}_sideport_connections`,
    `Client connections open on the ${options.role} side port`,
    () => connections.size,
  );
  observedCounter(
    `respgate_${options.role}_sideport_commands_total`,
    `Requests received by the ${options.role} side port`,
    () => stats.commands,
  );
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    const c = new Connection(socket, ctx);
    connections.add(c);
    socket.on('close', () => connections.delete(c));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `${options.role} side port ${options.port} on ${options.host} is already in use; choose another with ${options.portFlag}`,
            )
          : err,
      ),
    );
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  log.debug({ port, role: options.role }, 'side port listening');
  return {
    role: options.role,
    host: options.host,
    port,
    connections: () => connections.size,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of connections) c.socket.destroy();
      });
      await options.onStop?.();
    },
  };
}
