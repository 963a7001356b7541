// Starts the real local platform (with its own embedded redis-servers on free ports) for a test file.
import { createLogger } from '../../src/logger.js';
import { generateToken, DEFAULTS, type PlatformConfig } from '../../src/config.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/platform.js';
import { tracked } from './cleanup.js';

export async function startTestPlatform(overrides: Partial<PlatformConfig> = {}): Promise<RunningPlatform> {
  const config: PlatformConfig = {
    host: '127.0.0.1',
    httpPort: 0,
    token: generateToken(),
    readonlyToken: generateToken(),
    redisServerBinary: 'redis-server',
    maxRequestSize: DEFAULTS.maxRequestSize,
    dailyRequestLimit: 0,
    logLevel: 'silent',
    ...overrides,
  };
  return tracked(await startPlatform(config, createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')));
}

export interface KvCall {
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  token?: string | null;
}

export interface KvAnswer {
  status: number;
  headers: Headers;
  text: string;
  bytes: Buffer;
  json: any;
}

/** One HTTP call to the platform; `token: null` sends no credentials. */
export async function kv(p: RunningPlatform, path: string, call: KvCall = {}): Promise<KvAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  const token = call.token === undefined ? p.token : call.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(p.url + path, {
    method: call.method ?? (call.body !== undefined ? 'POST' : 'GET'),
    body: typeof call.body === 'string' || call.body === undefined ? call.body : new Uint8Array(call.body),
    headers,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, bytes, json };
}

/** Sends one JSON command at the root, as the official SDK does. */
export function command(p: RunningPlatform, args: (string | number)[], call: KvCall = {}): Promise<KvAnswer> {
  return kv(p, '/', { ...call, method: 'POST', body: JSON.stringify(args) });
}
