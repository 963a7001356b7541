// Micro-benchmark of the RESP2 → RESP3 converter (src/resp/resp3-converter.ts), which every upstream
// reply of a RESP3 connection goes through: replies converted per second, by reply shape.
// Run: npx tsx bench/resp3-converter.bench.ts
import { mapOf, pairsOf, setOf, type ReplyShape } from '../src/resp/reply-shape.js';
import { toResp3 } from '../src/resp/resp3-converter.js';
import { measure } from './measure.js';

const N = 100_000;
const cases: [string, string, ReplyShape][] = [
  ['bulk, shape any (unchanged)', '$5\r\nhello\r\n', 'any'],
  ['null bulk (→ _)', '$-1\r\n', 'bulk'],
  ['double (bulk → ,)', '$4\r\n1.25\r\n', 'double'],
  ['HGETALL of 10 fields (array → map)', `*20\r\n${'$5\r\nfield\r\n$5\r\nvalue\r\n'.repeat(10)}`, mapOf()],
  ['SMEMBERS of 10 (array → set)', `*10\r\n${'$6\r\nmember\r\n'.repeat(10)}`, setOf('bulk')],
  ['ZRANGE WITHSCORES 10 (pairs)', `*20\r\n${'$6\r\nmember\r\n$3\r\n1.5\r\n'.repeat(10)}`, pairsOf('bulk', 'double')],
];

console.log(`node ${process.version}, ${N} conversions per round`);
for (const [name, reply, shape] of cases) {
  const buf = Buffer.from(reply, 'latin1');
  let sink = 0;
  measure(name, 'replies', () => {
    for (let i = 0; i < N; i++) sink += toResp3(buf, shape).length;
    return N;
  });
  if (sink === 0) throw new Error('nothing converted');
}
