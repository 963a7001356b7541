// Frames for fuzzing the request reader and a live proxy connection (test/security/fuzz.test.ts and
// scripts/fuzz-proxy.ts): valid commands whose replies do not depend on the data (PING, ECHO, GET of
// a key nobody sets, unknown commands, wrong arity), in multibulk or inline form, and mutations of
// them (flipped, inserted, deleted bytes, truncation), so the same bytes can go to the proxy and to a
// real redis-server and the answers be compared byte for byte.
import fc from 'fast-check';
import net from 'node:net';
import { encodeCommands } from '../../src/resp/request-writer.js';

const arg = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  fc.constantFrom('', ' ', '"', "'", '\r\n', '\0', 'x'.repeat(300)),
);

/** One command from the data-independent set. */
export const validCommand: fc.Arbitrary<(string | Buffer)[]> = fc.oneof(
  fc.constant<(string | Buffer)[]>(['PING']),
  arg.map((a) => ['PING', a]),
  arg.map((a) => ['ECHO', a]),
  fc.string({ maxLength: 8 }).map((k) => ['GET', `fuzz:never-set:${k}`]),
  fc.array(arg, { maxLength: 3 }).map((a) => ['ECHO', ...a, 'x', 'y']), // wrong arity
  fc.tuple(fc.constantFrom('NOSUCHCMD', 'xyzzy', 'PINGG'), fc.array(arg, { maxLength: 3 })).map(([c, a]) => [c, ...a]),
);

function inline(cmd: (string | Buffer)[]): Buffer | undefined {
  const parts = cmd.map((a) => (Buffer.isBuffer(a) ? a.toString('latin1') : a));
  if (parts.some((p) => p === '' || /[\s"'\\\0\x80-\xff]/.test(p))) return undefined;
  return Buffer.from(parts.join(' ') + '\r\n', 'latin1');
}

/** A valid frame: multibulk (mostly) or inline. */
export const validFrame: fc.Arbitrary<Buffer> = fc
  .tuple(validCommand, fc.boolean())
  .map(([cmd, asInline]) => (asInline && inline(cmd)) || encodeCommands([cmd]));

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('number' as const),
    value: fc.constantFrom('-1', '0', '-5', '99999999999', '2147483648', '1048577', 'abc', ''),
  }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(frame: Buffer, m: Mutation): Buffer {
  const at = frame.length === 0 ? 0 : 'at' in m ? m.at % frame.length : 0;
  switch (m.kind) {
    case 'flip': {
      const b = Buffer.from(frame);
      b[at] = m.byte;
      return b;
    }
    case 'insert':
      return Buffer.concat([frame.subarray(0, at), Buffer.from(m.bytes), frame.subarray(at)]);
    case 'delete':
      return Buffer.concat([frame.subarray(0, at), frame.subarray(at + m.n)]);
    case 'truncate':
      return frame.subarray(0, at);
    case 'number': {
      // Replace the first count or length with a hostile number.
      const text = frame.toString('latin1');
      return Buffer.from(text.replace(/([*$])\d+/, `$1${m.value}`), 'latin1');
    }
  }
  return frame;
}

/** A frame that is valid, mutated, or random bytes. */
export const anyFrame: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: validFrame },
  { weight: 3, arbitrary: fc.tuple(validFrame, mutation).map(([f, m]) => mutate(f, m)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
);

/** Sends `bytes`, half-closes, and returns everything received until the server closes (or `ms`). */
export function exchangeAll(port: number, bytes: Buffer, ms = 5000): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1');
    const done = (closed: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ data: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => done(false), ms);
    s.on('connect', () => s.end(bytes));
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => undefined);
    s.on('close', () => done(true));
  });
}
