// Micro-benchmark of the reply scanner (src/resp/reply-scanner.ts): replies split per second, as the
// upstream client splits a /pipeline answer (splitReplies) for typical reply mixes.
// Run: npx tsx bench/reply-scanner.bench.ts
import { splitReplies } from '../src/resp/reply-scanner.js';
import { measure } from './measure.js';

const N = 100_000;
const mixes: Record<string, (i: number) => string> = {
  'GET/SET (+OK, short bulks)': (i) => (i % 2 ? '+OK\r\n' : `$16\r\nvalue-${String(i).padStart(10, '0')}\r\n`),
  'INCR (integers)': (i) => `:${i}\r\n`,
  'LRANGE 0 9 (arrays of 10 bulks)': () => `*10\r\n${'$8\r\nelement!\r\n'.repeat(10)}`,
  'GET of 1 KB values': () => `$1024\r\n${'x'.repeat(1024)}\r\n`,
};

console.log(`node ${process.version}, ${N} replies per round`);
for (const [name, reply] of Object.entries(mixes)) {
  const body = Buffer.from(Array.from({ length: N }, (_, i) => reply(i)).join(''), 'latin1');
  measure(name, 'replies', () => {
    const parts = splitReplies(body, N);
    if (!parts || parts.length !== N) throw new Error('split failed');
    return N;
  });
}
