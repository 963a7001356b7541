// Fuzzing at scale (the test suite runs a sample: test/security/fuzz.test.ts).
//   1. The request reader alone: N random, mutated and valid frames pushed in random cuts; it never
//      throws and never returns anything after a protocol error.
//   2. A live proxy (with the real platform behind it) against a real redis-server: streams of valid
//      frames ending in one random or mutated frame go to both; the bytes that come back must be
//      identical, the proxy must close after the client's end (never hang), and keep serving.
//   3. Each side port (vector, queue: the same RESP server, src/server/): the same streams; every
//      connection must end with well-formed replies after the client's end, and the port keep serving
//      (there is no oracle for their commands; the proxy's bytes stand for the shared core).
//
// --runs N repeats both (run r with seed + r - 1) and prints the median and range of each figure; a
// difference or a hang stops the script with the seed that shows it.
//
//   npx tsx scripts/fuzz-proxy.ts --runs 3             # 1 000 000 frames each, three times
//   npx tsx scripts/fuzz-proxy.ts --frames 100000      # fewer
import fc from 'fast-check';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { RequestReader } from '../src/resp/request-reader.js';
import { anyFrame, exchangeAll, validFrame } from '../test/helpers/fuzz-frames.js';
import { startTestPlatform } from '../test/helpers/platform.js';
import { startTestProxy } from '../test/helpers/stack.js';
import { queuePort, vectorPort } from '../test/sideports/harness.js';
import { scanReply } from '../src/resp/reply-scanner.js';
import { repeatRuns, runsArgument } from './runs.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const FRAMES = arg('--frames', 1_000_000);
const PER_STREAM = arg('--per-stream', 200);
const CONCURRENCY = arg('--concurrency', 8);
/** Frames per side port (phase 3). */
const SIDE_FRAMES = arg('--side-frames', Math.round(FRAMES / 10));
/** Run r uses seed + r - 1, so repeated runs fuzz different frames and each can be replayed. */
const firstSeed = arg('--seed', Date.now() % 1_000_000);

function readerFuzz(seed: number): { frames: number; protocolErrors: number; ms: number } {
  const started = Date.now();
  let frames = 0;
  let protocolErrors = 0;
  let rng = seed;
  while (frames < FRAMES) {
    const batch = fc.sample(fc.array(anyFrame, { minLength: 50, maxLength: 50 }), { numRuns: 20, seed: rng++ });
    for (const list of batch) {
      const reader = new RequestReader({ maxBulkLength: 1024 * 1024 });
      reader.authenticated = list.length % 2 === 0;
      const bytes = Buffer.concat(list);
      let failed = false;
      for (let at = 0; at < bytes.length && !failed;) {
        const next = Math.min(bytes.length, at + 1 + ((at * 7919) % 97));
        reader.push(bytes.subarray(at, next));
        at = next;
        for (let r = reader.read(); r; r = reader.read()) {
          if (r.kind === 'protocol-error') {
            protocolErrors++;
            failed = true;
            if (reader.read() !== undefined) throw new Error('the reader returned a request after a protocol error');
            break;
          }
        }
      }
      frames += list.length;
    }
  }
  return { frames, protocolErrors, ms: Date.now() - started };
}

async function liveFuzz(seed: number): Promise<{ frames: number; streams: number; bytesCompared: number; ms: number; maxRssMb: number }> {
  const platform = await startTestPlatform();
  const oracle = await startEmbeddedRedis({ databases: 1, password: null });
  const proxy = await startTestProxy(platform);
  const started = Date.now();
  let frames = 0;
  let streams = 0;
  let bytesCompared = 0;
  let maxRss = 0;
  let rng = seed;
  const stream = fc.tuple(fc.array(validFrame, { minLength: PER_STREAM - 1, maxLength: PER_STREAM - 1 }), anyFrame);
  try {
    while (frames < FRAMES) {
      const batch = fc.sample(stream, { numRuns: CONCURRENCY, seed: rng++ });
      await Promise.all(
        batch.map(async ([valid, last]) => {
          const bytes = Buffer.concat([...valid, last]);
          const [p, r] = await Promise.all([exchangeAll(proxy.port, bytes, 20_000), exchangeAll(oracle.endpoint.port, bytes, 20_000)]);
          if (!p.closed) throw new Error(`the proxy did not close after the client's end (seed ${seed})`);
          if (!p.data.equals(r.data)) {
            throw new Error(
              `the proxy and redis-server differ (seed ${seed}):\n input ${JSON.stringify(bytes.toString('latin1').slice(-300))}\n proxy ${JSON.stringify(p.data.toString('latin1').slice(-300))}\n redis ${JSON.stringify(r.data.toString('latin1').slice(-300))}`,
            );
          }
          frames += valid.length + 1;
          streams++;
          bytesCompared += p.data.length;
        }),
      );
      maxRss = Math.max(maxRss, process.memoryUsage.rss());
      if (streams % (CONCURRENCY * 100) === 0)
        process.stderr.write(`  live: ${frames} frames, ${streams} streams, ${Math.round((Date.now() - started) / 1000)} s\n`);
    }
    const alive = await exchangeAll(proxy.port, Buffer.from('PING\r\n'));
    if (alive.data.toString() !== '+PONG\r\n') throw new Error('the proxy stopped answering');
  } finally {
    await proxy.stop();
    await oracle.stop();
    await platform.stop();
  }
  return { frames, streams, bytesCompared, ms: Date.now() - started, maxRssMb: Math.round(maxRss / 1024 / 1024) };
}

/** Phase 3: streams to a side port; it must answer well-formed replies, close after the client's end, and keep serving. */
async function sideportFuzz(seed: number, role: 'vector' | 'queue'): Promise<{ frames: number; streams: number; ms: number }> {
  const platform = await startTestPlatform();
  const url = role === 'vector' ? `${platform.url}/vector/dense` : `${platform.url}/queue`;
  const side = await (role === 'vector' ? vectorPort : queuePort)({ url, token: platform.token });
  const started = Date.now();
  let frames = 0;
  let streams = 0;
  let rng = seed;
  const stream = fc.tuple(fc.array(validFrame, { minLength: PER_STREAM - 1, maxLength: PER_STREAM - 1 }), anyFrame);
  try {
    while (frames < SIDE_FRAMES) {
      const batch = fc.sample(stream, { numRuns: CONCURRENCY, seed: rng++ });
      await Promise.all(
        batch.map(async ([valid, last]) => {
          const got = await exchangeAll(side.port, Buffer.concat([...valid, last]), 20_000);
          if (!got.closed) throw new Error(`the ${role} side port did not close after the client's end (seed ${seed})`);
          for (let at = 0; at < got.data.length;) {
            const next = scanReply(got.data, at);
            if (next <= at)
              throw new Error(
                `the ${role} side port sent a malformed reply (seed ${seed}): ${JSON.stringify(got.data.subarray(at, at + 200).toString('latin1'))}`,
              );
            at = next;
          }
          frames += valid.length + 1;
          streams++;
        }),
      );
    }
    const alive = await exchangeAll(side.port, Buffer.from('PING\r\n'));
    if (alive.data.toString() !== '+PONG\r\n') throw new Error(`the ${role} side port stopped answering`);
  } finally {
    await side.stop();
    await platform.stop();
  }
  return { frames, streams, ms: Date.now() - started };
}

await repeatRuns(`fuzzing: ${FRAMES} frames each, reader and live proxy`, runsArgument(), async (run) => {
  const seed = firstSeed + run - 1;
  const reader = readerFuzz(seed);
  console.log(`request reader: ${reader.frames} frames (${reader.protocolErrors} protocol errors), ${reader.ms} ms, seed ${seed}`);
  const live = await liveFuzz(seed);
  console.log(
    `live proxy vs redis-server: ${live.frames} frames in ${live.streams} streams, ${live.bytesCompared} reply bytes identical, ${live.ms} ms, max RSS (proxy + platform, one process) ${live.maxRssMb} MB, seed ${seed}`,
  );
  const sides = { vector: await sideportFuzz(seed, 'vector'), queue: await sideportFuzz(seed, 'queue') };
  for (const [role, r] of Object.entries(sides))
    console.log(`${role} side port: ${r.frames} frames in ${r.streams} streams, well-formed and closed, ${r.ms} ms, seed ${seed}`);
  return {
    'reader: frames': reader.frames,
    'reader: protocol errors (nothing read after any)': reader.protocolErrors,
    'reader: duration (ms)': reader.ms,
    'live: frames': live.frames,
    'live: streams, each closed after the client end': live.streams,
    'live: reply bytes identical to redis-server': live.bytesCompared,
    'live: duration (ms)': live.ms,
    'live: max RSS, proxy + platform (MB)': live.maxRssMb,
    'vector side port: frames': sides.vector.frames,
    'queue side port: frames': sides.queue.frames,
  };
});
