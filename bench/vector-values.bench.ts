// What the vector side port's own reading of a `VSIM key VALUES 384 … COUNT 10` costs, in-process: the
// RESP reader (one view per argument) and readVectorInput (the 384 numbers), against the JSON.parse of
// the same query as a REST /query body. CPU time per request, median of 5 rounds of 20 000.
//
//   npx esbuild bench/vector-values.bench.ts --bundle --platform=node --format=esm --outfile=/tmp/vv.mjs && node /tmp/vv.mjs
//
// Run it bundled, not through tsx: under tsx's loader the same code ran ~15× slower (bench/README.md,
// "The side port adds almost nothing").
import { RequestReader } from '../src/resp/request-reader.js';
import { ArgCursor } from '../src/sideports/args.js';
import { readVectorInput } from '../src/sideports/vector/input.js';
import { unitVectors } from './random-vectors.js';

/** The bench's vectors (bench/sideport-vector.ts's, bench/random-vectors.ts). */
const unitVector = unitVectors(384);
const vectors = Array.from({ length: 50 }, unitVector);
/** A VSIM request as a client sends it, each value printed by `print`. */
const frames = (print: (x: number) => string) =>
  vectors.map((v) => {
    const args = ['VSIM', 'bench', 'VALUES', '384', ...Array.from(v, print), 'COUNT', '10'];
    return Buffer.from(`*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join(''));
  });
const cases = [
  { name: '17 digits (a float32 printed as a double: String(x))', frames: frames(String) },
  { name: '6 decimals (x.toFixed(6))', frames: frames((x) => x.toFixed(6)) },
];
const bodies = vectors.map((v) => JSON.stringify({ vector: Array.from(v), topK: 10 }));

const reader = new RequestReader();
/** Each request arrives in a fresh buffer, as from a socket, and is read into arguments. */
function read(frame: Buffer): Buffer[] {
  const copy = Buffer.allocUnsafe(frame.length);
  frame.copy(copy);
  reader.push(copy);
  return (reader.read() as { args: Buffer[] }).args;
}

function usPer(task: (i: number) => unknown): number {
  for (let i = 0; i < 3000; i++) task(i);
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < 20_000; i++) task(i);
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / 20_000);
  }
  return rounds.sort((a, b) => a - b)[2];
}

for (const c of cases) {
  const readOnly = usPer((i) => read(c.frames[i % 50]));
  const both = usPer((i) => readVectorInput(new ArgCursor(read(c.frames[i % 50]), 2), true));
  console.log(`${c.name}: reader ${readOnly.toFixed(1)} µs, reader + values ${both.toFixed(1)} µs per VSIM`);
}
console.log(`REST body JSON.parse: ${usPer((i) => JSON.parse(bodies[i % 50])).toFixed(1)} µs per /query`);
