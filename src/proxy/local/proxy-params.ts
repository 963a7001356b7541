// The CONFIG parameters the proxy owns: they describe the proxy itself, so CONFIG GET reads their live
// values and CONFIG SET changes them at once, with redis-server 7.0's ranges and error texts
// (config.c createLongLongConfig / createIntConfig / createUIntConfig, and the special
// client-output-buffer-limit). Parameters of the upstream keep their behaviour (introspection.ts).
import type { ServerState } from '../../server/context.js';
import { formatOutputBufferLimits, parseOutputBufferLimits, type OutputBufferLimits } from '../../server/output-limits.js';

interface ProxyParam {
  get(server: ServerState): string;
  /** The value as the parameter takes it, or the end of Redis' `CONFIG SET failed …` text. */
  check(raw: Buffer, server: ServerState): { value: unknown } | { error: string };
  set(server: ServerState, value: unknown): void;
}

const LLONG_MAX = 9223372036854775807n;

/** An integer parameter within [min, max]. */
function integer(min: bigint, max: bigint, get: (s: ServerState) => number, set: (s: ServerState, v: number) => void): ProxyParam {
  return {
    get: (s) => String(get(s)),
    check: (raw) => {
      const text = raw.toString('latin1');
      // string2ll: optional minus, digits, no leading zero, within a signed 64-bit integer.
      if (!/^(0|-?[1-9]\d*)$/.test(text) || BigInt(text) > LLONG_MAX || BigInt(text) < -LLONG_MAX - 1n) {
        return { error: "argument couldn't be parsed into an integer" };
      }
      const n = BigInt(text);
      if (n < min || n > max) return { error: `argument must be between ${min} and ${max} inclusive` };
      return { value: Number(n) };
    },
    set: (s, v) => set(s, v as number),
  };
}

/** In CONFIG GET's order (Redis lists its hash table's order; the proxy its table's). */
const PARAMS: Record<string, ProxyParam> = {
  'slowlog-log-slower-than': integer(
    -1n,
    LLONG_MAX,
    (s) => s.slowlog.slowerThanUs,
    (s, v) => (s.slowlog.slowerThanUs = v),
  ),
  'slowlog-max-len': integer(
    0n,
    LLONG_MAX,
    (s) => s.slowlog.maxLen,
    (s, v) => (s.slowlog.maxLen = v),
  ),
  timeout: integer(
    0n,
    2147483647n,
    (s) => s.settings.idleTimeoutSec,
    (s, v) => (s.settings.idleTimeoutSec = v),
  ),
  maxclients: integer(
    1n,
    4294967295n,
    (s) => s.settings.maxClients,
    (s, v) => (s.settings.maxClients = v),
  ),
  // Classes not named keep their values; the connections read the live object at their next reply.
  'client-output-buffer-limit': {
    get: (s) => formatOutputBufferLimits(s.settings.outputBufferLimits),
    check: (raw, s) => {
      const parsed = parseOutputBufferLimits(raw.toString('latin1'), s.settings.outputBufferLimits);
      return 'error' in parsed ? parsed : { value: parsed.limits };
    },
    set: (s, v) => Object.assign(s.settings.outputBufferLimits, v as OutputBufferLimits),
  },
};

export function isProxyParam(name: string): boolean {
  return Object.hasOwn(PARAMS, name);
}

/** Every proxy parameter with its live value. */
export function proxyParamValues(server: ServerState): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, p] of Object.entries(PARAMS)) out[name] = p.get(server);
  return out;
}

/** The value as the parameter takes it, or the end of Redis' `CONFIG SET failed …` text. */
export function checkProxyParam(server: ServerState, name: string, raw: Buffer): { value: unknown } | { error: string } {
  return PARAMS[name].check(raw, server);
}

export function setProxyParam(server: ServerState, name: string, value: unknown): void {
  PARAMS[name].set(server, value);
}
