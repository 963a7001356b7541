// Redis' client-output-buffer-limit: per class of client (normal, replica, pubsub) a hard limit, and
// a soft limit that disconnects only once it has been exceeded for soft_seconds without a break.
// The syntax, defaults and error texts are redis-server 7.0's (config.c
// setConfigClientOutputBufferLimitOption, util.c memtoull; networking.c checkClientOutputBufferLimits).
// Normal clients are unlimited by default, as in Redis: their reading is paused by backpressure instead.

/**
 * Redis' client classes for the limit. The proxy has no replicas (the class is kept for Redis' syntax);
 * a MONITOR connection is `normal`, as Redis' getClientType exposes it.
 */
export type OutputClass = 'normal' | 'replica' | 'pubsub';

export interface ClassLimit {
  /** Bytes (0 = none); bigint, as Redis takes any unsigned 64-bit value. */
  hard: bigint;
  soft: bigint;
  softSeconds: number;
}

export type OutputBufferLimits = Record<OutputClass, ClassLimit>;

/** redis-server 7.0's default, in CONFIG GET's form. */
export const DEFAULT_OUTPUT_BUFFER_LIMITS = 'normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60';

const CLASS_NAMES: Record<string, OutputClass> = { normal: 'normal', slave: 'replica', replica: 'replica', pubsub: 'pubsub' };
const ULLONG_MAX = (1n << 64n) - 1n;
const UNITS: Record<string, bigint> = {
  '': 1n,
  b: 1n,
  k: 1000n,
  kb: 1024n,
  m: 1000n ** 2n,
  mb: 1024n ** 2n,
  g: 1000n ** 3n,
  gb: 1024n ** 3n,
};

/** The defaults as a fresh object (each port changes its own with CONFIG SET). */
export function defaultOutputBufferLimits(): OutputBufferLimits {
  return (parseOutputBufferLimits(DEFAULT_OUTPUT_BUFFER_LIMITS) as { limits: OutputBufferLimits }).limits;
}

/**
 * `<class> <hard> <soft> <soft seconds>` repeated; the classes not named keep `base`'s values. All or
 * nothing: one bad field refuses the whole text, with Redis' error.
 */
export function parseOutputBufferLimits(text: string, base?: OutputBufferLimits): { limits: OutputBufferLimits } | { error: string } {
  const limits = base ? copy(base) : { normal: zero(), replica: zero(), pubsub: zero() };
  if (text === '') return { limits }; // Redis accepts an empty value and changes nothing
  // sdssplitlen on one space: doubled spaces make empty fields, hence a wrong count.
  const argv = text.split(' ');
  if (argv.length % 4 !== 0) return { error: 'Wrong number of arguments in buffer limit configuration.' };
  for (let j = 0; j < argv.length; j += 4) {
    const cls = CLASS_NAMES[argv[j].toLowerCase()];
    if (!cls) return { error: 'Invalid client class specified in buffer limit configuration.' };
    const hard = memtoull(argv[j + 1]);
    const soft = memtoull(argv[j + 2]);
    const softSeconds = /^[+-]?\d+$/.test(argv[j + 3]) ? Number(argv[j + 3]) : -1;
    if (hard === undefined || soft === undefined || softSeconds < 0 || !Number.isSafeInteger(softSeconds)) {
      return { error: 'Error in hard, soft or soft_seconds setting in buffer limit configuration.' };
    }
    limits[cls] = { hard, soft, softSeconds };
  }
  return { limits };
}

/** CONFIG GET's form. */
export function formatOutputBufferLimits(l: OutputBufferLimits): string {
  const one = (name: string, c: ClassLimit) => `${name} ${c.hard} ${c.soft} ${c.softSeconds}`;
  return [one('normal', l.normal), one('slave', l.replica), one('pubsub', l.pubsub)].join(' ');
}

/** When the soft limit was first exceeded without a break (ms; 0 = it is not). */
export interface SoftLimitState {
  softSince: number;
}

/** checkClientOutputBufferLimits: true when the connection must be closed. */
export function outputLimitReached(limit: ClassLimit, used: number, state: SoftLimitState, now: number): boolean {
  const bytes = BigInt(used);
  if (limit.hard > 0n && bytes >= limit.hard) return true;
  if (limit.soft > 0n && bytes >= limit.soft) {
    if (state.softSince === 0) {
      state.softSince = now;
      return false;
    }
    return now - state.softSince > limit.softSeconds * 1000;
  }
  state.softSince = 0;
  return false;
}

/** util.c memtoull: digits and a unit (k = 1000, kb = 1024 …); strtoull's overflow saturates, the product wraps. */
function memtoull(text: string): bigint | undefined {
  const m = /^(\d*)([a-z]*)$/i.exec(text);
  const mul = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || mul === undefined || m[1].length >= 128) return undefined;
  const digits = m[1] === '' ? 0n : BigInt(m[1]);
  return ((digits > ULLONG_MAX ? ULLONG_MAX : digits) * mul) & ULLONG_MAX;
}

function zero(): ClassLimit {
  return { hard: 0n, soft: 0n, softSeconds: 0 };
}

function copy(l: OutputBufferLimits): OutputBufferLimits {
  return { normal: { ...l.normal }, replica: { ...l.replica }, pubsub: { ...l.pubsub } };
}
