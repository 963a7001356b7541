// Our RESP code against the two parsers the design card named: redis-parser (NodeRedis) and respjs.
// Two jobs: reading client requests (arrays of bulk strings, as Buffers) and handling an upstream
// /pipeline answer. For the latter the proxy needs each reply's raw bytes, not a decoded value, so our
// splitReplies only finds reply boundaries; the parsers decode (and the proxy would then have to encode
// again), so their figure is a lower bound of the work they would cost.
// Run: npx tsx bench/parsers-compare.bench.ts   (respjs is not a dependency: NODE_PATH=<dir with respjs>)
import { createRequire } from 'node:module';
import { RequestReader } from '../src/resp/request-reader.js';
import { splitReplies } from '../src/resp/reply-scanner.js';
import { measure } from './measure.js';

const require = createRequire(import.meta.url);
type Parser = { execute(b: Buffer): void };
const RedisParser = require('redis-parser') as new (o: {
  returnReply(r: unknown): void;
  returnError(e: unknown): void;
  returnBuffers: boolean;
}) => Parser;
let Resp: (new (o: { bufBulk: boolean }) => { write(b: Buffer): void; on(e: string, f: (d: unknown) => void): void }) | undefined;
try {
  Resp = require(require.resolve('respjs', { paths: (process.env.NODE_PATH ?? '').split(':').filter(Boolean).concat([process.cwd()]) }));
} catch {
  console.log('respjs not found: give NODE_PATH=<node_modules holding respjs> to include it');
}

const N = 100_000;
const encode = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
const requests = Buffer.from(
  Array.from({ length: N }, (_, i) =>
    i % 2 ? encode(['GET', `key:${i % 1000}`]) : encode(['SET', `key:${i % 1000}`, `value-${i}-xxxxxxxxxxxx`]),
  ).join(''),
);
const replies = Buffer.from(
  Array.from({ length: N }, (_, i) => (i % 2 ? '+OK\r\n' : `$16\r\nvalue-${String(i).padStart(10, '0')}\r\n`)).join(''),
  'latin1',
);
/** Socket-sized chunks that cut frames anywhere. */
const chunks = (b: Buffer, size = 64 * 1024) =>
  Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size));
const requestChunks = chunks(requests);

console.log(`node ${process.version}, ${N} commands or replies per round`);
measure('requests: respgate RequestReader', 'commands', () => {
  const reader = new RequestReader({ maxBulkLength: 512 * 1024 * 1024 });
  let n = 0;
  for (const c of requestChunks) {
    reader.push(c);
    while (reader.read()) n++;
  }
  return n;
});
measure('requests: redis-parser (returnBuffers)', 'commands', () => {
  let n = 0;
  const p = new RedisParser({ returnReply: () => n++, returnError: () => n++, returnBuffers: true });
  for (const c of requestChunks) p.execute(c);
  return n;
});
if (Resp) {
  const R = Resp;
  measure('requests: respjs (bufBulk)', 'commands', () => {
    let n = 0;
    const r = new R({ bufBulk: true });
    r.on('data', () => n++);
    for (const c of requestChunks) r.write(c);
    return n;
  });
}
measure('pipeline answer: respgate splitReplies (raw bytes)', 'replies', () => splitReplies(replies, N)!.length);
measure('pipeline answer: redis-parser (decoded, returnBuffers)', 'replies', () => {
  let n = 0;
  new RedisParser({ returnReply: () => n++, returnError: () => n++, returnBuffers: true }).execute(replies);
  return n;
});
if (Resp) {
  const R = Resp;
  measure('pipeline answer: respjs (decoded, bufBulk)', 'replies', () => {
    let n = 0;
    const r = new R({ bufBulk: true });
    r.on('data', () => n++);
    r.write(replies);
    return n;
  });
}
