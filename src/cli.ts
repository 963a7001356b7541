// Command line: flags and RESPGATE_* environment variables → one validated configuration → roles.
import { Command, Option } from 'commander';
import {
  ConfigError, DEFAULTS, generateToken, parseNonNegativeInt, parsePort, parseSize, validateLogLevel, validateRedisUrl,
  type PlatformConfig,
} from './config.js';
import { createLogger } from './logger.js';
import { startPlatform, type RunningPlatform } from './platform/platform.js';

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
    .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'RESPGATE_LOG_LEVEL', DEFAULTS.logLevel));
}

interface PlatformFlags {
  host: string; httpPort: string; token?: string; readonlyToken?: string; redisUrl?: string; internalRedisUrl?: string;
  redisServer: string; maxRequestSize: string; dailyRequestLimit: string; logLevel: string;
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
  };
}

function banner(p: RunningPlatform, f: PlatformFlags): string {
  const lines = [
    '',
    `respgate ${VERSION}: local platform ready`,
    '',
    `  Key-value REST API (Area B)   ${p.url}`,
    p.dataStore && !f.redisUrl ? `  data store                    embedded redis-server on 127.0.0.1:${p.dataStore.port}` : `  data store                    ${redactUrl(f.redisUrl!)}`,
    '',
    '  Paste into your environment (@upstash/redis: Redis.fromEnv()):',
    `    UPSTASH_REDIS_REST_URL=${p.url}`,
    `    UPSTASH_REDIS_REST_TOKEN=${p.token}`,
    `    # read-only token: ${p.readonlyToken}`,
    '',
    `  Try it:  curl -H "Authorization: Bearer $UPSTASH_REDIS_REST_TOKEN" ${p.url}/set/greeting/hello`,
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
  platformOptions(program.command('dev', { isDefault: true }).description(
    'start the dev stack: embedded redis-server and the local platform (default command)')).action(runPlatform);
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
