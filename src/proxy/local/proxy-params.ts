// The CONFIG parameters the proxy owns: they describe the proxy itself, so CONFIG GET reads their live
// values and CONFIG SET changes them at once, with redis-server 7.0's ranges and error texts
// (config.c createLongLongConfig / createIntConfig / createUIntConfig). Parameters of the upstream
// keep their behaviour (introspection.ts).
import type { ServerState } from '../../server/context.js';

interface ProxyParam {
  min: bigint;
  max: bigint;
  get(server: ServerState): number;
  set(server: ServerState, value: number): void;
}

const LLONG_MAX = 9223372036854775807n;

/** In CONFIG GET's order (Redis lists its hash table's order; the proxy its table's). */
const PARAMS: Record<string, ProxyParam> = {
  'slowlog-log-slower-than': {
    min: -1n,
    max: LLONG_MAX,
    get: (s) => s.slowlog.slowerThanUs,
    set: (s, v) => (s.slowlog.slowerThanUs = v),
  },
  'slowlog-max-len': { min: 0n, max: LLONG_MAX, get: (s) => s.slowlog.maxLen, set: (s, v) => (s.slowlog.maxLen = v) },
  timeout: {
    min: 0n,
    max: 2147483647n,
    get: (s) => s.settings.idleTimeoutSec,
    set: (s, v) => (s.settings.idleTimeoutSec = v),
  },
  maxclients: { min: 1n, max: 4294967295n, get: (s) => s.settings.maxClients, set: (s, v) => (s.settings.maxClients = v) },
};

export function isProxyParam(name: string): boolean {
  return Object.hasOwn(PARAMS, name);
}

/** Every proxy parameter with its live value. */
export function proxyParamValues(server: ServerState): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, p] of Object.entries(PARAMS)) out[name] = String(p.get(server));
  return out;
}

/** The value as the parameter takes it, or the end of Redis' `CONFIG SET failed …` text. */
export function checkProxyParam(name: string, raw: Buffer): { value: number } | { error: string } {
  const text = raw.toString('latin1');
  // string2ll: optional minus, digits, no leading zero, within a signed 64-bit integer.
  if (!/^(0|-?[1-9]\d*)$/.test(text) || BigInt(text) > LLONG_MAX || BigInt(text) < -LLONG_MAX - 1n) {
    return { error: "argument couldn't be parsed into an integer" };
  }
  const n = BigInt(text);
  const p = PARAMS[name];
  if (n < p.min || n > p.max) return { error: `argument must be between ${p.min} and ${p.max} inclusive` };
  return { value: Number(n) };
}

export function setProxyParam(server: ServerState, name: string, value: number): void {
  PARAMS[name].set(server, value);
}
