// Micro-benchmark of the Area B client (src/upstream/kv-client.ts): commands per second for
// batches of 1, 16 and 256 GET/SET through the client to a local platform, one call at a time and
// 16 calls in flight; and the cost of the JSON request body alone, hand-written from the argument
// bytes (what the client does) against JSON.stringify of `buf.toString()` per argument.
//
// Run: npx tsx bench/upstream-pipeline.bench.ts [seconds per case, default 2]
import { isUtf8 } from 'node:buffer';
import { generateToken, DEFAULTS } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startPlatform } from '../src/platform/platform.js';
import { KvClient } from '../src/upstream/kv-client.js';
import { measureCommand, writeCommands, type Escapes } from '../src/upstream/pipeline-body.js';

const seconds = Number(process.argv[2] ?? 2);
const BATCHES = [1, 16, 256];

function batch(size: number, offset: number, value: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i < size; i++) {
    const key = Buffer.from(`bench:key:${(offset + i) % 1000}`);
    out.push(i % 2 === 0 ? [Buffer.from('SET'), key, value] : [Buffer.from('GET'), key]);
  }
  return out;
}

function rate(n: number, ns: number): string {
  const perSecond = n / (ns / 1e9);
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)} M` : `${Math.round(perSecond).toLocaleString('en-US')}`;
}

async function throughput(
  client: KvClient,
  size: number,
  inFlight: number,
  value: Buffer,
): Promise<{ commands: number; calls: number; ns: number }> {
  const commands = batch(size, 0, value);
  // warm-up: connections open, JIT warm
  for (let i = 0; i < 50; i++) await client.pipeline(commands);
  let done = 0;
  let calls = 0;
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      const replies = await client.pipeline(commands);
      if (replies.length !== size || replies[0][0] === 0x2d) throw new Error(`unexpected reply ${replies[0]}`);
      done += size;
      calls++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { commands: done, calls, ns: Number(process.hrtime.bigint() - start) };
}

function stringifyBody(commands: Buffer[][]): Buffer {
  const rows = new Array<string[]>(commands.length);
  for (let i = 0; i < commands.length; i++) {
    const c = commands[i];
    const row = new Array<string>(c.length);
    for (let j = 0; j < c.length; j++) {
      if (!isUtf8(c[j])) throw new Error('binary');
      row[j] = c[j].toString('utf8');
    }
    rows[i] = row;
  }
  return Buffer.from(JSON.stringify(rows));
}

function handBody(commands: Buffer[][]): Buffer {
  const sizes = new Array<number>(commands.length);
  const escapes: { map: Escapes } = { map: undefined };
  for (let i = 0; i < commands.length; i++) sizes[i] = measureCommand(commands[i], escapes);
  return writeCommands(commands, sizes, escapes.map, 0, commands.length);
}

function encoding(name: string, f: (c: Buffer[][]) => Buffer, commands: Buffer[][]): string {
  const iterations = Math.max(200, Math.floor(3_000_000 / commands.length));
  for (let i = 0; i < 200; i++) f(commands);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) f(commands);
  return `${name} ${rate(iterations * commands.length, Number(process.hrtime.bigint() - start))} commands/s`;
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${seconds} s per case`);
  console.log('\nJSON body only (no I/O):');
  for (const [label, value] of [
    ['16 B values', Buffer.alloc(16, 'v')],
    ['1 KB values', Buffer.alloc(1024, 'v')],
    ['100 B non-ASCII', Buffer.from('é✓'.repeat(20))],
  ] as const) {
    for (const size of BATCHES) {
      const commands = batch(size, 0, value);
      if (handBody(commands).toString() !== stringifyBody(commands).toString()) throw new Error('bodies differ');
      console.log(
        `  ${label.padEnd(16)} batch ${String(size).padStart(3)}: ${encoding('hand-written', handBody, commands).padEnd(34)} ${encoding('JSON.stringify', stringifyBody, commands)}`,
      );
    }
  }

  const platform = await startPlatform(
    {
      host: '127.0.0.1',
      httpPort: 0,
      token: generateToken(),
      readonlyToken: generateToken(),
      redisServerBinary: DEFAULTS.redisServerBinary,
      maxRequestSize: DEFAULTS.maxRequestSize,
      dailyRequestLimit: 0,
      logLevel: 'silent',
    },
    createLogger('silent'),
  );
  const client = new KvClient({ url: platform.url, token: platform.token, timeoutMs: 5000, connections: 16, maxRequestBytes: 1_000_000 });
  try {
    console.log('\nThrough KvClient to the local platform (GET/SET alternating, 16-byte values):');
    for (const inFlight of [1, 16]) {
      for (const size of BATCHES) {
        const r = await throughput(client, size, inFlight, Buffer.alloc(16, 'v'));
        console.log(
          `  ${String(inFlight).padStart(2)} in flight, batch ${String(size).padStart(3)}: ${rate(r.commands, r.ns).padStart(9)} commands/s  (${rate(r.calls, r.ns)} HTTP calls/s, ${(r.ns / 1e3 / (r.calls / inFlight)).toFixed(0)} µs per call)`,
        );
      }
    }
  } finally {
    await client.close();
    await platform.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
