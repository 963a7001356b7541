// Micro-benchmark of the request reader: commands/second parsed from a GET/SET pipeline.
// Run: npx tsx bench/resp-reader.bench.ts [commands]
import { RequestReader } from '../src/resp/request-reader.js';

const N = Number(process.argv[2] ?? 200_000);

function encode(args: string[]): Buffer {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return Buffer.from(s);
}

const frames: Buffer[] = [];
for (let i = 0; i < N; i++) {
  frames.push(i % 2 ? encode(['GET', `key:${i % 1000}`]) : encode(['SET', `key:${i % 1000}`, `value-${i}-xxxxxxxxxxxx`]));
}
const pipeline = Buffer.concat(frames);

/** Splits like a socket delivers data: fixed-size chunks that cut commands anywhere. */
function chunked(size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < pipeline.length; i += size) out.push(pipeline.subarray(i, i + size));
  return out;
}

function run(chunks: Buffer[]): number {
  const reader = new RequestReader();
  let count = 0;
  for (const c of chunks) {
    reader.push(c);
    while (reader.read() !== undefined) count++;
  }
  if (count !== N) throw new Error(`parsed ${count} of ${N}`);
  return count;
}

function measure(name: string, chunks: Buffer[]): void {
  for (let i = 0; i < 3; i++) run(chunks); // warm up
  const rounds = 7;
  const rates: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    const n = run(chunks);
    const ns = Number(process.hrtime.bigint() - t0);
    rates.push(n / (ns / 1e9));
  }
  rates.sort((a, b) => a - b);
  const median = rates[rates.length >> 1];
  const mb = (pipeline.length / 1e6).toFixed(1);
  console.log(
    `${name.padEnd(34)} ${Math.round(median).toLocaleString('en-US').padStart(12)} commands/s  (${N} commands, ${mb} MB, median of ${rounds})`,
  );
}

console.log(`node ${process.version}, GET/SET pipeline`);
measure('one buffer', [pipeline]);
measure('64 KB chunks (socket reads)', chunked(64 * 1024));
measure('1 KB chunks', chunked(1024));
measure('one command per chunk', frames);
