// The one typed configuration of respgate, built from flags and RESPGATE_* environment variables
// by src/cli/ (whose option table gives each flag one of the parsers below, with errors that name the
// flag, the value and the expected form).
import { cryptoOnUse } from './crypto-on-use.js';
import { defaultOutputBufferLimits, parseOutputBufferLimits, type OutputBufferLimits } from './server/output-limits.js';

export interface PlatformConfig {
  host: string;
  httpPort: number;
  /** Standard REST token (generated when absent). */
  token: string;
  /** Read Only REST token (generated when absent). */
  readonlyToken: string;
  /** Area B data store; undefined = start an embedded redis-server. */
  redisUrl?: string;
  /** Platform bookkeeping store; undefined = start an embedded redis-server. */
  internalRedisUrl?: string;
  redisServerBinary: string;
  /** Largest accepted request body (and path) in bytes. */
  maxRequestSize: number;
  /** Key-value databases: 0 at the base URL, the others at /db/<n> (platform/databases.ts); default 1. */
  databases?: number;
  /** Commands per UTC day; 0 = no limit. */
  dailyRequestLimit: number;
  logLevel: string;
  /**
   * Directory (absolute) where the embedded redis-servers keep their data (append-only files) across
   * restarts; undefined = throw-away stores in temporary directories (--ephemeral, and every test).
   */
  dataDir?: string;
  // --- queue (Area D) and account (Area A); all optional so existing callers compile ---
  /** Bearer token of the queue area; default: the Standard --token. */
  queueToken?: string;
  /** Signing keys of Upstash-Signature; default: generated once and kept in the internal store. */
  signingKey?: string;
  nextSigningKey?: string;
  /** Multiplies the real default retry backoff (e^(2.5n) s); 0.001 makes 12 s into 12 ms for development. Default 1. */
  queueBackoffScale?: number;
  /** Price in dollars of one message, charged against the Area A budget. Default 0.00001 ($1 per 100K, pay-as-you-go). */
  queueMessagePrice?: number;
  /** Deliveries in flight at once (BullMQ worker concurrency). Default 200. */
  queueConcurrency?: number;
  /** HTTP Basic credentials of the account area. Default email dev@respgate.local; key generated when absent. */
  accountEmail?: string;
  accountKey?: string;
  // ---- Area C (vector), see docs/vector.md ----
  /** Token of the vector indexes (default: `token`). */
  vectorToken?: string;
  /** Indexes served under /vector/<name> (default: dense, dense-data, sparse, hybrid). */
  vectorIndexes?: VectorIndexConfig[];
  /** OpenAI-compatible embeddings endpoint for indexes with the "openai" embedder. */
  vectorEmbeddingsUrl?: string;
  vectorEmbeddingsModel?: string;
  vectorEmbeddingsKey?: string;
  /** HNSW parameters (tests and benchmarks). */
  vectorTuning?: Partial<SearchTuning>;
}

export const DEFAULTS = {
  host: '127.0.0.1',
  httpPort: 8079,
  proxyPort: 6379,
  vectorPort: 6380,
  queuePort: 6381,
  redisServerBinary: 'redis-server',
  maxRequestSize: 10 * 1024 * 1024,
  dailyRequestLimit: 0,
  logLevel: 'info',
  /** Where the dev stack keeps its embedded stores' data, relative to the working directory (docs/platform-kv.md). */
  dataDir: '.respgate-data',
} as const;

// ---- the proxy (respgate proxy, and the proxy of respgate dev) ----

/** Every default of the proxy and its upstream clients, in one place (src/cli/options.ts shows them in --help). */
export const PROXY_DEFAULTS = {
  port: DEFAULTS.proxyPort,
  /** One upstream HTTP call (waiting for a connection, headers and body); also a new event stream's confirmation. */
  upstreamTimeoutMs: 5000,
  /** Keep-alive connections to the upstream, and upstream calls in flight. */
  upstreamConnections: 16,
  /** Most commands in one upstream /pipeline call. */
  maxBatch: 1000,
  /** Blocking commands: polls start FIRST_POLL_INTERVAL_MS apart and double up to this. */
  blockPollIntervalMs: 100,
  firstPollIntervalMs: 10,
  /** Largest argument a client may send (Redis proto-max-bulk-len). */
  maxBulkLength: 512 * 1024 * 1024,
  /** Commands accepted but not yet answered before a connection stops reading (backpressure). */
  maxPendingReplies: 20_000,
  /** Keep every upstream request body under this (the upstream's own limit is larger). */
  maxRequestBytes: 1_000_000,
  /**
   * Redis' client-output-buffer-limit (server/output-limits.ts): normal clients unlimited (backpressure
   * pauses their reading instead), subscribers limited as in Redis.
   */
  clientOutputBufferLimit: 'normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60',
  /** After the last reply of a closing connection, how long the client has to close its side. */
  closeGraceMs: 5000,
  /** What /pipeline is asked to answer (docs/proxy.md, "Upstream reply format"). */
  upstreamFormat: 'auto' as UpstreamFormat,
  /** Upstream event streams (pub/sub, MONITOR): longest event, and the reconnect backoff. */
  maxEventChars: 64 * 1024 * 1024,
  reconnectMinDelayMs: 100,
  reconnectMaxDelayMs: 5000,
  /** SLOWLOG (Redis slowlog-log-slower-than, µs; < 0 disables, 0 logs everything) and its length. */
  slowlogLogSlowerThanUs: 10_000,
  slowlogMaxLen: 128,
  /** Upstream errors: one warn line per kind per interval, with a count. */
  upstreamErrorLogIntervalMs: 10_000,
  /** Upstream not ready: background checks start this far apart, doubling up to 30 s. */
  upstreamRecheckMs: 1000,
  // ---- security (docs/security.md) ----
  /** The upstream's max request size (the local platform's --max-request-size default): larger commands are refused before they are sent. */
  upstreamMaxRequestBytes: 10 * 1024 * 1024,
  /** Redis maxclients. */
  maxClients: 10_000,
  /** Redis timeout: seconds a client may stay idle before it is closed; 0 = never. */
  idleTimeoutSec: 0,
  /** Redis client-query-buffer-limit: bytes of a request not yet complete. */
  maxQueryBufferBytes: 1024 * 1024 * 1024,
  /** How long the upstream's verdict on a pass-through token is kept (a wrong one is asked again after this). */
  authCacheMs: 10_000,
  /** SIGTERM: how long in-flight commands have to finish before the connections are closed. */
  shutdownGraceMs: 10_000,
} as const;

/** The per-listener limits of a RESP port (server/table-port.ts PortLimits), PROXY_DEFAULTS where not given. */
export function resolvePortLimits<T extends object>(
  given: T | undefined,
): PortLimitValues & { outputBufferLimits: OutputBufferLimits } & T {
  return {
    maxBulkLength: PROXY_DEFAULTS.maxBulkLength,
    maxQueryBufferBytes: PROXY_DEFAULTS.maxQueryBufferBytes,
    outputBufferLimits: defaultOutputBufferLimits(),
    maxPendingReplies: PROXY_DEFAULTS.maxPendingReplies,
    closeGraceMs: PROXY_DEFAULTS.closeGraceMs,
    maxClients: PROXY_DEFAULTS.maxClients,
    idleTimeoutSec: PROXY_DEFAULTS.idleTimeoutSec,
    shutdownGraceMs: PROXY_DEFAULTS.shutdownGraceMs,
    slowlogLogSlowerThanUs: PROXY_DEFAULTS.slowlogLogSlowerThanUs,
    slowlogMaxLen: PROXY_DEFAULTS.slowlogMaxLen,
    ...withoutUndefined(given ?? ({} as T)),
  };
}

type PortLimitValues = {
  [
    K in
      | 'maxBulkLength'
      | 'maxQueryBufferBytes'
      | 'maxPendingReplies'
      | 'closeGraceMs'
      | 'maxClients'
      | 'idleTimeoutSec'
      | 'shutdownGraceMs'
      | 'slowlogLogSlowerThanUs'
      | 'slowlogMaxLen'
  ]: number;
};

/** TLS listener of a RESP port (the proxy's, a side port's), with redis-server's flags (docs/security.md). */
export interface TlsListenerConfig {
  port: number;
  cert: string | Buffer;
  key: string | Buffer;
  /** CA certificates that sign client certificates. */
  ca?: string | Buffer;
  /** yes: a client certificate is required; optional: checked when given; no: not asked (Redis tls-auth-clients). */
  authClients: 'yes' | 'no' | 'optional';
}

/** The proxy's configuration; the optional fields take PROXY_DEFAULTS. */
/** resp2: raw reply bytes only; json: JSON with base64 strings, converted by reply type; auto: resp2, JSON if that is what comes back. */
export type UpstreamFormat = 'auto' | 'resp2' | 'json';
export const UPSTREAM_FORMATS: readonly UpstreamFormat[] = ['auto', 'resp2', 'json'];

/** A database other than 0 behind the proxy (--database N=URL[,TOKEN]; proxy/databases.ts). */
export interface DatabaseUpstream {
  index: number;
  url: string;
  /** Its REST token; undefined = the main upstream's token. */
  token?: string;
  /**
   * The database number under which the upstream reports its keys in INFO keyspace: 0 for a REST
   * database of its own (the hosted service), N for the local platform's /db/N (one redis-server).
   */
  keyspaceDb?: number;
}

export interface ProxyConfig {
  host: string;
  port: number;
  upstreamUrl: string;
  /** '' = pass-through: each client authenticates with its own REST token (AUTH <token>). */
  upstreamToken: string;
  upstreamTimeoutMs: number;
  upstreamConnections: number;
  maxBatch: number;
  /** Password clients must give with AUTH; undefined = no authentication. */
  requirepass?: string;
  maxBulkLength: number;
  blockPollIntervalMs?: number;
  maxPendingReplies?: number;
  maxRequestBytes?: number;
  /** client-output-buffer-limit per class; a fresh object per port (CONFIG SET changes it). */
  outputBufferLimits?: OutputBufferLimits;
  closeGraceMs?: number;
  slowlogLogSlowerThanUs?: number;
  slowlogMaxLen?: number;
  upstreamErrorLogIntervalMs?: number;
  upstreamRecheckMs?: number;
  upstreamFormat?: UpstreamFormat;
  // ---- security (docs/security.md) ----
  /** AUTH <user> <pass> of other users than default becomes a token through the upstream's ACL RESTTOKEN. */
  aclUsers?: boolean;
  /** Start on a non-loopback address without client authentication (a warning is logged). */
  allowUnauthenticated?: boolean;
  upstreamMaxRequestBytes?: number;
  /** PEM CA certificates trusted for an HTTPS upstream (--upstream-ca-file). */
  upstreamCa?: string | Buffer;
  maxClients?: number;
  idleTimeoutSec?: number;
  maxQueryBufferBytes?: number;
  authCacheMs?: number;
  shutdownGraceMs?: number;
  tls?: TlsListenerConfig;
  /** Databases other than 0 (SELECT n); database 0 is `upstreamUrl`. */
  databases?: DatabaseUpstream[];
}

type OptionalKeys = 'requirepass' | 'upstreamCa' | 'tls';
/** A ProxyConfig with every default filled in. */
export type ResolvedProxyConfig = Required<Omit<ProxyConfig, OptionalKeys>> & Pick<ProxyConfig, OptionalKeys>;

export function resolveProxyConfig(config: ProxyConfig): ResolvedProxyConfig {
  return {
    blockPollIntervalMs: PROXY_DEFAULTS.blockPollIntervalMs,
    maxPendingReplies: PROXY_DEFAULTS.maxPendingReplies,
    maxRequestBytes: PROXY_DEFAULTS.maxRequestBytes,
    outputBufferLimits: defaultOutputBufferLimits(),
    closeGraceMs: PROXY_DEFAULTS.closeGraceMs,
    slowlogLogSlowerThanUs: PROXY_DEFAULTS.slowlogLogSlowerThanUs,
    slowlogMaxLen: PROXY_DEFAULTS.slowlogMaxLen,
    upstreamErrorLogIntervalMs: PROXY_DEFAULTS.upstreamErrorLogIntervalMs,
    upstreamRecheckMs: PROXY_DEFAULTS.upstreamRecheckMs,
    upstreamFormat: PROXY_DEFAULTS.upstreamFormat,
    aclUsers: false,
    allowUnauthenticated: false,
    upstreamMaxRequestBytes: PROXY_DEFAULTS.upstreamMaxRequestBytes,
    maxClients: PROXY_DEFAULTS.maxClients,
    idleTimeoutSec: PROXY_DEFAULTS.idleTimeoutSec,
    maxQueryBufferBytes: PROXY_DEFAULTS.maxQueryBufferBytes,
    authCacheMs: PROXY_DEFAULTS.authCacheMs,
    shutdownGraceMs: PROXY_DEFAULTS.shutdownGraceMs,
    databases: [],
    ...withoutUndefined(config),
  };
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** A size for --help: 10485760 → '10mb'. */
export function sizeText(bytes: number): string {
  for (const [unit, mult] of [
    ['gb', 1024 ** 3],
    ['mb', 1024 ** 2],
    ['kb', 1024],
  ] as const) {
    if (bytes % mult === 0) return `${bytes / mult}${unit}`;
  }
  return String(bytes);
}

/** QStash-style signing key: sig_ followed by 28 base58 characters. */
export function generateSigningKey(): string {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  return 'sig_' + [...cryptoOnUse().randomBytes(28)].map((b) => alphabet[b % alphabet.length]).join('');
}

export function parseNonNegativeNumber(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new ConfigError(`${flag} must be a number >= 0, got '${value}'`);
  return n;
}

// ---- Area C (vector) index settings: data shapes only, so every role can read the config ----

export type Metric = 'COSINE' | 'EUCLIDEAN' | 'DOT_PRODUCT';

export type IndexType = 'DENSE' | 'SPARSE' | 'HYBRID';

export interface VectorIndexConfig {
  name: string;
  type: IndexType;
  /** Dense and hybrid indexes. */
  dimension?: number;
  similarityFunction?: Metric;
  /** 'local' = the built-in lexical embedder; 'openai' = the OpenAI-compatible endpoint. */
  denseEmbedder?: 'local' | 'openai';
  sparseEmbedder?: 'bm25';
  /** Per-index embedding endpoint (else --vector-embeddings-url / -model / -key). */
  embeddingsUrl?: string;
  embeddingsModel?: string;
  embeddingsKey?: string;
  /** Namespaces smaller than this are searched exactly, larger ones through an HNSW graph (default 10 000). */
  hnswThreshold?: number;
  /** Per-index tokens (else --vector-token or --token, and --readonly-token). */
  token?: string;
  readonlyToken?: string;
}

export interface SearchTuning {
  /** Namespaces smaller than this are searched exactly (no graph). */
  hnswThreshold: number;
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** True while requests are being served: graph building then steps back (see indexChunk). */
  busy?: () => boolean;
}

export class ConfigError extends Error {}

export function generateToken(): string {
  return cryptoOnUse().randomBytes(32).toString('base64url');
}

export function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(`${flag} must be a TCP port number from 0 to 65535, got '${value}'`);
  }
  return n;
}

export function parseNonNegativeInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new ConfigError(`${flag} must be a whole number >= 0, got '${value}'`);
  return n;
}

/** Accepts plain bytes or a size with a unit: 512kb, 10mb, 1gb. */
export function parseSize(value: string, flag: string): number {
  const m = /^(\d+)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(value.trim());
  if (!m) throw new ConfigError(`${flag} must be a size such as 1048576, 512kb or 10mb, got '${value}'`);
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
  const n = Number(m[1]) * mult;
  if (n < 1) throw new ConfigError(`${flag} must be at least 1 byte`);
  return n;
}

/** --client-output-buffer-limit: Redis' `<class> <hard> <soft> <soft seconds>` …, classes not named keep their defaults. */
export function parseOutputBufferLimitFlag(value: string, flag: string): OutputBufferLimits {
  const parsed = parseOutputBufferLimits(value, defaultOutputBufferLimits());
  if ('error' in parsed) {
    throw new ConfigError(`${flag} takes Redis' form such as 'normal 0 0 0 pubsub 32mb 8mb 60', got '${value}': ${parsed.error}`);
  }
  return parsed.limits;
}

export function validateRedisUrl(value: string | undefined, flag: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${flag} is not a URL: use redis://[user:password@]host:port[/db]`);
  }
  if (url.protocol !== 'redis:') {
    throw new ConfigError(`${flag} must start with redis:// (got '${url.protocol}//'); TLS Redis URLs are not supported yet`);
  }
  return value;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A whole number, negative too (--slowlog-log-slower-than: negative = off). */
export function parseInteger(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n)) throw new ConfigError(`${flag} must be a whole number, got '${value}'`);
  return n;
}

export function parsePositiveInt(value: string, flag: string): number {
  const n = parseNonNegativeInt(value, flag);
  if (n < 1) throw new ConfigError(`${flag} must be at least 1`);
  return n;
}

/** One of `choices`, in any letter case. */
export function choiceParser<T extends string>(choices: readonly T[]): (value: string, flag: string) => T {
  return (value, flag) => {
    const choice = choices.find((c) => c === value.toLowerCase());
    if (choice === undefined) throw new ConfigError(`${flag} must be ${listText(choices)} (got '${value}')`);
    return choice;
  };
}

/** 'a, b or c' */
function listText(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** A switch: yes/true/1/on or no/false/0/off (and empty, for an environment variable set to nothing). */
export function parseYesNo(value: string, flag: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off|)$/i.test(value.trim())) return false;
  throw new ConfigError(`${flag} must be yes or no (also true/false, 1/0, on/off), got '${value}'`);
}

/** True for addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '::ffff:127.0.0.1';
}

/**
 * Never an open relay: a listener on a non-loopback address must make clients authenticate, unless
 * the operator says otherwise (then it only warns). Returns the warning to log, if any.
 */
export function checkExposure(
  what: string,
  host: string,
  clientAuth: boolean,
  allowUnauthenticated: boolean,
  /** The proxy can also run without a token of its own (pass-through); the side ports cannot. */
  passThroughPossible = false,
): string | undefined {
  if (clientAuth || isLoopback(host)) return undefined;
  const text = `${what} binds ${host} (reachable from the network) and clients need no authentication, so anyone who reaches it uses its upstream credentials`;
  if (!allowUnauthenticated) {
    const passThrough = passThroughPossible
      ? ', or give it no upstream token (neither --upstream-token nor RESPGATE_UPSTREAM_TOKEN or UPSTASH_REDIS_REST_TOKEN) so each client authenticates with its own token'
      : '';
    throw new ConfigError(
      `${text}: set a password with --requirepass (or --requirepass-file)${passThrough}, or bind loopback (--host 127.0.0.1); --allow-unauthenticated starts it anyway`,
    );
  }
  return `${text} (--allow-unauthenticated)`;
}
