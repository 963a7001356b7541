// The TCP listener of a side port: accepts Redis clients and gives each a Connection in front of the
// side port's command table (common commands + the vector or queue set).
import net from 'node:net';
import { checkExposure } from '../config.js';
import type { Logger } from '../logger.js';
import { observedCounter, observedGauge, type Readiness } from '../metrics.js';
import { RestError } from '../upstream/rest-json.js';
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
  /** One cheap upstream call for /readyz; rejects when the upstream does not answer or refuses the token. */
  checkUpstream?(): Promise<void>;
}

export interface RunningSideport {
  role: string;
  host: string;
  port: number;
  connections(): number;
  /** For /readyz: ready when the upstream answers one call (concurrent probes share it). */
  readiness: Readiness;
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
    readiness: sharedProbe(options),
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of connections) c.socket.destroy();
      });
      await options.onStop?.();
    },
  };
}

/** The readiness of a side port: one upstream call per probe, shared by probes that arrive meanwhile. */
function sharedProbe(options: SideportOptions): Readiness {
  let inFlight: ReturnType<Readiness> | undefined;
  return () => {
    if (!options.checkUpstream) return Promise.resolve({ ready: true });
    inFlight ??= options.checkUpstream().then(
      () => ({ ready: true }),
      (err: unknown) => ({ ready: false, problem: upstreamProblem(err, `--${options.role}-token`) }),
    );
    const probe = inFlight;
    void probe.finally(() => {
      if (inFlight === probe) inFlight = undefined;
    });
    return probe;
  };
}

/** Why the upstream is not ready, in words an operator acts on (the service's text; never a token). */
function upstreamProblem(err: unknown, tokenFlag: string): string {
  if (err instanceof RestError) {
    if (err.status === 401 || err.status === 403)
      return `the ${err.service} refuses the token (HTTP ${err.status}: ${err.message}); check ${tokenFlag}`;
    return err.status === 0
      ? `the ${err.service} does not answer: ${err.message}`
      : `the ${err.service} answered HTTP ${err.status}: ${err.message}`;
  }
  return String((err as Error)?.message ?? err);
}
