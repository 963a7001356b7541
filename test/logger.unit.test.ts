// src/logger.ts writes pino's JSON lines without pino (issue 25: pino is 5-6 MiB of a sidecar's
// RSS). pino is the oracle: the same calls on a pino logger configured as respgate's was (name,
// no base fields, the same redaction) give the same lines, `time` aside.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { JsonLogger, formatMessage, prettyLine, type Logger } from '../src/logger.js';

const SECRET_KEYS = ['token', 'readonlyToken', 'password', 'authorization', 'upstreamToken', 'pass', 'secret'];

function pinoLines(level: string): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = pino(
    {
      name: 'respgate',
      level,
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`)], censor: '[redacted]' },
      base: undefined,
    },
    sink,
  );
  return { log, lines };
}

function ourLines(level: string): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new JsonLogger(level, ',"name":"respgate"', (l) => lines.push(l)), lines };
}

const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

class UpstreamError extends Error {
  code = 'E_UP';
}
// Made once, so that both loggers see the same stacks.
const ERRORS = {
  upstream: new UpstreamError('bad'),
  caused: new Error('outer', { cause: new TypeError('inner') }),
  range: new RangeError('top'),
  plain: new Error('top'),
  other: new Error('x'),
};

/** The calls the code makes, and the edge cases of pino's output around them. */
const CALLS: [string, (log: Logger) => void][] = [
  ['a message', (log) => log.info('upstream reachable again')],
  ['fields and a message', (log) => log.warn({ upstream: 'http://x', nextCheckMs: 250, ok: true, n: null }, 'upstream still failing')],
  ['fields only', (log) => log.info({ a: 1, b: 'two' })],
  ['a field named msg, with and without a message', (log) => (log.info({ msg: 'inner' }), log.info({ msg: 'inner' }, 'outer'))],
  [
    'secrets at the top and one level down',
    (log) => log.warn({ token: 'T', nested: { password: 'P', ok: 2 }, authorization: 'Bearer x' }, 'redacted'),
  ],
  [
    'secrets that are null, undefined, objects or deeper',
    (log) =>
      log.info({ secret: null, pass: undefined, upstreamToken: { a: 1 }, deep: { a: { token: 'kept' } }, list: [{ token: 1 }] }, 'edge'),
  ],
  ['every secret key', (log) => log.info(Object.fromEntries(SECRET_KEYS.map((k) => [k, 'x'])), 'all')],
  [
    'values JSON drops or changes',
    (log) => log.info({ u: undefined, f() {}, nan: NaN, inf: Infinity, big: 10n, date: new Date(0) }, 'types'),
  ],
  ['strings that need escaping', (log) => log.debug({ s: 'line\nnew "q" \\ \u2028 \u0001 é' }, 'tab\there "quoted"')],
  ['an err field: type, message, stack, own fields', (log) => log.error({ err: ERRORS.upstream }, 'side-port command failed')],
  ['an err field with a cause', (log) => log.error({ err: ERRORS.caused }, 'caused')],
  ['an err field that is not an error', (log) => log.warn({ err: 'String(err)' }, 'queue engine: redis error')],
  ['an error as the object, with and without a message', (log) => (log.error(ERRORS.range), log.error(ERRORS.plain, 'given'))],
  ['an error in another field', (log) => log.error({ e: ERRORS.other }, 'as JSON')],
  ['printf arguments', (log) => log.info('a %s b %d c %j d %% e %i f %o', 'x', 2.5, { q: 1 }, 7.9, 'str', 'extra')],
  ['printf with fields', (log) => log.info({ k: 1 }, '%s and %s', 'one')],
  ['a number as the message', (log) => log.info(42)],
  ['extra arguments without placeholders', (log) => log.info('x', 'extra')],
  ['fields clashing with level, time and name', (log) => log.info({ level: 'x', name: 'n', time: 5 }, 'clash')],
];

describe('createLogger writes what pino wrote', () => {
  for (const [what, call] of CALLS) {
    it(what, () => {
      const ours = ourLines('debug');
      const theirs = pinoLines('debug');
      call(ours.log);
      call(theirs.log);
      expect(ours.lines.map(withoutTime)).toEqual(theirs.lines.map(withoutTime));
      expect(ours.lines.length).toBeGreaterThan(0);
    });
  }

  it('lines below the level are not written; the level can be read and changed; an unknown level throws', () => {
    const { log, lines } = ourLines('warn');
    log.info('no');
    log.debug({ a: 1 }, 'no');
    log.warn('yes');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['yes']);
    expect(log.level).toBe('warn');
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.isLevelEnabled('error')).toBe(true);
    log.level = 'trace';
    log.trace('now');
    expect(lines.length).toBe(2);
    log.level = 'silent';
    log.fatal('never');
    expect(lines.length).toBe(2);
    expect(log.isLevelEnabled('fatal')).toBe(false);
    expect(() => ourLines('loud')).toThrow('unknown level loud');
  });

  it('a cycle in a field is written as [Circular] instead of throwing', () => {
    const { log, lines } = ourLines('info');
    const c: Record<string, unknown> = { a: 1 };
    c.self = c;
    log.info({ c }, 'cycle');
    expect(JSON.parse(lines[0]).c).toEqual({ a: 1, self: '[Circular]' });
  });

  it('formatMessage leaves a message without arguments as it is, placeholders included', () => {
    expect(formatMessage('100%s done', [])).toBe('100%s done');
    expect(formatMessage('%s', [undefined])).toBe('undefined');
    expect(formatMessage('%d', [null])).toBe('%d');
  });

  it('pretty lines read our JSON lines as they read pino’s', () => {
    const { log, lines } = ourLines('info');
    log.warn({ token: 't', port: 6379 }, 'hello');
    expect(prettyLine(lines[0], false)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}hello {2}token=\[redacted\] port=6379\n$/);
  });
});
