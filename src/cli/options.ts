// The one option table of the command line: every flag of every role with its RESPGATE_* environment
// variable, its default and its parser. It drives `respgate <role> --help` (commander), the values a
// role receives (already parsed and checked: commander runs each flag's parser on a given value, an
// environment variable's value and the default) and the README's configuration table
// (scripts/gen-config-table.ts). This module loads with every role: it imports no role's code.
import {
  ConfigError,
  choiceParser,
  DEFAULTS,
  LOG_LEVELS,
  parseInteger,
  parseNonNegativeInt,
  parseNonNegativeNumber,
  parsePort,
  parseOutputBufferLimitFlag,
  parsePositiveInt,
  parseSize,
  PROXY_DEFAULTS,
  sizeText,
  UPSTREAM_FORMATS,
  validateRedisUrl,
} from '../config.js';
import { option, pemFile, secretFile, yesNo, type Flags, type OptionSpec, type OptionTable } from './option-spec.js';

/** Like Redis client-output-buffer-limit (normal clients are unlimited: backpressure pauses their reading). */
const OUTPUT_LIMIT_HELP =
  'Redis client-output-buffer-limit: <class> <hard> <soft> <soft-seconds> for normal, replica or pubsub (subscribed) clients; 0 = no limit';

/** `off` disables a side port of the dev stack; otherwise a port number (0 = any free port). */
function portOrOff(value: string, flag: string): number | 'off' {
  return value.toLowerCase() === 'off' ? 'off' : parsePort(value, flag);
}

/** `URL[,TOKEN]` entries (several separated by spaces, as an environment variable holds them). */
function indexList(value: string, flag: string): { url: string; token?: string }[] {
  return value
    .split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const [url, token] = entry.split(/,(.*)/s);
      if (!/^https?:\/\/[^/]/.test(url)) throw new ConfigError(`${flag}: '${url}' is not an http(s) URL; give URL[,TOKEN]`);
      return token ? { url, token } : { url };
    });
}

/** An integer from `min` to `max`. */
function rangeInt(value: string, flag: string, min: number, max: number): number {
  const n = parseInteger(value, flag);
  if (n < min || n > max) throw new ConfigError(`${flag} must be from ${min} to ${max}, got ${value}`);
  return n;
}

/** `N=URL[,TOKEN]` entries of --database (several separated by spaces, as an environment variable holds them). */
function databaseList(value: string, flag: string): { index: number; url: string; token?: string }[] {
  return value
    .split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const m = /^(\d{1,9})=(.*)$/s.exec(entry);
      if (!m) throw new ConfigError(`${flag}: '${entry.split(',')[0]}' is not N=URL[,TOKEN] (e.g. 2=https://other.upstash.io,TOKEN)`);
      const index = Number(m[1]);
      if (index === 0) throw new ConfigError(`${flag}: database 0 is the main upstream (--upstream-url); number the others from 1`);
      const [{ url, token }] = indexList(m[2], flag);
      return token ? { index, url, token } : { index, url };
    });
}

const TLS_AUTH_CLIENTS = ['yes', 'no', 'optional'] as const;

const BIND = 'address to bind (loopback by default: nothing is exposed to the network)';
const host = option('--host <address>', 'RESPGATE_HOST', BIND, { default: DEFAULTS.host });
// The levels are in the description, not commander's choices: its help would show "error" in quotes,
// which reads like an error in a log (test/ops/examples.test.ts looks for exactly that).
const logLevel = option('--log-level <level>', 'RESPGATE_LOG_LEVEL', `${LOG_LEVELS.slice(0, -1).join(', ')} or silent`, {
  default: DEFAULTS.logLevel,
  parse: choiceParser(LOG_LEVELS),
});

/** The local platform (respgate platform, and the platform of respgate dev). */
const PLATFORM = {
  host,
  httpPort: option('--http-port <port>', 'RESPGATE_HTTP_PORT', 'platform HTTP port (all areas)', {
    default: String(DEFAULTS.httpPort),
    parse: parsePort,
  }),
  token: option('--token <token>', 'RESPGATE_TOKEN', 'Standard REST token (generated and printed when absent, kept in the data directory)'),
  readonlyToken: option(
    '--readonly-token <token>',
    'RESPGATE_READONLY_TOKEN',
    'Read Only REST token (generated and printed when absent, kept in the data directory)',
  ),
  redisUrl: option(
    '--redis-url <url>',
    'RESPGATE_REDIS_URL',
    'Redis for the key-value data, redis://[user:password@]host:port (default: start an embedded redis-server)',
    { parse: validateRedisUrl },
  ),
  internalRedisUrl: option(
    '--internal-redis-url <url>',
    'RESPGATE_INTERNAL_REDIS_URL',
    "Redis for the platform's own bookkeeping, kept apart from the data (default: start an embedded redis-server)",
    { parse: validateRedisUrl },
  ),
  redisServer: option('--redis-server <path>', 'RESPGATE_REDIS_SERVER', 'redis-server executable for the embedded stores', {
    default: DEFAULTS.redisServerBinary,
  }),
  databases: option(
    '--databases <n>',
    'RESPGATE_DATABASES',
    "key-value databases, like redis-server databases: 0 at the base URL, 1 to n-1 at <base>/db/<n> (the dev stack's proxy serves them to SELECT)",
    { default: '16', parse: (v, flag) => rangeInt(v, flag, 1, 1000) },
  ),
  maxRequestSize: option('--max-request-size <size>', 'RESPGATE_MAX_REQUEST_SIZE', 'largest accepted REST request (bytes, or with kb/mb)', {
    default: sizeText(DEFAULTS.maxRequestSize),
    parse: parseSize,
  }),
  dailyRequestLimit: option(
    '--daily-request-limit <n>',
    'RESPGATE_DAILY_REQUEST_LIMIT',
    'commands per UTC day before requests are refused (0 = no limit)',
    { default: String(DEFAULTS.dailyRequestLimit), parse: parseNonNegativeInt },
  ),
  logLevel,
  // data directory (docs/platform-kv.md, "Data directory"); no default value so that giving both
  // --data-dir and --ephemeral can be refused (src/platform/data-dir.ts resolveDataDir)
  dataDir: option(
    '--data-dir <dir>',
    'RESPGATE_DATA_DIR',
    `keep the embedded stores' data (keys, vectors, queue) in this directory across restarts (default: ./${DEFAULTS.dataDir})`,
  ),
  ephemeral: yesNo('--ephemeral', 'RESPGATE_EPHEMERAL', 'keep nothing: the embedded stores live in temporary directories deleted on exit'),
  // Area C (vector): see docs/vector.md
  vectorToken: option('--vector-token <token>', 'RESPGATE_VECTOR_TOKEN', 'token of the vector indexes (default: the Standard token)'),
  vectorConfig: option(
    '--vector-config <file>',
    'RESPGATE_VECTOR_CONFIG',
    'JSON file of more vector indexes, added to dense, dense-data, sparse and hybrid (format in docs/vector.md)',
  ),
  vectorEmbeddingsUrl: option(
    '--vector-embeddings-url <url>',
    'RESPGATE_VECTOR_EMBEDDINGS_URL',
    'OpenAI-compatible embeddings API base URL (ending in /v1) for indexes whose denseEmbedder is openai',
  ),
  vectorEmbeddingsModel: option(
    '--vector-embeddings-model <name>',
    'RESPGATE_VECTOR_EMBEDDINGS_MODEL',
    'embedding model name sent to that API',
    {
      default: 'text-embedding-3-small',
    },
  ),
  vectorEmbeddingsKey: option(
    '--vector-embeddings-key <key>',
    'RESPGATE_VECTOR_EMBEDDINGS_KEY',
    'API key sent to that API as a Bearer token',
  ),
  // queue (Area D) and account (Area A)
  queueToken: option(
    '--queue-token <token>',
    'RESPGATE_QUEUE_TOKEN',
    'Bearer token of the message queue (default: the Standard REST token)',
  ),
  signingKey: option(
    '--signing-key <key>',
    'RESPGATE_SIGNING_KEY',
    'current key of the Upstash-Signature JWT (generated, kept and printed when absent)',
  ),
  nextSigningKey: option(
    '--next-signing-key <key>',
    'RESPGATE_NEXT_SIGNING_KEY',
    'next signing key (generated, kept and printed when absent)',
  ),
  queueBackoffScale: option(
    '--queue-backoff-scale <factor>',
    'RESPGATE_QUEUE_BACKOFF_SCALE',
    'multiplies the default retry backoff (12 s, 2m28s, 30m8s…); 0.001 makes it milliseconds for development',
    { default: '1', parse: parseNonNegativeNumber },
  ),
  queueMessagePrice: option(
    '--queue-message-price <dollars>',
    'RESPGATE_QUEUE_MESSAGE_PRICE',
    'price of one message charged against the account budget (default: pay-as-you-go $1 per 100,000)',
    { default: '0.00001', parse: parseNonNegativeNumber },
  ),
  queueConcurrency: option('--queue-concurrency <n>', 'RESPGATE_QUEUE_CONCURRENCY', 'deliveries in flight at once', {
    default: '200',
    parse: parsePositiveInt,
  }),
  accountEmail: option('--account-email <email>', 'RESPGATE_ACCOUNT_EMAIL', 'user name of the account API (HTTP Basic)', {
    default: 'dev@respgate.local',
  }),
  accountKey: option(
    '--account-key <key>',
    'RESPGATE_ACCOUNT_KEY',
    'password of the account API (generated, kept and printed when absent)',
  ),
};

const PROXY_PORT = {
  port: option('--port <port>', 'RESPGATE_PORT', 'proxy port that Redis clients connect to', {
    default: String(PROXY_DEFAULTS.port),
    parse: parsePort,
  }),
};

/** What only the standalone proxy has (in the dev stack the platform gives them). */
const PROXY_REMOTE = {
  host,
  upstreamUrl: option(
    '--upstream-url <url>',
    'RESPGATE_UPSTREAM_URL',
    'REST URL of the key-value database (falls back to UPSTASH_REDIS_REST_URL)',
  ),
  upstreamToken: option(
    '--upstream-token <token>',
    'RESPGATE_UPSTREAM_TOKEN',
    'REST token of the key-value database (falls back to UPSTASH_REDIS_REST_TOKEN)',
  ),
  database: option(
    '--database <n=url[,token]>',
    'RESPGATE_DATABASE',
    "another database clients reach with SELECT n (or redis://…/n): its REST URL, and its token when not --upstream-token's; database 0 is --upstream-url; repeatable (the variable: entries separated by spaces)",
    { parse: databaseList, repeatable: true },
  ),
  logLevel,
  metricsPort: option(
    '--metrics-port <port>',
    'RESPGATE_METRICS_PORT',
    'serve Prometheus metrics on http://<host>:<port>/metrics (default: off; the dev stack serves them on its HTTP port)',
    { parse: parsePort },
  ),
};

/** The proxy's listener, limits and upstream client (respgate proxy and respgate dev). */
const PROXY = {
  requirepass: option(
    '--requirepass <password>',
    'RESPGATE_REQUIREPASS',
    'password clients must give with AUTH (default: none; the proxy binds loopback)',
  ),
  upstreamTimeout: option(
    '--upstream-timeout <ms>',
    'RESPGATE_UPSTREAM_TIMEOUT',
    'time limit of one upstream HTTP call; past it the commands get an error',
    { default: String(PROXY_DEFAULTS.upstreamTimeoutMs), parse: parsePositiveInt },
  ),
  upstreamConnections: option(
    '--upstream-connections <n>',
    'RESPGATE_UPSTREAM_CONNECTIONS',
    'keep-alive HTTP connections to the upstream (and upstream calls in flight)',
    { default: String(PROXY_DEFAULTS.upstreamConnections), parse: parsePositiveInt },
  ),
  maxBatch: option('--max-batch <n>', 'RESPGATE_MAX_BATCH', 'most commands coalesced into one upstream /pipeline call', {
    default: String(PROXY_DEFAULTS.maxBatch),
    parse: parsePositiveInt,
  }),
  blockPollInterval: option(
    '--block-poll-interval <ms>',
    'RESPGATE_BLOCK_POLL_INTERVAL',
    'blocking commands (BLPOP, BZPOPMIN, XREAD BLOCK…) poll the upstream, 10 ms apart at first, doubling up to this; each poll is one upstream request (billed by hosted services)',
    { default: String(PROXY_DEFAULTS.blockPollIntervalMs), parse: parsePositiveInt },
  ),
  upstreamFormat: option(
    '--upstream-format <mode>',
    'RESPGATE_UPSTREAM_FORMAT',
    'what /pipeline is asked to answer: auto (resp2; JSON answers are converted and JSON is asked from then on), resp2 (a JSON answer is an error) or json (JSON with base64 strings, converted by reply type)',
    { default: PROXY_DEFAULTS.upstreamFormat, choices: UPSTREAM_FORMATS, parse: choiceParser(UPSTREAM_FORMATS) },
  ),
  protoMaxBulkLen: option(
    '--proto-max-bulk-len <size>',
    'RESPGATE_PROTO_MAX_BULK_LEN',
    'largest argument a client may send (like Redis proto-max-bulk-len); each command must also fit one upstream request: 10mb on the local platform (its --max-request-size), the plan limit on Upstash; JSON escaping can grow control bytes 6x',
    { default: sizeText(PROXY_DEFAULTS.maxBulkLength), parse: parseSize },
  ),
  slowlogLogSlowerThan: option(
    '--slowlog-log-slower-than <us>',
    'RESPGATE_SLOWLOG_LOG_SLOWER_THAN',
    'SLOWLOG records forwarded commands that took at least this many microseconds from read to upstream reply (0 = all, negative = none)',
    { default: String(PROXY_DEFAULTS.slowlogLogSlowerThanUs), parse: parseInteger },
  ),
  slowlogMaxLen: option('--slowlog-max-len <n>', 'RESPGATE_SLOWLOG_MAX_LEN', 'SLOWLOG entries kept (newest first)', {
    default: String(PROXY_DEFAULTS.slowlogMaxLen),
    parse: parseNonNegativeInt,
  }),
  requirepassFile: option(
    '--requirepass-file <file>',
    'RESPGATE_REQUIREPASS_FILE',
    'read the AUTH password from the first line of this file (keeps it out of ps and shell history)',
    { parse: secretFile },
  ),
  aclUsers: yesNo(
    '--acl-users',
    'RESPGATE_ACL_USERS',
    "AUTH <user> <password> of other users than default gets the user's token from the upstream (ACL RESTTOKEN)",
  ),
  allowUnauthenticated: yesNo(
    '--allow-unauthenticated',
    'RESPGATE_ALLOW_UNAUTHENTICATED',
    'start on a non-loopback address although clients need no authentication (logs a warning)',
  ),
  tlsPort: option(
    '--tls-port <port>',
    'RESPGATE_TLS_PORT',
    'also accept TLS connections on this port; needs the certificate and key files below',
    { parse: parsePort },
  ),
  tlsCertFile: option('--tls-cert-file <file>', 'RESPGATE_TLS_CERT_FILE', 'PEM certificate of the TLS port', { parse: pemFile }),
  tlsKeyFile: option('--tls-key-file <file>', 'RESPGATE_TLS_KEY_FILE', 'PEM private key of the TLS port', { parse: pemFile }),
  tlsCaCertFile: option('--tls-ca-cert-file <file>', 'RESPGATE_TLS_CA_CERT_FILE', 'PEM CA certificates that sign client certificates', {
    parse: pemFile,
  }),
  tlsAuthClients: option('--tls-auth-clients <mode>', 'RESPGATE_TLS_AUTH_CLIENTS', 'client certificates: yes (required), optional, or no', {
    default: 'yes',
    choices: TLS_AUTH_CLIENTS,
    parse: choiceParser(TLS_AUTH_CLIENTS),
  }),
  upstreamCaFile: option(
    '--upstream-ca-file <file>',
    'RESPGATE_UPSTREAM_CA_FILE',
    'PEM CA certificates trusted for an https:// upstream (a private CA)',
    { parse: pemFile },
  ),
  upstreamMaxRequestSize: option(
    '--upstream-max-request-size <size>',
    'RESPGATE_UPSTREAM_MAX_REQUEST_SIZE',
    "the upstream's max request size: a larger command is refused before it is sent",
    { default: sizeText(PROXY_DEFAULTS.upstreamMaxRequestBytes), parse: parseSize },
  ),
  maxclients: option('--maxclients <n>', 'RESPGATE_MAXCLIENTS', 'most client connections at once (like Redis maxclients)', {
    default: String(PROXY_DEFAULTS.maxClients),
    parse: parsePositiveInt,
  }),
  timeout: option('--timeout <seconds>', 'RESPGATE_TIMEOUT', 'close clients idle this long; 0 = never (like Redis timeout)', {
    default: String(PROXY_DEFAULTS.idleTimeoutSec),
    parse: parseNonNegativeInt,
  }),
  clientOutputBufferLimit: option('--client-output-buffer-limit <limits>', 'RESPGATE_CLIENT_OUTPUT_BUFFER_LIMIT', OUTPUT_LIMIT_HELP, {
    default: PROXY_DEFAULTS.clientOutputBufferLimit,
    parse: parseOutputBufferLimitFlag,
  }),
  clientQueryBufferLimit: option(
    '--client-query-buffer-limit <size>',
    'RESPGATE_CLIENT_QUERY_BUFFER_LIMIT',
    'largest incomplete request buffered for a client (like Redis client-query-buffer-limit)',
    { default: sizeText(PROXY_DEFAULTS.maxQueryBufferBytes), parse: parseSize },
  ),
  shutdownTimeout: option(
    '--shutdown-timeout <ms>',
    'RESPGATE_SHUTDOWN_TIMEOUT',
    'on SIGTERM, how long commands in flight have to finish before connections close',
    { default: String(PROXY_DEFAULTS.shutdownGraceMs), parse: parseNonNegativeInt },
  ),
};

/** The side ports whose listeners take their own TLS port and limits. */
export type ListenerRole = 'vector' | 'queue';

/**
 * What every side-port listener takes: its own TLS port and certificate, and the proxy port's limits
 * (maxclients, timeout, buffer limits, SLOWLOG, the SIGTERM grace), each under the port's prefix
 * (`--vector-maxclients`, RESPGATE_VECTOR_MAXCLIENTS), so the vector and queue ports of one
 * `respgate dev` can differ. Keyed by the part after the role (`vector` + `TlsPort` = commander's
 * `vectorTlsPort`); listener-settings.ts turns the parsed values into the port's options.
 */
function listenerFields(role: ListenerRole) {
  const flag = (name: string, arg: string) => `--${role}-${name} ${arg}`;
  const env = (name: string) => `RESPGATE_${role.toUpperCase()}_${name.toUpperCase().replace(/-/g, '_')}`;
  const help = (text: string) => `${role} side port: ${text}`;
  return {
    TlsPort: option(
      flag('tls-port', '<port>'),
      env('tls-port'),
      help('also accept TLS connections on this port; needs the certificate and key files'),
      {
        parse: parsePort,
      },
    ),
    TlsCertFile: option(flag('tls-cert-file', '<file>'), env('tls-cert-file'), help('PEM certificate of its TLS port'), { parse: pemFile }),
    TlsKeyFile: option(flag('tls-key-file', '<file>'), env('tls-key-file'), help('PEM private key of its TLS port'), { parse: pemFile }),
    TlsCaCertFile: option(
      flag('tls-ca-cert-file', '<file>'),
      env('tls-ca-cert-file'),
      help('PEM CA certificates that sign client certificates'),
      {
        parse: pemFile,
      },
    ),
    TlsAuthClients: option(
      flag('tls-auth-clients', '<mode>'),
      env('tls-auth-clients'),
      help('client certificates: yes (required), optional, or no'),
      {
        default: 'yes',
        choices: TLS_AUTH_CLIENTS,
        parse: choiceParser(TLS_AUTH_CLIENTS),
      },
    ),
    Maxclients: option(flag('maxclients', '<n>'), env('maxclients'), help('most client connections at once (like Redis maxclients)'), {
      default: String(PROXY_DEFAULTS.maxClients),
      parse: parsePositiveInt,
    }),
    Timeout: option(flag('timeout', '<seconds>'), env('timeout'), help('close clients idle this long; 0 = never (like Redis timeout)'), {
      default: String(PROXY_DEFAULTS.idleTimeoutSec),
      parse: parseNonNegativeInt,
    }),
    ClientOutputBufferLimit: option(
      flag('client-output-buffer-limit', '<limits>'),
      env('client-output-buffer-limit'),
      help(OUTPUT_LIMIT_HELP),
      { default: PROXY_DEFAULTS.clientOutputBufferLimit, parse: parseOutputBufferLimitFlag },
    ),
    ClientQueryBufferLimit: option(
      flag('client-query-buffer-limit', '<size>'),
      env('client-query-buffer-limit'),
      help('largest incomplete request buffered for a client (like Redis client-query-buffer-limit)'),
      { default: sizeText(PROXY_DEFAULTS.maxQueryBufferBytes), parse: parseSize },
    ),
    ProtoMaxBulkLen: option(
      flag('proto-max-bulk-len', '<size>'),
      env('proto-max-bulk-len'),
      help('largest argument a client may send (like Redis proto-max-bulk-len)'),
      { default: sizeText(PROXY_DEFAULTS.maxBulkLength), parse: parseSize },
    ),
    SlowlogLogSlowerThan: option(
      flag('slowlog-log-slower-than', '<us>'),
      env('slowlog-log-slower-than'),
      help('SLOWLOG records commands slower than this many microseconds; < 0 = off'),
      { default: String(PROXY_DEFAULTS.slowlogLogSlowerThanUs), parse: parseInteger },
    ),
    SlowlogMaxLen: option(flag('slowlog-max-len', '<n>'), env('slowlog-max-len'), help('entries SLOWLOG keeps'), {
      default: String(PROXY_DEFAULTS.slowlogMaxLen),
      parse: parseNonNegativeInt,
    }),
    ShutdownTimeout: option(
      flag('shutdown-timeout', '<ms>'),
      env('shutdown-timeout'),
      help('on SIGTERM, how long commands in flight have to finish before connections close'),
      { default: String(PROXY_DEFAULTS.shutdownGraceMs), parse: parseNonNegativeInt },
    ),
  };
}

export type ListenerFields = ReturnType<typeof listenerFields>;
type ListenerOptions<R extends ListenerRole> = { [K in keyof ListenerFields as `${R}${K}`]: ListenerFields[K] };

/** The listener flags of one side port, keyed as commander names them (`vectorTlsPort`). */
function listenerOptions<R extends ListenerRole>(role: R): ListenerOptions<R> {
  return Object.fromEntries(Object.entries(listenerFields(role)).map(([k, spec]) => [role + k, spec])) as ListenerOptions<R>;
}

/** The side ports of the dev stack, in front of its own platform. */
const DEV_SIDEPORTS = {
  vectorPort: option(
    '--vector-port <port>',
    'RESPGATE_VECTOR_PORT',
    'vector side port: Redis 8 vector-set commands (VADD, VSIM…) over the vector index; "off" to disable',
    { default: String(DEFAULTS.vectorPort), parse: portOrOff },
  ),
  vectorIndex: option(
    '--vector-index <name>',
    'RESPGATE_VECTOR_INDEX',
    "vector index the vector side port serves (dense, dense-data, sparse, hybrid, or one of --vector-config); repeat it (or give names separated by commas) for indexes of other dimensions: a key goes to the index of its first VADD's dimension",
    { default: 'dense', parse: (v) => v.split(/[\s,]+/).filter(Boolean), repeatable: true },
  ),
  queuePort: option(
    '--queue-port <port>',
    'RESPGATE_QUEUE_PORT',
    'queue side port: QPUBLISH, QGROUP, QDLQ… and ACCOUNT commands over the queue and account APIs; "off" to disable',
    { default: String(DEFAULTS.queuePort), parse: portOrOff },
  ),
  ...listenerOptions('vector'),
  ...listenerOptions('queue'),
};

/** What both side-port roles (respgate vector, respgate queue) have. */
const SIDEPORT = {
  host,
  requirepass: option(
    '--requirepass <password>',
    'RESPGATE_REQUIREPASS',
    'password clients must give with AUTH (default: none; the side port binds loopback)',
  ),
  requirepassFile: option('--requirepass-file <file>', 'RESPGATE_REQUIREPASS_FILE', 'read the AUTH password from this file (first line)', {
    parse: secretFile,
  }),
  allowUnauthenticated: yesNo(
    '--allow-unauthenticated',
    'RESPGATE_ALLOW_UNAUTHENTICATED',
    'start on a non-loopback address without a password (logs a warning)',
  ),
  upstreamTimeout: option(
    '--upstream-timeout <ms>',
    'RESPGATE_UPSTREAM_TIMEOUT',
    'time limit of one upstream HTTP call; past it the command gets an error',
    { default: '5000', parse: parsePositiveInt },
  ),
  logLevel,
  metricsPort: option(
    '--metrics-port <port>',
    'RESPGATE_METRICS_PORT',
    'serve /metrics (Prometheus), /healthz and /readyz (ready when the upstream answers one call) on http://<host>:<port> (default: off)',
    { parse: parsePort },
  ),
};

const VECTOR_ROLE = {
  ...SIDEPORT,
  vectorPort: option('--vector-port <port>', 'RESPGATE_VECTOR_PORT', 'port of the vector side port', {
    default: String(DEFAULTS.vectorPort),
    parse: parsePort,
  }),
  vectorUrl: option('--vector-url <url>', 'RESPGATE_VECTOR_URL', 'REST URL of the vector index (falls back to UPSTASH_VECTOR_REST_URL)'),
  vectorToken: option(
    '--vector-token <token>',
    'RESPGATE_VECTOR_TOKEN',
    'REST token of the vector index (falls back to UPSTASH_VECTOR_REST_TOKEN)',
  ),
  vectorIndex: option(
    '--vector-index <url[,token]>',
    'RESPGATE_VECTOR_INDEX',
    "one more vector index (REST URL, and its token when not --vector-token's), of another dimension: a key goes to the index of its first VADD's dimension; repeatable (the variable: entries separated by spaces)",
    { parse: indexList, repeatable: true },
  ),
  ...listenerOptions('vector'),
};

const QUEUE_ROLE = {
  ...SIDEPORT,
  queuePort: option('--queue-port <port>', 'RESPGATE_QUEUE_PORT', 'port of the queue side port', {
    default: String(DEFAULTS.queuePort),
    parse: parsePort,
  }),
  queueUrl: option(
    '--queue-url <url>',
    'RESPGATE_QUEUE_URL',
    'base URL of the queue API, e.g. https://qstash.upstash.io (falls back to QSTASH_URL)',
  ),
  queueToken: option('--queue-token <token>', 'RESPGATE_QUEUE_TOKEN', 'token of the queue API (falls back to QSTASH_TOKEN)'),
  accountUrl: option('--account-url <url>', 'RESPGATE_ACCOUNT_URL', 'base URL of the account API (ends in /v2)', {
    default: 'https://api.upstash.com/v2',
  }),
  accountEmail: option(
    '--account-email <email>',
    'RESPGATE_ACCOUNT_EMAIL',
    'account API user (HTTP Basic); ACCOUNT commands are refused without it',
  ),
  accountKey: option('--account-key <key>', 'RESPGATE_ACCOUNT_KEY', 'account API key (HTTP Basic password)'),
  ...listenerOptions('queue'),
};

/** Every role's flags, in --help order. */
export const ROLE_OPTIONS = {
  dev: { ...PLATFORM, ...PROXY_PORT, ...PROXY, ...DEV_SIDEPORTS },
  proxy: { ...PROXY_PORT, ...PROXY_REMOTE, ...PROXY },
  platform: PLATFORM,
  vector: VECTOR_ROLE,
  queue: QUEUE_ROLE,
};

export type PlatformFlags = Flags<typeof PLATFORM>;
/** What the proxy's configuration is made of, in both roles that run it. */
export type ProxyFlags = Flags<typeof PROXY_PORT & typeof PROXY> & { host: string };
export type DevFlags = Flags<typeof ROLE_OPTIONS.dev>;
export type ProxyRoleFlags = Flags<typeof ROLE_OPTIONS.proxy>;
export type SideportFlags = Flags<typeof SIDEPORT>;
export type VectorRoleFlags = Flags<typeof VECTOR_ROLE>;
export type QueueRoleFlags = Flags<typeof QUEUE_ROLE>;

type AnyFlag = { [R in keyof typeof ROLE_OPTIONS]: keyof (typeof ROLE_OPTIONS)[R] }[keyof typeof ROLE_OPTIONS];

const longFlag = (spec: OptionSpec) => spec.flags.split(' ')[0];
const allSpecs = Object.values(ROLE_OPTIONS).flatMap((table) => Object.entries(table as OptionTable));

/** Each flag's name for error texts ('--tls-port'), so that a renamed flag renames its messages too. */
export const FLAG = Object.fromEntries(allSpecs.map(([key, spec]) => [key, longFlag(spec)])) as Record<AnyFlag, string>;

/** Each flag's environment variable, for error texts. */
export const ENV = Object.fromEntries(allSpecs.map(([key, spec]) => [key, spec.env])) as Record<AnyFlag, string>;
