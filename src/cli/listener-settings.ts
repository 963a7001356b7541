// The listener flags of a side port (options.ts listenerFields: --vector-tls-port, --queue-maxclients …),
// already parsed by the option table, turned into the port's TLS listener and limits; what is checked
// here is what no single flag can check alone (a TLS port needs its certificate and key).
import { ConfigError, type TlsListenerConfig } from '../config.js';
import type { OutputBufferLimits } from '../server/output-limits.js';
import type { PortLimits } from '../server/table-port.js';
import type { Flags } from './option-spec.js';
import { FLAG, type ListenerFields, type ListenerRole } from './options.js';

type ListenerValues = Flags<ListenerFields>;

/** The TLS listener and limits of the `role` side port, from a role's parsed flags. */
export function listenerSettings(flags: object, role: ListenerRole): { tls?: TlsListenerConfig; limits: Partial<PortLimits> } {
  const f = (key: keyof ListenerValues): unknown => (flags as Record<string, unknown>)[role + key];
  const v = {
    TlsPort: f('TlsPort'),
    TlsCertFile: f('TlsCertFile'),
    TlsKeyFile: f('TlsKeyFile'),
    TlsCaCertFile: f('TlsCaCertFile'),
    TlsAuthClients: f('TlsAuthClients'),
  } as Pick<ListenerValues, 'TlsPort' | 'TlsCertFile' | 'TlsKeyFile' | 'TlsCaCertFile' | 'TlsAuthClients'>;
  const limits: Partial<PortLimits> = {
    maxClients: f('Maxclients') as number,
    idleTimeoutSec: f('Timeout') as number,
    outputBufferLimits: f('ClientOutputBufferLimit') as OutputBufferLimits,
    maxQueryBufferBytes: f('ClientQueryBufferLimit') as number,
    maxBulkLength: f('ProtoMaxBulkLen') as number,
    slowlogLogSlowerThanUs: f('SlowlogLogSlowerThan') as number,
    slowlogMaxLen: f('SlowlogMaxLen') as number,
    shutdownGraceMs: f('ShutdownTimeout') as number,
  };
  return { tls: tlsListener(v, role), limits };
}

function tlsListener(
  v: Pick<ListenerValues, 'TlsPort' | 'TlsCertFile' | 'TlsKeyFile' | 'TlsCaCertFile' | 'TlsAuthClients'>,
  role: ListenerRole,
) {
  const flag = (key: 'TlsPort' | 'TlsCertFile' | 'TlsKeyFile' | 'TlsCaCertFile' | 'TlsAuthClients') => FLAG[`${role}${key}`];
  if (v.TlsPort === undefined) {
    if (v.TlsCertFile || v.TlsKeyFile)
      throw new ConfigError(`${flag('TlsCertFile')} and ${flag('TlsKeyFile')} need ${flag('TlsPort')} (the port of TLS connections)`);
    return undefined;
  }
  if (!v.TlsCertFile || !v.TlsKeyFile)
    throw new ConfigError(`${flag('TlsPort')} needs ${flag('TlsCertFile')} and ${flag('TlsKeyFile')} (PEM files)`);
  const mode = v.TlsAuthClients;
  if (mode !== 'no' && !v.TlsCaCertFile)
    throw new ConfigError(
      `${flag('TlsAuthClients')} ${mode} needs ${flag('TlsCaCertFile')} (the CA of client certificates), or use ${flag('TlsAuthClients')} no`,
    );
  return { port: v.TlsPort, cert: v.TlsCertFile, key: v.TlsKeyFile, ca: v.TlsCaCertFile, authClients: mode };
}
