// Command line: flags and RESPGATE_* environment variables → one validated configuration → roles.
import { Command, Option } from 'commander';
import {
  ConfigError, DEFAULTS, generateToken, parseNonNegativeInt, parseNonNegativeNumber, parsePort, parseSize, validateLogLevel, validateRedisUrl,
  type PlatformConfig,
} from './config.js';
import { createLogger } from './logger.js';
import { startMetricsServer } from './metrics.js';
import { startPlatform, type RunningPlatform } from './platform/platform.js';
import { startProxy, type ProxyOptions, type RunningProxy } from './proxy/server.js';

const VERSION = '0.1.0';

/** A flag with its environment variable, so every option can be set either way. */
function opt(flags: string, description: string, env: string, defaultValue?: string): Option {
  const o = new Option(flags, description).env(env);
  if (defaultValue !== undefined) o.default(defaultValue);
  return o;
}

function platformOptions(cmd: Command): Command {
  return cmd
    .addOption(opt('--host <address>', 'address to bind (loopback by default: nothing is exposed to the network)', 'RESPGATE_HOST', DEFAULTS.host))
    .addOption(opt('--http-port <port>', 'platform HTTP port (all areas)', 'RESPGATE_HTTP_PORT', String(DEFAULTS.httpPort)))
    .addOption(opt('--token <token>', 'Standard REST token (generated and printed when absent)', 'RESPGATE_TOKEN'))
    .addOption(opt('--readonly-token <token>', 'Read Only REST token (generated and printed when absent)', 'RESPGATE_READONLY_TOKEN'))
    .addOption(opt('--redis-url <url>', 'Redis for the key-value data, redis://[user:password@]host:port (default: start an embedded redis-server)', 'RESPGATE_REDIS_URL'))
    .addOption(opt('--internal-redis-url <url>', "Redis for the platform's own bookkeeping, kept apart from the data (default: start an embedded redis-server)", 'RESPGATE_INTERNAL_REDIS_URL'))
    .addOption(opt('--redis-server <path>', 'redis-server executable for the embedded stores', 'RESPGATE_REDIS_SERVER', DEFAULTS.redisServerBinary))
    .addOption(opt('--max-request-size <size>', 'largest accepted REST request (bytes, or with kb/mb)', 'RESPGATE_MAX_REQUEST_SIZE', '10mb'))
    .addOption(opt('--daily-request-limit <n>', 'commands per UTC day before requests are refused (0 = no limit)', 'RESPGATE_DAILY_REQUEST_LIMIT', '0'))
    .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel))
    // --- queue (Area D) and account (Area A)
    .addOption(opt('--queue-token <token>', 'Bearer token of the message queue (default: the Standard REST token)', 'RESPGATE_QUEUE_TOKEN'))
    .addOption(opt('--signing-key <key>', 'current key of the Upstash-Signature JWT (generated, kept and printed when absent)', 'RESPGATE_SIGNING_KEY'))
    .addOption(opt('--next-signing-key <key>', 'next signing key (generated, kept and printed when absent)', 'RESPGATE_NEXT_SIGNING_KEY'))
    .addOption(opt('--queue-backoff-scale <factor>', 'multiplies the default retry backoff (12 s, 2m28s, 30m8s…); 0.001 makes it milliseconds for development', 'RESPGATE_QUEUE_BACKOFF_SCALE', '1'))
    .addOption(opt('--queue-message-price <dollars>', 'price of one message charged against the account budget (default: pay-as-you-go $1 per 100,000)', 'RESPGATE_QUEUE_MESSAGE_PRICE', '0.00001'))
    .addOption(opt('--queue-concurrency <n>', 'deliveries in flight at once', 'RESPGATE_QUEUE_CONCURRENCY', '200'))
    .addOption(opt('--account-email <email>', 'user name of the account API (HTTP Basic)', 'RESPGATE_ACCOUNT_EMAIL', 'dev@respgate.local'))
    .addOption(opt('--account-key <key>', 'password of the account API (generated, kept and printed when absent)', 'RESPGATE_ACCOUNT_KEY'));
}

function proxyOptions(cmd: Command, remote: boolean): Command {
  cmd.addOption(opt('--port <port>', 'proxy port that Redis clients connect to', 'RESPGATE_PORT', String(DEFAULTS.proxyPort)));
  if (remote) {
    cmd
      .addOption(opt('--host <address>', 'address to bind (loopback by default: nothing is exposed to the network)', 'RESPGATE_HOST', DEFAULTS.host))
      .addOption(opt('--upstream-url <url>', 'REST URL of the key-value database (falls back to UPSTASH_REDIS_REST_URL)', 'RESPGATE_UPSTREAM_URL'))
      .addOption(opt('--upstream-token <token>', 'REST token of the key-value database (falls back to UPSTASH_REDIS_REST_TOKEN)', 'RESPGATE_UPSTREAM_TOKEN'))
      .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel))
      .addOption(opt('--metrics-port <port>', 'serve Prometheus metrics on http://<host>:<port>/metrics (default: off; the dev stack serves them on --http-port)', 'RESPGATE_METRICS_PORT'));
  }
  return cmd
    .addOption(opt('--requirepass <password>', 'password clients must give with AUTH (default: none; the proxy binds loopback)', 'RESPGATE_REQUIREPASS'))
    .addOption(opt('--upstream-timeout <ms>', 'time limit of one upstream HTTP call; past it the commands get an error', 'RESPGATE_UPSTREAM_TIMEOUT', '5000'))
    .addOption(opt('--upstream-connections <n>', 'keep-alive HTTP connections to the upstream (and upstream calls in flight)', 'RESPGATE_UPSTREAM_CONNECTIONS', '16'))
    .addOption(opt('--max-batch <n>', 'most commands coalesced into one upstream /pipeline call', 'RESPGATE_MAX_BATCH', '1000'))
    .addOption(opt('--block-poll-interval <ms>', 'blocking commands (BLPOP, BZPOPMIN, XREAD BLOCK…) poll the upstream, 10 ms apart at first, doubling up to this; each poll is one upstream request (billed by hosted services)', 'RESPGATE_BLOCK_POLL_INTERVAL', '100'))
    .addOption(opt('--proto-max-bulk-len <size>', 'largest argument a client may send (like Redis proto-max-bulk-len)', 'RESPGATE_PROTO_MAX_BULK_LEN', '512mb'));
}

interface ProxyFlags {
  metricsPort?: string;
  port: string; host: string; upstreamUrl?: string; upstreamToken?: string; requirepass?: string;
  upstreamTimeout: string; upstreamConnections: string; maxBatch: string; protoMaxBulkLen: string; logLevel: string;
  blockPollInterval: string;
}

function proxyConfig(f: ProxyFlags, upstreamUrl: string, upstreamToken: string): ProxyOptions {
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
    requirepass: f.requirepass || undefined,
    maxBulkLength: parseSize(f.protoMaxBulkLen, '--proto-max-bulk-len'),
    blockPollIntervalMs: positive(f.blockPollInterval, '--block-poll-interval'),
  };
}

function validateUpstreamUrl(value: string | undefined): string {
  if (!value) {
    throw new ConfigError('no upstream: give --upstream-url (or RESPGATE_UPSTREAM_URL / UPSTASH_REDIS_REST_URL), or run `respgate dev` for a local one');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`--upstream-url is not a URL: '${value}' (expected https://<host> or http://127.0.0.1:8079)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`--upstream-url must be an http:// or https:// REST URL, got '${url.protocol}//…' (a redis:// URL is a Redis server, not a REST API)`);
  }
  return value.replace(/\/+$/, '');
}

interface PlatformFlags {
  host: string; httpPort: string; token?: string; readonlyToken?: string; redisUrl?: string; internalRedisUrl?: string;
  redisServer: string; maxRequestSize: string; dailyRequestLimit: string; logLevel: string;
  queueToken?: string; signingKey?: string; nextSigningKey?: string; queueBackoffScale: string; queueMessagePrice: string;
  queueConcurrency: string; accountEmail: string; accountKey?: string;
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

function banner(p: RunningPlatform, f: PlatformFlags, proxy?: RunningProxy, requirepass?: string): string {
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
    `  Key-value REST API (Area B)   ${p.url}`,
    p.dataStore && !f.redisUrl ? `  data store                    embedded redis-server on 127.0.0.1:${p.dataStore.port}` : `  data store                    ${redactUrl(f.redisUrl!)}`,
    '',
    '  Paste into your environment (@upstash/redis: Redis.fromEnv()):',
    `    UPSTASH_REDIS_REST_URL=${p.url}`,
    `    UPSTASH_REDIS_REST_TOKEN=${p.token}`,
    `    # read-only token: ${p.readonlyToken}`,
    '',
    ...p.areaBanner,
    `  Try it:  curl -H "Authorization: Bearer $UPSTASH_REDIS_REST_TOKEN" ${p.url}/set/greeting/hello`,
    `  Metrics: ${p.url}/metrics (Prometheus)`,
    '',
    '  Press Ctrl+C to stop (embedded data is not kept).',
    '',
  ];
  return lines.join('\n');
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

async function runDev(flags: PlatformFlags & ProxyFlags): Promise<void> {
  const config = platformConfig(flags);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, log);
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(proxyConfig(flags, platform.url, platform.token), log);
  } catch (err) {
    await platform.stop();
    throw err;
  }
  process.stdout.write(banner(platform, flags, proxy, flags.requirepass) + '\n');
  await waitForSignal();
  await proxy.stop();
  await platform.stop();
}

async function runProxy(flags: ProxyFlags): Promise<void> {
  const url = validateUpstreamUrl(flags.upstreamUrl || process.env.UPSTASH_REDIS_REST_URL);
  const token = flags.upstreamToken || process.env.UPSTASH_REDIS_REST_TOKEN;
  if (!token) throw new ConfigError('no upstream token: give --upstream-token (or RESPGATE_UPSTREAM_TOKEN / UPSTASH_REDIS_REST_TOKEN)');
  const log = createLogger(validateLogLevel(flags.logLevel));
  const proxy = await startProxy(proxyConfig(flags, url, token), log);
  const metrics = flags.metricsPort ? await startMetricsServer(proxy.host, parsePort(flags.metricsPort, '--metrics-port')) : undefined;
  process.stdout.write(`respgate ${VERSION}: proxy ready on redis://${proxy.host}:${proxy.port} in front of ${new URL(url).origin}\n  redis-cli -p ${proxy.port}\n` +
    (metrics ? `  metrics: http://${proxy.host}:${metrics.port}/metrics\n` : ''));
  await waitForSignal();
  await metrics?.stop();
  await proxy.stop();
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export function buildProgram(): Command {
  const program = new Command('respgate')
    .version(VERSION)
    .description('A Redis-protocol gateway to HTTP data services, with a faithful local platform.\n' +
      'Every flag can also be set by the environment variable shown next to it.')
    .showHelpAfterError();
  proxyOptions(platformOptions(program.command('dev', { isDefault: true }).description(
    'start the dev stack: embedded redis-servers, the local platform, and the proxy in front of it (default command)')), false).action(runDev);
  proxyOptions(program.command('proxy').description(
    'start the proxy alone, in front of a remote REST key-value database (--upstream-url, --upstream-token)'), true).action(runProxy);
  platformOptions(program.command('platform').description('start the local platform alone (REST API on --http-port)')).action(runPlatform);
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
