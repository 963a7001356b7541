// Flags → the proxy's configuration (respgate proxy and respgate dev): each flag's value is parsed
// by the option table; what is checked here is what no single flag can check alone.
import { ConfigError, type DatabaseUpstream, type ProxyConfig } from '../config.js';
import { ENV, FLAG, type ProxyFlags } from './options.js';

/** The password of --requirepass or --requirepass-file (not both). */
export function requirepassOf(f: { requirepass?: string; requirepassFile?: string }): string | undefined {
  if (f.requirepass && f.requirepassFile) throw new ConfigError(`give ${FLAG.requirepass} or ${FLAG.requirepassFile}, not both`);
  return f.requirepassFile ?? f.requirepass;
}

function tlsConfig(f: ProxyFlags): ProxyConfig['tls'] {
  if (f.tlsPort === undefined) {
    if (f.tlsCertFile || f.tlsKeyFile)
      throw new ConfigError(`${FLAG.tlsCertFile} and ${FLAG.tlsKeyFile} need ${FLAG.tlsPort} (the port of TLS connections)`);
    return undefined;
  }
  if (!f.tlsCertFile || !f.tlsKeyFile)
    throw new ConfigError(`${FLAG.tlsPort} needs ${FLAG.tlsCertFile} and ${FLAG.tlsKeyFile} (PEM files)`);
  const mode = f.tlsAuthClients;
  if (mode !== 'no' && !f.tlsCaCertFile)
    throw new ConfigError(
      `${FLAG.tlsAuthClients} ${mode} needs ${FLAG.tlsCaCertFile} (the CA of client certificates), or use ${FLAG.tlsAuthClients} no`,
    );
  return { port: f.tlsPort, cert: f.tlsCertFile, key: f.tlsKeyFile, ca: f.tlsCaCertFile, authClients: mode };
}

export function proxyConfig(f: ProxyFlags, upstreamUrl: string, upstreamToken: string): ProxyConfig {
  return {
    host: f.host,
    port: f.port,
    upstreamUrl,
    upstreamToken,
    upstreamTimeoutMs: f.upstreamTimeout,
    upstreamConnections: f.upstreamConnections,
    maxBatch: f.maxBatch,
    requirepass: requirepassOf(f),
    maxBulkLength: f.protoMaxBulkLen,
    blockPollIntervalMs: f.blockPollInterval,
    slowlogLogSlowerThanUs: f.slowlogLogSlowerThan,
    slowlogMaxLen: f.slowlogMaxLen,
    upstreamFormat: f.upstreamFormat,
    aclUsers: f.aclUsers,
    allowUnauthenticated: f.allowUnauthenticated,
    tls: tlsConfig(f),
    upstreamCa: f.upstreamCaFile,
    upstreamMaxRequestBytes: f.upstreamMaxRequestSize,
    maxClients: f.maxclients,
    idleTimeoutSec: f.timeout,
    outputBufferLimits: f.clientOutputBufferLimit,
    maxQueryBufferBytes: f.clientQueryBufferLimit,
    shutdownGraceMs: f.shutdownTimeout,
  };
}

/** The standalone proxy's upstream: --upstream-url, else UPSTASH_REDIS_REST_URL; an http(s) REST URL. */
export function upstreamUrlOf(value: string | undefined): string {
  if (!value) {
    throw new ConfigError(
      `no upstream: give ${FLAG.upstreamUrl} (or ${ENV.upstreamUrl} / UPSTASH_REDIS_REST_URL), or run \`respgate dev\` for a local one`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${FLAG.upstreamUrl} is not a URL: '${value}' (expected https://<host> or http://127.0.0.1:8079)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(
      `${FLAG.upstreamUrl} must be an http:// or https:// REST URL, got '${url.protocol}//…' (a redis:// URL is a Redis server, not a REST API)`,
    );
  }
  return value.replace(/\/+$/, '');
}

/** --database entries: each number once, its URL an http(s) REST URL (database 0 is --upstream-url). */
export function databasesOf(entries: readonly DatabaseUpstream[] | undefined): DatabaseUpstream[] {
  const seen = new Set<number>();
  for (const e of entries ?? []) {
    if (seen.has(e.index)) throw new ConfigError(`${FLAG.database} ${e.index} is given twice`);
    seen.add(e.index);
  }
  return [...(entries ?? [])];
}
