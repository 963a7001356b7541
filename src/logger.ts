// One pino logger for every role. Secrets are redacted by key name wherever they appear, and the
// code never interpolates a token or password into a message. Lines go to stderr: JSON (one object a
// line, for log collectors) unless stderr is a terminal, where they are short readable lines.
import { Writable } from 'node:stream';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

const SECRET_KEYS = ['token', 'readonlyToken', 'password', 'authorization', 'upstreamToken', 'pass', 'secret'];

export function createLogger(level: string, name = 'respgate', pretty = process.stderr.isTTY === true): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`)], censor: '[redacted]' },
      base: undefined,
    },
    pretty ? prettyStream((line) => process.stderr.write(line)) : pino.destination(2),
  );
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };

/** `12:03:04.123 WARN  message key=value …` from pino's JSON lines (already redacted). */
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

function prettyStream(write: (line: string) => void): DestinationStream {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) write(prettyLine(line));
      done();
    },
  }) as unknown as DestinationStream;
}
