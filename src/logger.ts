// One logger for every role: pino's JSON lines, written by a few dozen lines of our own instead of
// pino itself (5-6 MiB of a sidecar's idle RSS and a tenth of its start: bench/README.md, "Sidecar
// startup"). The output is pino's, byte for byte in the cases the code uses (test/logger.unit.test.ts
// compares with pino): `{"level":30,"time":…,"name":"respgate",…fields,"msg":"…"}`, the `err` field
// as pino's error serializer writes it. Secrets are redacted by key name wherever they appear (a
// field, or a field of a field), and the code never interpolates a token or password into a message.
// Lines go to stderr: JSON (one object a line, for log collectors) unless stderr is a terminal, where
// they are short readable lines.
/** pino's call forms that the code uses: `log.warn({ fields }, 'message')`, `log.warn('message')`, `log.error(err)`. */
export interface LogFn {
  (obj: unknown, msg?: string, ...args: unknown[]): void;
  (msg: string, ...args: unknown[]): void;
}

/** What the roles need of a logger; a pino logger is one too (tests hand the proxy their own). */
export interface Logger {
  level: string;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  isLevelEnabled(level: string): boolean;
}

const SECRET_KEYS = ['token', 'readonlyToken', 'password', 'authorization', 'upstreamToken', 'pass', 'secret'];
const CENSOR = '[redacted]';

const LEVEL_VALUES: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const METHODS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const noop: LogFn = () => {};

export function createLogger(level: string, name = 'respgate', pretty = process.stderr.isTTY === true): Logger {
  const write = pretty ? (line: string) => stderrWrite(prettyLine(line)) : stderrWrite;
  return new JsonLogger(level, `,"name":${JSON.stringify(name)}`, write);
}

/** Writes one line to stderr; a closed stderr (EPIPE) loses log lines but never stops the process, as with pino. */
function stderrWrite(line: string): void {
  if (process.stderr.listenerCount('error') === 0) process.stderr.on('error', () => {});
  process.stderr.write(line);
}

/** A logger writing pino's JSON lines to `write`; the methods of levels below `level` do nothing. */
export class JsonLogger implements Logger {
  trace = noop;
  debug = noop;
  info = noop;
  warn = noop;
  error = noop;
  fatal = noop;
  private threshold = 30;

  constructor(
    level: string,
    /** `,"name":"respgate"`: the fields every line carries after `time`. */
    private readonly bindings: string,
    private readonly write: (line: string) => void,
  ) {
    this.level = level;
  }

  get level(): string {
    return Object.keys(LEVEL_VALUES).find((k) => LEVEL_VALUES[k] === this.threshold)!;
  }

  set level(level: string) {
    const value = LEVEL_VALUES[level];
    if (value === undefined) throw new Error(`unknown level ${level}`); // pino's words
    this.threshold = value;
    for (const method of METHODS) {
      const n = LEVEL_VALUES[method];
      this[method] = n >= value ? (obj: unknown, ...rest: unknown[]) => this.write(this.line(n, obj, rest)) : noop;
    }
  }

  isLevelEnabled(level: string): boolean {
    return (LEVEL_VALUES[level] ?? Infinity) >= this.threshold && this.threshold !== Infinity;
  }

  private line(level: number, obj: unknown, rest: unknown[]): string {
    let json = `{"level":${level},"time":${Date.now()}${this.bindings}`;
    let msg: unknown;
    if (typeof obj === 'object' && obj !== null) {
      msg = rest[0];
      if (obj instanceof Error) {
        msg ??= obj.message;
        obj = { err: obj };
      }
      json += fieldsJson(obj as Record<string, unknown>);
      msg = formatMessage(msg, rest.slice(1));
    } else {
      msg = formatMessage(obj, rest);
    }
    if (msg !== undefined) json += `,"msg":${stringify(msg)}`;
    return json + '}\n';
  }
}

/** pino's printf-style message (quick-format-unescaped): %s %d %i %f %j %o %O %%; arguments beyond the placeholders are dropped. */
export function formatMessage(f: unknown, args: unknown[]): unknown {
  if (typeof f !== 'string' || args.length === 0) return f;
  let out = '';
  let last = 0;
  let a = 0;
  for (let i = 0; i < f.length - 1; i++) {
    if (f.charCodeAt(i) !== 37) continue;
    const c = f[i + 1];
    const arg = args[a];
    let text: string | undefined;
    if (c === '%') text = '%';
    else if (a >= args.length) continue;
    else if (c === 's') text = String(arg);
    else if ((c === 'd' || c === 'f' || c === 'i') && arg != null) text = String(c === 'i' ? Math.floor(Number(arg)) : Number(arg));
    else if ((c === 'j' || c === 'o' || c === 'O') && arg !== undefined)
      text = typeof arg === 'string' ? `'${arg}'` : typeof arg === 'function' ? arg.name || '<anonymous>' : stringify(arg);
    if (c !== '%' && 'sdfijoO'.includes(c)) a++;
    if (text === undefined) continue;
    out += f.slice(last, i) + text;
    last = i + 2;
    i++;
  }
  return last === 0 ? f : out + f.slice(last);
}

/** `,"k":v` for each field: secrets redacted (a field, or a field of a field), `err` serialized as pino does. */
function fieldsJson(obj: Record<string, unknown>): string {
  let out = '';
  for (const key in obj) {
    let value = obj[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (SECRET_KEYS.includes(key)) value = CENSOR;
    else if (key === 'err') value = serializeError(value);
    else if (typeof value === 'object' && value !== null) value = redactFields(value as Record<string, unknown>);
    out += `,${JSON.stringify(key)}:${stringify(value)}`;
  }
  return out;
}

/** A copy of `value` with its secret fields censored (only when one is there: most values have none). */
function redactFields(value: Record<string, unknown>): unknown {
  if (Array.isArray(value) || !SECRET_KEYS.some((k) => value[k] !== undefined)) return value;
  const copy: Record<string, unknown> = { ...value };
  for (const k of SECRET_KEYS) if (copy[k] !== undefined) copy[k] = CENSOR;
  return copy;
}

const isErrorLike = (e: unknown): e is Error & Record<string, unknown> =>
  typeof e === 'object' && e !== null && typeof (e as Error).message === 'string';

/** pino-std-serializers' `err`: type, message and stack with their causes, aggregated errors, own fields. */
function serializeError(err: unknown, seen = new Set<unknown>()): unknown {
  if (!isErrorLike(err)) return err;
  seen.add(err);
  const out: Record<string, unknown> = {
    type: typeof err.constructor === 'function' ? err.constructor.name : err.name,
    message: withCauses(err, (e) => e.message || '', ': ', ': ...'),
    stack: withCauses(err, (e) => e.stack || '', '\ncaused by: ', '\ncauses have become circular...'),
  };
  if (Array.isArray(err.errors)) out.aggregateErrors = err.errors.map((e) => serializeError(e, new Set()));
  for (const key in err) {
    if (out[key] !== undefined) continue;
    const val = err[key];
    if (!isErrorLike(val)) out[key] = val;
    else if (key !== 'cause' && !seen.has(val)) out[key] = serializeError(val, seen);
  }
  return out;
}

/** The error's text and its causes' (`cause` an error, not a VError-style function), joined by `sep`. */
function withCauses(err: Error, text: (e: Error) => string, sep: string, circular: string): string {
  let out = text(err);
  const seen = new Set<Error>();
  for (let e = err; ;) {
    const cause = (e as { cause?: unknown }).cause;
    if (!isErrorLike(cause)) return out;
    if (seen.has(e)) return out + circular;
    seen.add(e);
    out += sep + text(cause);
    e = cause;
  }
}

/** JSON of a value; a BigInt as its number and a cycle as "[Circular]" instead of throwing. */
function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    const stack: unknown[] = [];
    return JSON.stringify(value, function (this: unknown, _k, v: unknown) {
      if (typeof v === 'bigint') return Number(v);
      if (typeof v !== 'object' || v === null) return v;
      while (stack.length && stack[stack.length - 1] !== this) stack.pop();
      if (stack.includes(v)) return '[Circular]';
      stack.push(v);
      return v;
    });
  }
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };

/** `12:03:04.123 WARN  message key=value …` from a JSON line (already redacted). */
export function prettyLine(json: string, color = true): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : json + '\n';
  }
  const { level, time, msg, name: _name, ...rest } = o;
  const lvl = LEVELS[level as number] ?? String(level);
  const when = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const tag = color ? `\x1b[${COLORS[level as number] ?? '0'}m${lvl}\x1b[0m` : lvl;
  return `${when} ${tag} ${String(msg ?? '')}${fields ? '  ' + fields : ''}\n`;
}
