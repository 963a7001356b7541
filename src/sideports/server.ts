// A side port: its command table (the vector or queue set) on the shared RESP server (server/table-port.ts,
// which adds the handshake, INFO, COMMAND, SLOWLOG and HELP), plus what only a side port knows: its
// upstream's errors as clients read them, and its readiness for /readyz.
import { checkExposure, resolvePortLimits, type TlsListenerConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Readiness } from '../metrics.js';
import type { PortCommand } from '../server/command-table.js';
import { startTablePort, type PortLimits } from '../server/table-port.js';
import { RestError } from '../upstream/rest-json.js';

export interface SideportOptions {
  role: 'vector' | 'queue';
  host: string;
  port: number;
  /** TLS listener of this port (its own certificate and port: --vector-tls-port …). */
  tls?: TlsListenerConfig;
  requirepass?: string;
  /** Start on a non-loopback address without --requirepass (a warning is logged). */
  allowUnauthenticated?: boolean;
  /** maxclients, timeout, the buffer limits, SLOWLOG: PROXY_DEFAULTS where absent. */
  limits?: Partial<PortLimits>;
  commands: PortCommand[];
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
  /** The TLS port, when configured. */
  tlsPort: number | undefined;
  connections(): number;
  /** For /readyz: ready when the upstream answers one call (concurrent probes share it). */
  readiness: Readiness;
  /** Closes the listeners and every connection at once, then the upstream clients. */
  stop(): Promise<void>;
  /** SIGTERM: stops accepting, lets every connection write the replies it owes, then closes (server/listener.ts). */
  shutdown(): Promise<void>;
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
  const tlsFlag = `--${options.role}-tls-port`;
  const running = await startTablePort(
    {
      role: options.role,
      host: options.host,
      port: options.port,
      tls: options.tls,
      requirepass: options.requirepass,
      limits: resolvePortLimits(options.limits),
      commands: options.commands,
      upstreamInfo: options.upstreamInfo,
      errorText: upstreamErrorText,
      busyText: (port) =>
        `${options.role} side port ${port} on ${options.host} is already in use; choose another with ${port === options.tls?.port ? tlsFlag : options.portFlag}`,
    },
    log,
  );
  // Stopping twice (SIGTERM, then a test's cleanup) closes the upstream clients once.
  let released: Promise<void> | undefined;
  const release = async (closing: Promise<void>) => {
    await closing;
    await options.onStop?.();
  };
  return {
    role: options.role,
    host: options.host,
    port: running.port,
    tlsPort: running.tlsPort,
    connections: running.connections,
    readiness: sharedProbe(options),
    stop: () => (released ??= release(Promise.resolve(running.stop()))),
    shutdown: () => (released ??= release(running.shutdown())),
  };
}

/** A failed upstream call as the client reads it: the service's words, never a token. */
function upstreamErrorText(err: unknown): string | undefined {
  if (!(err instanceof RestError)) return undefined;
  if (err.status === 0)
    return `ERR ${err.service} unavailable: ${err.message}; the command was not confirmed, check that the service is running and retry`;
  return `ERR ${err.service} error (HTTP ${err.status}): ${err.message}`;
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
