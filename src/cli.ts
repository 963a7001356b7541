// Command line: flags and RESPGATE_* environment variables → one validated configuration → roles.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import {
  ConfigError,
  DEFAULTS,
  generateToken,
  parseNonNegativeInt,
  parseNonNegativeNumber,
  parsePort,
  parseSize,
  PROXY_DEFAULTS,
  sizeText,
  UPSTREAM_FORMATS,
  type UpstreamFormat,
  validateLogLevel,
  validateRedisUrl,
  type PlatformConfig,
  type ProxyConfig,
} from './config.js';
import { createLogger } from './logger.js';
import { DEFAULT_INDEXES, loadVectorConfigFile, VectorConfigError } from './platform/vector/config.js';
import { startMetricsServer } from './metrics.js';
import { startPlatform, type RunningPlatform } from './platform/platform.js';
import { startProxy, type RunningProxy } from './proxy/server.js';
import { startQueueSideport } from './sideports/queue-port.js';
import type { RunningSideport } from './sideports/server.js';
import { startVectorSideport } from './sideports/vector-port.js';
import { addListenerOptions, listenerSettings } from './listener-flags.js';
import { RESPGATE_VERSION } from './version.js';

const VERSION = RESPGATE_VERSION;

/** A flag with its environment variable, so every option can be set either way. */
function opt(flags: string, description: string, env: string, defaultValue?: string): Option {
  const o = new Option(flags, description).env(env);
  if (defaultValue !== undefined) o.default(defaultValue);
  return o;
}

function platformOptions(cmd: Command): Command {
  return (
    cmd
      .addOption(
        opt('--host <address>', 'address to bind (loopback by default: nothing is exposed to the network)', 'RESPGATE_HOST', DEFAULTS.host),
      )
      .addOption(opt('--http-port <port>', 'platform HTTP port (all areas)', 'RESPGATE_HTTP_PORT', String(DEFAULTS.httpPort)))
      .addOption(opt('--token <token>', 'Standard REST token (generated and printed when absent)', 'RESPGATE_TOKEN'))
      .addOption(opt('--readonly-token <token>', 'Read Only REST token (generated and printed when absent)', 'RESPGATE_READONLY_TOKEN'))
      .addOption(
        opt(
          '--redis-url <url>',
          'Redis for the key-value data, redis://[user:password@]host:port (default: start an embedded redis-server)',
          'RESPGATE_REDIS_URL',
        ),
      )
      .addOption(
        opt(
          '--internal-redis-url <url>',
          "Redis for the platform's own bookkeeping, kept apart from the data (default: start an embedded redis-server)",
          'RESPGATE_INTERNAL_REDIS_URL',
        ),
      )
      .addOption(
        opt(
          '--redis-server <path>',
          'redis-server executable for the embedded stores',
          'RESPGATE_REDIS_SERVER',
          DEFAULTS.redisServerBinary,
        ),
      )
      .addOption(
        opt(
          '--max-request-size <size>',
          'largest accepted REST request (bytes, or with kb/mb)',
          'RESPGATE_MAX_REQUEST_SIZE',
          sizeText(DEFAULTS.maxRequestSize),
        ),
      )
      .addOption(
        opt(
          '--daily-request-limit <n>',
          'commands per UTC day before requests are refused (0 = no limit)',
          'RESPGATE_DAILY_REQUEST_LIMIT',
          String(DEFAULTS.dailyRequestLimit),
        ),
      )
      .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel))
      // Area C (vector): see docs/vector.md
      .addOption(opt('--vector-token <token>', 'token of the vector indexes (default: the Standard token)', 'RESPGATE_VECTOR_TOKEN'))
      .addOption(
        opt(
          '--vector-config <file>',
          'JSON file of more vector indexes, added to dense, dense-data, sparse and hybrid (format in docs/vector.md)',
          'RESPGATE_VECTOR_CONFIG',
        ),
      )
      .addOption(
        opt(
          '--vector-embeddings-url <url>',
          'OpenAI-compatible embeddings API base URL (ending in /v1) for indexes whose denseEmbedder is openai',
          'RESPGATE_VECTOR_EMBEDDINGS_URL',
        ),
      )
      .addOption(
        opt(
          '--vector-embeddings-model <name>',
          'embedding model name sent to that API',
          'RESPGATE_VECTOR_EMBEDDINGS_MODEL',
          'text-embedding-3-small',
        ),
      )
      .addOption(opt('--vector-embeddings-key <key>', 'API key sent to that API as a Bearer token', 'RESPGATE_VECTOR_EMBEDDINGS_KEY'))
      // --- queue (Area D) and account (Area A)
      .addOption(
        opt('--queue-token <token>', 'Bearer token of the message queue (default: the Standard REST token)', 'RESPGATE_QUEUE_TOKEN'),
      )
      .addOption(
        opt(
          '--signing-key <key>',
          'current key of the Upstash-Signature JWT (generated, kept and printed when absent)',
          'RESPGATE_SIGNING_KEY',
        ),
      )
      .addOption(opt('--next-signing-key <key>', 'next signing key (generated, kept and printed when absent)', 'RESPGATE_NEXT_SIGNING_KEY'))
      .addOption(
        opt(
          '--queue-backoff-scale <factor>',
          'multiplies the default retry backoff (12 s, 2m28s, 30m8s…); 0.001 makes it milliseconds for development',
          'RESPGATE_QUEUE_BACKOFF_SCALE',
          '1',
        ),
      )
      .addOption(
        opt(
          '--queue-message-price <dollars>',
          'price of one message charged against the account budget (default: pay-as-you-go $1 per 100,000)',
          'RESPGATE_QUEUE_MESSAGE_PRICE',
          '0.00001',
        ),
      )
      .addOption(opt('--queue-concurrency <n>', 'deliveries in flight at once', 'RESPGATE_QUEUE_CONCURRENCY', '200'))
      .addOption(
        opt('--account-email <email>', 'user name of the account API (HTTP Basic)', 'RESPGATE_ACCOUNT_EMAIL', 'dev@respgate.local'),
      )
      .addOption(
        opt('--account-key <key>', 'password of the account API (generated, kept and printed when absent)', 'RESPGATE_ACCOUNT_KEY'),
      )
  );
}

function proxyOptions(cmd: Command, remote: boolean): Command {
  cmd.addOption(opt('--port <port>', 'proxy port that Redis clients connect to', 'RESPGATE_PORT', String(PROXY_DEFAULTS.port)));
  if (remote) {
    cmd
      .addOption(
        opt('--host <address>', 'address to bind (loopback by default: nothing is exposed to the network)', 'RESPGATE_HOST', DEFAULTS.host),
      )
      .addOption(
        opt('--upstream-url <url>', 'REST URL of the key-value database (falls back to UPSTASH_REDIS_REST_URL)', 'RESPGATE_UPSTREAM_URL'),
      )
      .addOption(
        opt(
          '--upstream-token <token>',
          'REST token of the key-value database (falls back to UPSTASH_REDIS_REST_TOKEN)',
          'RESPGATE_UPSTREAM_TOKEN',
        ),
      )
      .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel))
      .addOption(
        opt(
          '--metrics-port <port>',
          'serve Prometheus metrics on http://<host>:<port>/metrics (default: off; the dev stack serves them on its HTTP port)',
          'RESPGATE_METRICS_PORT',
        ),
      );
  }
  return cmd
    .addOption(
      opt(
        '--requirepass <password>',
        'password clients must give with AUTH (default: none; the proxy binds loopback)',
        'RESPGATE_REQUIREPASS',
      ),
    )
    .addOption(
      opt(
        '--upstream-timeout <ms>',
        'time limit of one upstream HTTP call; past it the commands get an error',
        'RESPGATE_UPSTREAM_TIMEOUT',
        String(PROXY_DEFAULTS.upstreamTimeoutMs),
      ),
    )
    .addOption(
      opt(
        '--upstream-connections <n>',
        'keep-alive HTTP connections to the upstream (and upstream calls in flight)',
        'RESPGATE_UPSTREAM_CONNECTIONS',
        String(PROXY_DEFAULTS.upstreamConnections),
      ),
    )
    .addOption(
      opt(
        '--max-batch <n>',
        'most commands coalesced into one upstream /pipeline call',
        'RESPGATE_MAX_BATCH',
        String(PROXY_DEFAULTS.maxBatch),
      ),
    )
    .addOption(
      opt(
        '--block-poll-interval <ms>',
        'blocking commands (BLPOP, BZPOPMIN, XREAD BLOCK…) poll the upstream, 10 ms apart at first, doubling up to this; each poll is one upstream request (billed by hosted services)',
        'RESPGATE_BLOCK_POLL_INTERVAL',
        String(PROXY_DEFAULTS.blockPollIntervalMs),
      ),
    )
    .addOption(
      opt(
        '--upstream-format <mode>',
        'what /pipeline is asked to answer: auto (resp2; JSON answers are converted and JSON is asked from then on), resp2 (a JSON answer is an error) or json (JSON with base64 strings, converted by reply type)',
        'RESPGATE_UPSTREAM_FORMAT',
        PROXY_DEFAULTS.upstreamFormat,
      ),
    )
    .addOption(
      opt(
        '--proto-max-bulk-len <size>',
        'largest argument a client may send (like Redis proto-max-bulk-len); each command must also fit one upstream request: 10mb on the local platform (its --max-request-size), the plan limit on Upstash; JSON escaping can grow control bytes 6x',
        'RESPGATE_PROTO_MAX_BULK_LEN',
        sizeText(PROXY_DEFAULTS.maxBulkLength),
      ),
    )
    .addOption(
      opt(
        '--slowlog-log-slower-than <us>',
        'SLOWLOG records forwarded commands that took at least this many microseconds from read to upstream reply (0 = all, negative = none)',
        'RESPGATE_SLOWLOG_LOG_SLOWER_THAN',
        String(PROXY_DEFAULTS.slowlogLogSlowerThanUs),
      ),
    )
    .addOption(
      opt('--slowlog-max-len <n>', 'SLOWLOG entries kept (newest first)', 'RESPGATE_SLOWLOG_MAX_LEN', String(PROXY_DEFAULTS.slowlogMaxLen)),
    )
    .addOption(
      opt(
        '--requirepass-file <file>',
        'read the AUTH password from the first line of this file (keeps it out of ps and shell history)',
        'RESPGATE_REQUIREPASS_FILE',
      ),
    )
    .addOption(
      opt(
        '--acl-users',
        "AUTH <user> <password> of other users than default gets the user's token from the upstream (ACL RESTTOKEN)",
        'RESPGATE_ACL_USERS',
      ),
    )
    .addOption(
      opt(
        '--allow-unauthenticated',
        'start on a non-loopback address although clients need no authentication (logs a warning)',
        'RESPGATE_ALLOW_UNAUTHENTICATED',
      ),
    )
    .addOption(
      opt('--tls-port <port>', 'also accept TLS connections on this port; needs the certificate and key files below', 'RESPGATE_TLS_PORT'),
    )
    .addOption(opt('--tls-cert-file <file>', 'PEM certificate of the TLS port', 'RESPGATE_TLS_CERT_FILE'))
    .addOption(opt('--tls-key-file <file>', 'PEM private key of the TLS port', 'RESPGATE_TLS_KEY_FILE'))
    .addOption(opt('--tls-ca-cert-file <file>', 'PEM CA certificates that sign client certificates', 'RESPGATE_TLS_CA_CERT_FILE'))
    .addOption(opt('--tls-auth-clients <mode>', 'client certificates: yes (required), optional, or no', 'RESPGATE_TLS_AUTH_CLIENTS', 'yes'))
    .addOption(
      opt('--upstream-ca-file <file>', 'PEM CA certificates trusted for an https:// upstream (a private CA)', 'RESPGATE_UPSTREAM_CA_FILE'),
    )
    .addOption(
      opt(
        '--upstream-max-request-size <size>',
        "the upstream's max request size: a larger command is refused before it is sent",
        'RESPGATE_UPSTREAM_MAX_REQUEST_SIZE',
        sizeText(PROXY_DEFAULTS.upstreamMaxRequestBytes),
      ),
    )
    .addOption(
      opt(
        '--maxclients <n>',
        'most client connections at once (like Redis maxclients)',
        'RESPGATE_MAXCLIENTS',
        String(PROXY_DEFAULTS.maxClients),
      ),
    )
    .addOption(
      opt(
        '--timeout <seconds>',
        'close clients idle this long; 0 = never (like Redis timeout)',
        'RESPGATE_TIMEOUT',
        String(PROXY_DEFAULTS.idleTimeoutSec),
      ),
    )
    .addOption(
      opt(
        '--client-output-buffer-limit <size>',
        'a client that leaves more replies than this unread is disconnected',
        'RESPGATE_CLIENT_OUTPUT_BUFFER_LIMIT',
        sizeText(PROXY_DEFAULTS.outputLimitBytes),
      ),
    )
    .addOption(
      opt(
        '--client-query-buffer-limit <size>',
        'largest incomplete request buffered for a client (like Redis client-query-buffer-limit)',
        'RESPGATE_CLIENT_QUERY_BUFFER_LIMIT',
        sizeText(PROXY_DEFAULTS.maxQueryBufferBytes),
      ),
    )
    .addOption(
      opt(
        '--shutdown-timeout <ms>',
        'on SIGTERM, how long commands in flight have to finish before connections close',
        'RESPGATE_SHUTDOWN_TIMEOUT',
        String(PROXY_DEFAULTS.shutdownGraceMs),
      ),
    );
}

interface ProxyFlags {
  metricsPort?: string;
  port: string;
  host: string;
  upstreamUrl?: string;
  upstreamToken?: string;
  requirepass?: string;
  upstreamTimeout: string;
  upstreamConnections: string;
  maxBatch: string;
  protoMaxBulkLen: string;
  logLevel: string;
  blockPollInterval: string;
  slowlogLogSlowerThan: string;
  slowlogMaxLen: string;
  upstreamFormat: string;
  requirepassFile?: string;
  aclUsers?: boolean | string;
  allowUnauthenticated?: boolean | string;
  tlsPort?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  tlsCaCertFile?: string;
  tlsAuthClients: string;
  upstreamCaFile?: string;
  upstreamMaxRequestSize: string;
  maxclients: string;
  timeout: string;
  clientOutputBufferLimit: string;
  clientQueryBufferLimit: string;
  shutdownTimeout: string;
}

/** A boolean flag, or its environment variable (yes/true/1). */
function flagOn(value: boolean | string | undefined): boolean {
  return value === true || (typeof value === 'string' && /^(1|true|yes|on)$/i.test(value));
}

function readSecretFile(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a readable file`);
  }
  const line = text.split(/\r?\n/)[0];
  if (!line) throw new ConfigError(`${flag}: '${file}' is empty; put the password on its first line`);
  return line;
}

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a readable PEM file`);
  }
}

/** The password of --requirepass or --requirepass-file (not both). */
function requirepassOf(f: { requirepass?: string; requirepassFile?: string }): string | undefined {
  if (f.requirepass && f.requirepassFile) throw new ConfigError('give --requirepass or --requirepass-file, not both');
  return f.requirepassFile ? readSecretFile(f.requirepassFile, '--requirepass-file') : f.requirepass || undefined;
}

function tlsConfig(f: ProxyFlags): ProxyConfig['tls'] {
  if (!f.tlsPort) {
    if (f.tlsCertFile || f.tlsKeyFile)
      throw new ConfigError('--tls-cert-file and --tls-key-file need --tls-port (the port of TLS connections)');
    return undefined;
  }
  if (!f.tlsCertFile || !f.tlsKeyFile) throw new ConfigError('--tls-port needs --tls-cert-file and --tls-key-file (PEM files)');
  const mode = f.tlsAuthClients.toLowerCase();
  if (mode !== 'yes' && mode !== 'no' && mode !== 'optional')
    throw new ConfigError(`--tls-auth-clients must be yes, no or optional, got '${f.tlsAuthClients}'`);
  if (mode !== 'no' && !f.tlsCaCertFile)
    throw new ConfigError(
      `--tls-auth-clients ${mode} needs --tls-ca-cert-file (the CA of client certificates), or use --tls-auth-clients no`,
    );
  return {
    port: parsePort(f.tlsPort, '--tls-port'),
    cert: readPem(f.tlsCertFile, '--tls-cert-file'),
    key: readPem(f.tlsKeyFile, '--tls-key-file'),
    ca: f.tlsCaCertFile ? readPem(f.tlsCaCertFile, '--tls-ca-cert-file') : undefined,
    authClients: mode,
  };
}

function proxyConfig(f: ProxyFlags, upstreamUrl: string, upstreamToken: string): ProxyConfig {
  const positive = (v: string, flag: string) => {
    const n = parseNonNegativeInt(v, flag);
    if (n < 1) throw new ConfigError(`${flag} must be at least 1`);
    return n;
  };
  return {
    host: f.host,
    port: parsePort(f.port, '--port'),
    upstreamUrl,
    upstreamToken,
    upstreamTimeoutMs: positive(f.upstreamTimeout, '--upstream-timeout'),
    upstreamConnections: positive(f.upstreamConnections, '--upstream-connections'),
    maxBatch: positive(f.maxBatch, '--max-batch'),
    requirepass: requirepassOf(f),
    maxBulkLength: parseSize(f.protoMaxBulkLen, '--proto-max-bulk-len'),
    blockPollIntervalMs: positive(f.blockPollInterval, '--block-poll-interval'),
    slowlogLogSlowerThanUs: parseInteger(f.slowlogLogSlowerThan, '--slowlog-log-slower-than'),
    slowlogMaxLen: parseNonNegativeInt(f.slowlogMaxLen, '--slowlog-max-len'),
    upstreamFormat: upstreamFormat(f.upstreamFormat),
    aclUsers: flagOn(f.aclUsers),
    allowUnauthenticated: flagOn(f.allowUnauthenticated),
    tls: tlsConfig(f),
    upstreamCa: f.upstreamCaFile ? readPem(f.upstreamCaFile, '--upstream-ca-file') : undefined,
    upstreamMaxRequestBytes: parseSize(f.upstreamMaxRequestSize, '--upstream-max-request-size'),
    maxClients: positive(f.maxclients, '--maxclients'),
    idleTimeoutSec: parseNonNegativeInt(f.timeout, '--timeout'),
    outputLimitBytes: parseSize(f.clientOutputBufferLimit, '--client-output-buffer-limit'),
    maxQueryBufferBytes: parseSize(f.clientQueryBufferLimit, '--client-query-buffer-limit'),
    shutdownGraceMs: parseNonNegativeInt(f.shutdownTimeout, '--shutdown-timeout'),
  };
}

function parseInteger(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n)) throw new ConfigError(`${flag} must be a whole number, got '${value}'`);
  return n;
}

function upstreamFormat(value: string): UpstreamFormat {
  const format = UPSTREAM_FORMATS.find((f) => f === value.toLowerCase());
  if (!format) throw new ConfigError(`--upstream-format must be auto, resp2 or json (got '${value}')`);
  return format;
}

function validateUpstreamUrl(value: string | undefined): string {
  if (!value) {
    throw new ConfigError(
      'no upstream: give --upstream-url (or RESPGATE_UPSTREAM_URL / UPSTASH_REDIS_REST_URL), or run `respgate dev` for a local one',
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`--upstream-url is not a URL: '${value}' (expected https://<host> or http://127.0.0.1:8079)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(
      `--upstream-url must be an http:// or https:// REST URL, got '${url.protocol}//…' (a redis:// URL is a Redis server, not a REST API)`,
    );
  }
  return value.replace(/\/+$/, '');
}

interface PlatformFlags {
  host: string;
  httpPort: string;
  token?: string;
  readonlyToken?: string;
  redisUrl?: string;
  internalRedisUrl?: string;
  redisServer: string;
  maxRequestSize: string;
  dailyRequestLimit: string;
  logLevel: string;
  vectorToken?: string;
  vectorConfig?: string;
  vectorEmbeddingsUrl?: string;
  vectorEmbeddingsModel?: string;
  vectorEmbeddingsKey?: string;
  queueToken?: string;
  signingKey?: string;
  nextSigningKey?: string;
  queueBackoffScale: string;
  queueMessagePrice: string;
  queueConcurrency: string;
  accountEmail: string;
  accountKey?: string;
}

function atLeastOne(n: number, flag: string): number {
  if (n < 1) throw new ConfigError(`${flag} must be at least 1`);
  return n;
}

function platformConfig(f: PlatformFlags): PlatformConfig {
  return {
    host: f.host,
    httpPort: parsePort(f.httpPort, '--http-port'),
    token: f.token || generateToken(),
    readonlyToken: f.readonlyToken || generateToken(),
    redisUrl: validateRedisUrl(f.redisUrl, '--redis-url'),
    internalRedisUrl: validateRedisUrl(f.internalRedisUrl, '--internal-redis-url'),
    redisServerBinary: f.redisServer,
    maxRequestSize: parseSize(f.maxRequestSize, '--max-request-size'),
    dailyRequestLimit: parseNonNegativeInt(f.dailyRequestLimit, '--daily-request-limit'),
    logLevel: validateLogLevel(f.logLevel),
    ...vectorConfig(f),
    queueToken: f.queueToken || undefined,
    signingKey: f.signingKey || undefined,
    nextSigningKey: f.nextSigningKey || undefined,
    queueBackoffScale: parseNonNegativeNumber(f.queueBackoffScale, '--queue-backoff-scale'),
    queueMessagePrice: parseNonNegativeNumber(f.queueMessagePrice, '--queue-message-price'),
    queueConcurrency: atLeastOne(parseNonNegativeInt(f.queueConcurrency, '--queue-concurrency'), '--queue-concurrency'),
    accountEmail: f.accountEmail,
    accountKey: f.accountKey || undefined,
  };
}

function vectorConfig(f: PlatformFlags): Partial<PlatformConfig> {
  try {
    return {
      vectorToken: f.vectorToken || undefined,
      vectorIndexes: f.vectorConfig ? loadVectorConfigFile(f.vectorConfig) : undefined,
      vectorEmbeddingsUrl: f.vectorEmbeddingsUrl || undefined,
      vectorEmbeddingsModel: f.vectorEmbeddingsModel || undefined,
      vectorEmbeddingsKey: f.vectorEmbeddingsKey || undefined,
    };
  } catch (err) {
    if (err instanceof VectorConfigError) throw new ConfigError(err.message);
    throw err;
  }
}

function banner(p: RunningPlatform, f: PlatformFlags, proxy?: RunningProxy, requirepass?: string, sideportLines: string[] = []): string {
  const lines = [
    '',
    `respgate ${VERSION}: ${proxy ? 'dev stack' : 'local platform'} ready`,
    '',
    ...(proxy
      ? [
          `  Redis protocol (proxy)        redis://${proxy.host}:${proxy.port}`,
          `    redis-cli -p ${proxy.port}${proxy.host === '127.0.0.1' ? '' : ` -h ${proxy.host}`}${requirepass ? ' -a <requirepass>' : ''}`,
          '',
        ]
      : []),
    ...sideportLines,
    `  Key-value REST API            ${p.url}`,
    ...dataStoreLines(p, f),
    '',
    '  Paste into your shell (then @upstash/redis Redis.fromEnv() finds them):',
    `    export UPSTASH_REDIS_REST_URL=${p.url}`,
    `    export UPSTASH_REDIS_REST_TOKEN=${p.token}`,
    `    # read-only token: ${p.readonlyToken}`,
    '',
    ...p.areaBanner,
    `  Try it:  curl -H "Authorization: Bearer $UPSTASH_REDIS_REST_TOKEN" ${p.url}/set/greeting/hello`,
    `  Health:  ${p.url}/healthz, ${p.url}/readyz    Metrics: ${p.url}/metrics (Prometheus)`,
    '',
    f.redisUrl
      ? '  Press Ctrl+C to stop (the data stays in the Redis of --redis-url).'
      : '  Press Ctrl+C to stop (the embedded data store is deleted on exit; use --redis-url to keep data).',
    '',
  ];
  return lines.join('\n');
}

/**
 * Where the data lives. In a Redis the platform does not own (--redis-url) it creates the ACL user
 * `default_ro` (the Read Only token's identity) and loads the `respgate_json` function library; both
 * stay after exit because other platform processes on the same store may share them.
 */
function dataStoreLines(p: RunningPlatform, f: PlatformFlags): string[] {
  if (p.dataStore && !f.redisUrl)
    return [`  data store                    embedded redis-server on 127.0.0.1:${p.dataStore.port} (deleted on exit)`];
  return [
    `  data store                    ${redactUrl(f.redisUrl!)}`,
    '    created there and kept after exit: ACL user default_ro, function library respgate_json',
    '    (remove with: ACL DELUSER default_ro; FUNCTION DELETE respgate_json)',
  ];
}

function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

async function runPlatform(flags: PlatformFlags): Promise<void> {
  const config = platformConfig(flags);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, log);
  process.stdout.write(banner(platform, flags) + '\n');
  await waitForSignal();
  await platform.stop();
}

async function runDev(flags: PlatformFlags & ProxyFlags & DevSideportFlags): Promise<void> {
  const config = platformConfig(flags);
  const sideportPlan = devSideportPlan(flags, config);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, log);
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(proxyConfig(flags, platform.url, platform.token), log);
    await proxy.upstreamChecked;
  } catch (err) {
    await platform.stop();
    throw err;
  }
  let sideports: RunningSideport[];
  try {
    sideports = await startDevSideports(sideportPlan, platform, log);
  } catch (err) {
    await proxy.stop();
    await platform.stop();
    throw err;
  }
  process.stdout.write(
    banner(
      platform,
      flags,
      proxy,
      sideportPlan.requirepass,
      sideportBanner(sideports, sideportPlan.requirepass, sideportPlan.vectorIndex),
    ) + '\n',
  );
  await waitForSignal();
  // SIGTERM: every RESP port finishes the replies it owes (server/listener.ts), side ports included.
  await Promise.all([...sideports.map((s) => s.shutdown()), proxy.shutdown()]);
  await platform.stop();
}

async function runProxy(flags: ProxyFlags): Promise<void> {
  const url = validateUpstreamUrl(flags.upstreamUrl || process.env.UPSTASH_REDIS_REST_URL);
  // No upstream token: pass-through, each client authenticates with its own token (docs/security.md).
  const token = flags.upstreamToken || process.env.UPSTASH_REDIS_REST_TOKEN || '';
  const log = createLogger(validateLogLevel(flags.logLevel));
  const proxy = await startProxy(proxyConfig(flags, url, token), log);
  const readiness = async () => ({ ready: proxy.upstream.ready, problem: proxy.upstream.problem });
  const metrics = flags.metricsPort
    ? await startMetricsServer(proxy.host, parsePort(flags.metricsPort, '--metrics-port'), readiness)
    : undefined;
  const upstreamOk = await proxy.upstreamChecked;
  process.stdout.write(
    `respgate ${VERSION}: proxy ready on redis://${proxy.host}:${proxy.port} in front of ${new URL(url).origin}\n  redis-cli -p ${proxy.port}\n` +
      (upstreamOk
        ? ''
        : `  the upstream does not answer yet (${proxy.upstream.problem}); commands fail until it does, checking again in the background\n`) +
      (proxy.tlsPort !== undefined ? `  TLS: rediss://${proxy.host}:${proxy.tlsPort}\n` : '') +
      (token === ''
        ? '  no --upstream-token: clients authenticate with their own REST token (AUTH <token>)\n'
        : flags.upstreamToken
          ? ''
          : '  upstream token from UPSTASH_REDIS_REST_TOKEN (unset it for pass-through: each client AUTHs with its own token)\n') +
      (metrics ? `  metrics: http://${proxy.host}:${metrics.port}/metrics   health: /healthz, /readyz\n` : ''),
  );
  await waitForSignal();
  await metrics?.stop();
  await proxy.shutdown();
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

// ---------------------------------------------------------------------------------------------------
// Side ports (vector and queue RESP ports; docs/vector-sideport.md, docs/queue-sideport.md)
// ---------------------------------------------------------------------------------------------------

interface DevSideportFlags {
  vectorPort: string;
  vectorIndex: string;
  queuePort: string;
}

/** `off` disables a side port; otherwise a port number (0 = any free port). */
function sideportPort(value: string, flag: string): number | undefined {
  return value.toLowerCase() === 'off' ? undefined : parsePort(value, flag);
}

function devSideportOptions(cmd: Command): Command {
  cmd
    .addOption(
      opt(
        '--vector-port <port>',
        'vector side port: Redis 8 vector-set commands (VADD, VSIM…) over the vector index; "off" to disable',
        'RESPGATE_VECTOR_PORT',
        String(DEFAULTS.vectorPort),
      ),
    )
    .addOption(
      opt(
        '--vector-index <name>',
        'vector index the vector side port serves (dense, dense-data, sparse, hybrid, or one of --vector-config)',
        'RESPGATE_VECTOR_INDEX',
        'dense',
      ),
    )
    .addOption(
      opt(
        '--queue-port <port>',
        'queue side port: QPUBLISH, QGROUP, QDLQ… and ACCOUNT commands over the queue and account APIs; "off" to disable',
        'RESPGATE_QUEUE_PORT',
        String(DEFAULTS.queuePort),
      ),
    );
  // Each side port's own TLS listener and limits (src/listener-flags.ts).
  return addListenerOptions(addListenerOptions(cmd, 'vector'), 'queue');
}

interface DevSideportPlan {
  host: string;
  requirepass?: string;
  allowUnauthenticated: boolean;
  timeoutMs: number;
  vectorPort?: number;
  vectorIndex: string;
  vectorToken: string;
  queuePort?: number;
  queueToken: string;
  accountEmail: string;
  accountKey: string;
  vectorListener: ReturnType<typeof listenerSettings>;
  queueListener: ReturnType<typeof listenerSettings>;
}

/** Reads the flags before the platform starts, and fixes the account credentials both sides will use. */
function devSideportPlan(f: DevSideportFlags & ProxyFlags, config: PlatformConfig): DevSideportPlan {
  config.accountEmail ??= 'dev@respgate.local';
  config.accountKey ??= generateToken();
  const indexes = (config.vectorIndexes ?? DEFAULT_INDEXES).map((i) => i.name);
  if (sideportPort(f.vectorPort, '--vector-port') !== undefined && !indexes.includes(f.vectorIndex)) {
    throw new ConfigError(
      `--vector-index '${f.vectorIndex}' is not an index of the local platform; choose one of ${indexes.join(', ')} (or add it with --vector-config)`,
    );
  }
  return {
    host: f.host,
    requirepass: requirepassOf(f),
    allowUnauthenticated: flagOn(f.allowUnauthenticated),
    timeoutMs: parseNonNegativeInt(f.upstreamTimeout, '--upstream-timeout') || 5000,
    vectorPort: sideportPort(f.vectorPort, '--vector-port'),
    vectorIndex: f.vectorIndex,
    vectorToken: config.vectorToken ?? config.token,
    queuePort: sideportPort(f.queuePort, '--queue-port'),
    queueToken: config.queueToken ?? config.token,
    accountEmail: config.accountEmail,
    accountKey: config.accountKey,
    vectorListener: listenerSettings(f, 'vector'),
    queueListener: listenerSettings(f, 'queue'),
  };
}

async function startDevSideports(
  plan: DevSideportPlan,
  platform: RunningPlatform,
  log: ReturnType<typeof createLogger>,
): Promise<RunningSideport[]> {
  const started: RunningSideport[] = [];
  try {
    if (plan.vectorPort !== undefined) {
      started.push(
        await startVectorSideport(
          {
            host: plan.host,
            port: plan.vectorPort,
            requirepass: plan.requirepass,
            allowUnauthenticated: plan.allowUnauthenticated,
            timeoutMs: plan.timeoutMs,
            url: `${platform.url}/vector/${plan.vectorIndex}`,
            token: plan.vectorToken,
            ...plan.vectorListener,
          },
          log,
        ),
      );
    }
    if (plan.queuePort !== undefined) {
      started.push(
        await startQueueSideport(
          {
            host: plan.host,
            port: plan.queuePort,
            requirepass: plan.requirepass,
            allowUnauthenticated: plan.allowUnauthenticated,
            timeoutMs: plan.timeoutMs,
            url: `${platform.url}/queue`,
            token: plan.queueToken,
            account: { url: `${platform.url}/account/v2`, email: plan.accountEmail, apiKey: plan.accountKey },
            ...plan.queueListener,
          },
          log,
        ),
      );
    }
    return started;
  } catch (err) {
    for (const s of started) await s.stop();
    throw err;
  }
}

function sideportBanner(sideports: RunningSideport[], requirepass?: string, vectorIndex?: string): string[] {
  const lines: string[] = [];
  for (const s of sideports) {
    const what = s.role === 'vector' ? 'Vector side port (VSIM…)' : 'Queue side port (QPUBLISH…)';
    lines.push(
      `  ${what.padEnd(30)}redis://${s.host}:${s.port}${s.role === 'vector' && vectorIndex ? `   (index ${vectorIndex}; the key is the namespace)` : ''}`,
    );
    lines.push(...sideportHelpLines(s, Boolean(requirepass)));
  }
  return lines.length ? [...lines, ''] : [];
}

function sideportCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(
      opt('--host <address>', 'address to bind (loopback by default: nothing is exposed to the network)', 'RESPGATE_HOST', DEFAULTS.host),
    )
    .addOption(
      opt(
        '--requirepass <password>',
        'password clients must give with AUTH (default: none; the side port binds loopback)',
        'RESPGATE_REQUIREPASS',
      ),
    )
    .addOption(opt('--requirepass-file <file>', 'read the AUTH password from this file (first line)', 'RESPGATE_REQUIREPASS_FILE'))
    .addOption(
      opt(
        '--allow-unauthenticated',
        'start on a non-loopback address without a password (logs a warning)',
        'RESPGATE_ALLOW_UNAUTHENTICATED',
      ),
    )
    .addOption(
      opt(
        '--upstream-timeout <ms>',
        'time limit of one upstream HTTP call; past it the command gets an error',
        'RESPGATE_UPSTREAM_TIMEOUT',
        '5000',
      ),
    )
    .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel))
    .addOption(
      opt(
        '--metrics-port <port>',
        'serve /metrics (Prometheus), /healthz and /readyz (ready when the upstream answers one call) on http://<host>:<port> (default: off)',
        'RESPGATE_METRICS_PORT',
      ),
    );
}

interface SideportRoleFlags {
  metricsPort?: string;
  host: string;
  requirepass?: string;
  requirepassFile?: string;
  allowUnauthenticated?: boolean | string;
  upstreamTimeout: string;
  logLevel: string;
}

function restUrl(value: string | undefined, flag: string, fallbackEnv: string): string {
  if (!value) throw new ConfigError(`no ${flag}: give ${flag} (or ${fallbackEnv}), or run \`respgate dev\` for a local platform`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${flag} is not a URL: '${value}' (expected https://<host>…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${flag} must be an http:// or https:// REST URL, got '${url.protocol}//…'`);
  return value.replace(/\/+$/, '');
}

/** The side port's --metrics-port server (off when the flag is absent) and its banner line. */
async function sideportOperations(s: RunningSideport, f: SideportRoleFlags): Promise<{ line: string; stop(): Promise<void> }> {
  if (!f.metricsPort) return { line: '', stop: async () => {} };
  const metrics = await startMetricsServer(s.host, parsePort(f.metricsPort, '--metrics-port'), s.readiness);
  return { line: `  metrics: http://${s.host}:${metrics.port}/metrics   health: /healthz, /readyz\n`, stop: () => metrics.stop() };
}

/** How to reach a side port, and its help: redis-cli answers HELP itself, from the port's COMMAND DOCS. */
function sideportHelpLines(s: RunningSideport, requirepass: boolean): string[] {
  const [groups, example] = s.role === 'vector' ? ['help @vector_set', 'VSIM'] : ['help @queue, help @account', 'QPUBLISH'];
  return [
    `    redis-cli -p ${s.port}${s.host === '127.0.0.1' ? '' : ` -h ${s.host}`}${requirepass ? ' -a <requirepass>' : ''}`,
    `    commands: ${groups} in redis-cli (help ${example} or ${example} HELP for one); HELP from other clients`,
  ];
}

/** The help lines under a role's one-line banner (indented like the proxy role's). */
function roleHelpLines(s: RunningSideport, f: SideportRoleFlags): string {
  return sideportHelpLines(s, Boolean(f.requirepass || f.requirepassFile))
    .map((line) => line.slice(2))
    .join('\n');
}

function positiveTimeout(value: string): number {
  const n = parseNonNegativeInt(value, '--upstream-timeout');
  if (n < 1) throw new ConfigError('--upstream-timeout must be at least 1');
  return n;
}

async function runVectorRole(f: SideportRoleFlags & { vectorPort: string; vectorUrl?: string; vectorToken?: string }): Promise<void> {
  const url = restUrl(f.vectorUrl || process.env.UPSTASH_VECTOR_REST_URL, '--vector-url', 'RESPGATE_VECTOR_URL / UPSTASH_VECTOR_REST_URL');
  const token = f.vectorToken || process.env.UPSTASH_VECTOR_REST_TOKEN;
  if (!token) throw new ConfigError('no vector token: give --vector-token (or RESPGATE_VECTOR_TOKEN / UPSTASH_VECTOR_REST_TOKEN)');
  const log = createLogger(validateLogLevel(f.logLevel));
  const port = parsePort(f.vectorPort, '--vector-port');
  const s = await startVectorSideport(
    {
      host: f.host,
      port,
      requirepass: requirepassOf(f),
      allowUnauthenticated: flagOn(f.allowUnauthenticated),
      url,
      token,
      timeoutMs: positiveTimeout(f.upstreamTimeout),
      ...listenerSettings(f, 'vector'),
    },
    log,
  );
  await serveSideportRole(s, f, `vector side port ready on redis://${s.host}:${s.port} in front of ${new URL(url).origin}`);
}

async function runQueueRole(
  f: SideportRoleFlags & {
    queuePort: string;
    queueUrl?: string;
    queueToken?: string;
    accountUrl: string;
    accountEmail?: string;
    accountKey?: string;
  },
): Promise<void> {
  const url = restUrl(f.queueUrl || process.env.QSTASH_URL, '--queue-url', 'RESPGATE_QUEUE_URL / QSTASH_URL');
  const token = f.queueToken || process.env.QSTASH_TOKEN;
  if (!token) throw new ConfigError('no queue token: give --queue-token (or RESPGATE_QUEUE_TOKEN / QSTASH_TOKEN)');
  if (Boolean(f.accountEmail) !== Boolean(f.accountKey))
    throw new ConfigError('the account API needs both --account-email and --account-key (or neither: ACCOUNT commands are then refused)');
  const account =
    f.accountEmail && f.accountKey
      ? { url: restUrl(f.accountUrl, '--account-url', 'RESPGATE_ACCOUNT_URL'), email: f.accountEmail, apiKey: f.accountKey }
      : undefined;
  const log = createLogger(validateLogLevel(f.logLevel));
  const port = parsePort(f.queuePort, '--queue-port');
  const s = await startQueueSideport(
    {
      host: f.host,
      port,
      requirepass: requirepassOf(f),
      allowUnauthenticated: flagOn(f.allowUnauthenticated),
      url,
      token,
      account,
      timeoutMs: positiveTimeout(f.upstreamTimeout),
      ...listenerSettings(f, 'queue'),
    },
    log,
  );
  await serveSideportRole(
    s,
    f,
    `queue side port ready on redis://${s.host}:${s.port} in front of ${new URL(url).origin}${account ? ` (account API ${new URL(account.url).origin})` : ''}`,
  );
}

/** A started side-port role: its operations port, the ready banner, then serving until a signal. */
async function serveSideportRole(s: RunningSideport, f: SideportRoleFlags, ready: string): Promise<void> {
  const ops = await startOrStop(s, () => sideportOperations(s, f));
  const tls = s.tlsPort !== undefined ? ` (TLS: rediss://${s.host}:${s.tlsPort})` : '';
  process.stdout.write(`respgate ${VERSION}: ${ready}${tls}\n${roleHelpLines(s, f)}\n${ops.line}`);
  await waitForSignal();
  await ops.stop();
  await s.shutdown();
}

/** Runs `next`; when it fails (a busy metrics port), the side port stops so the process can exit. */
async function startOrStop<T>(s: RunningSideport, next: () => Promise<T>): Promise<T> {
  try {
    return await next();
  } catch (err) {
    await s.stop();
    throw err;
  }
}

function sideportRoles(program: Command): void {
  sideportCommonOptions(
    addListenerOptions(program.command('vector'), 'vector').description(
      'start the vector side port alone, in front of a remote vector index (--vector-url, --vector-token)',
    ),
  )
    .addOption(opt('--vector-port <port>', 'port of the vector side port', 'RESPGATE_VECTOR_PORT', String(DEFAULTS.vectorPort)))
    .addOption(opt('--vector-url <url>', 'REST URL of the vector index (falls back to UPSTASH_VECTOR_REST_URL)', 'RESPGATE_VECTOR_URL'))
    .addOption(
      opt('--vector-token <token>', 'REST token of the vector index (falls back to UPSTASH_VECTOR_REST_TOKEN)', 'RESPGATE_VECTOR_TOKEN'),
    )
    .action(runVectorRole);
  sideportCommonOptions(
    addListenerOptions(program.command('queue'), 'queue').description(
      'start the queue side port alone, in front of a remote queue API (--queue-url, --queue-token) and optionally the account API',
    ),
  )
    .addOption(opt('--queue-port <port>', 'port of the queue side port', 'RESPGATE_QUEUE_PORT', String(DEFAULTS.queuePort)))
    .addOption(
      opt(
        '--queue-url <url>',
        'base URL of the queue API, e.g. https://qstash.upstash.io (falls back to QSTASH_URL)',
        'RESPGATE_QUEUE_URL',
      ),
    )
    .addOption(opt('--queue-token <token>', 'token of the queue API (falls back to QSTASH_TOKEN)', 'RESPGATE_QUEUE_TOKEN'))
    .addOption(
      opt('--account-url <url>', 'base URL of the account API (ends in /v2)', 'RESPGATE_ACCOUNT_URL', 'https://api.upstash.com/v2'),
    )
    .addOption(
      opt('--account-email <email>', 'account API user (HTTP Basic); ACCOUNT commands are refused without it', 'RESPGATE_ACCOUNT_EMAIL'),
    )
    .addOption(opt('--account-key <key>', 'account API key (HTTP Basic password)', 'RESPGATE_ACCOUNT_KEY'))
    .action(runQueueRole);
}

// ---------------------------------------------------------------------------------------------------

export function buildProgram(): Command {
  const program = new Command('respgate')
    .version(VERSION)
    .description(
      'A Redis-protocol gateway to HTTP data services, with a faithful local platform.\n' +
        'Every flag can also be set by the environment variable shown next to it.',
    )
    .addHelpText(
      'after',
      '\nEach role has its own flags: respgate dev --help, respgate proxy --help, respgate platform --help,\n' +
        'respgate vector --help, respgate queue --help. From a clone: npx respgate <role> … or npm start -- <role> ….',
    )
    .showHelpAfterError();
  devSideportOptions(
    proxyOptions(
      platformOptions(
        program
          .command('dev', { isDefault: true })
          .description(
            'start the dev stack: embedded redis-servers, the local platform, the proxy and the side ports in front of it (default command)',
          ),
      ),
      false,
    ),
  ).action(runDev);
  proxyOptions(
    program
      .command('proxy')
      .description('start the proxy alone, in front of a remote REST key-value database (--upstream-url, --upstream-token)'),
    true,
  ).action(runProxy);
  platformOptions(program.command('platform').description('start the local platform alone (REST API on --http-port)')).action(runPlatform);
  sideportRoles(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    const message = err instanceof ConfigError ? `configuration error: ${err.message}` : `respgate: ${(err as Error).message}`;
    process.stderr.write(message + '\n');
    process.exitCode = 1;
  }
}
