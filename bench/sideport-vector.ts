// Vector side port vs the REST API it calls: what the RESP layer costs for upserts (VADD) and queries (VSIM).
//
//   npx tsx bench/sideport-vector.ts              # 2 000 vectors of 384 dimensions, 300 queries, 3 runs
//   npx tsx bench/sideport-vector.ts --quick      # 500 vectors, 100 queries, 1 run
//
// The platform runs as its own process (`bin/respgate platform`, one dense 384-d COSINE index); the side
// port runs in this process in front of it, as in the dev stack. Each run empties the index, then:
//   upsert  REST: one record per /upsert call, 8 in flight | side port: VADD pipelined on one connection,
//           vectors as VALUES text and as FP32 blobs (consecutive VADDs of a connection become one /fetch,
//           to tell added from updated, and one /upsert per 1000)
//   query   latency, one at a time: REST /query topK 10 | VSIM … COUNT 10
//           throughput, 8 in flight: the same calls
// Medians over the runs are printed as a Markdown table (bench/README.md records them).
import type { ChildProcess } from 'node:child_process';
import { Redis as IORedis } from 'ioredis';
import { Pool } from 'undici';
import { createLogger } from '../src/logger.js';
import { startPlatformProcess } from './platform-process.js';
import { startVectorSideport } from '../src/sideports/vector-port.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const VECTORS = quick ? 500 : 2000;
const QUERIES = quick ? 100 : 300;
const RUNS = quick ? 1 : 3;
const DIM = 384;
const TOKEN = 'bench-token';
const IN_FLIGHT = 8;

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const vector = () => {
  const v = Array.from({ length: DIM }, () => rand() * 2 - 1);
  const n = Math.hypot(...v);
  return v.map((x) => Number((x / n).toFixed(6)));
};

function startPlatform(): Promise<{ child: ChildProcess; url: string }> {
  return startPlatformProcess(TOKEN, [{ name: 'bench', type: 'DENSE', dimension: DIM, similarityFunction: 'COSINE' }]);
}

/** Runs `count` tasks with at most `width` in flight; returns the elapsed ms. */
async function inFlight(count: number, width: number, task: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main(): Promise<void> {
  const platform = await startPlatform();
  const base = `${platform.url}/vector/bench`;
  const pool = new Pool(platform.url, { connections: IN_FLIGHT });
  const rest = async (op: string, body: unknown) => {
    const res = await pool.request({
      path: `/vector/bench/${op}`,
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    const json = (await res.body.json()) as { result?: unknown; error?: string };
    if (res.statusCode !== 200) throw new Error(`${op}: ${json.error}`);
    return json.result;
  };
  const port = await startVectorSideport({ host: '127.0.0.1', port: 0, url: base, token: TOKEN }, createLogger('silent'));
  const clients = Array.from({ length: IN_FLIGHT }, () => new IORedis({ port: port.port }));
  const data = Array.from({ length: VECTORS }, vector);
  const queries = Array.from({ length: QUERIES }, vector);
  const rows: Record<string, number[]> = {};
  const add = (k: string, v: number) => (rows[k] ??= []).push(v);

  for (let run = 0; run < RUNS; run++) {
    await rest('reset', {});
    const restUpsert = await inFlight(VECTORS, IN_FLIGHT, (i) => rest('upsert', [{ id: `r${i}`, vector: data[i] }]));
    add('upsert REST (1 record per call, 8 in flight), vectors/s', VECTORS / (restUpsert / 1000));
    const pipe = clients[0].pipeline();
    data.forEach((v, i) => pipe.call('VADD', 'side', 'VALUES', String(DIM), ...v.map(String), `s${i}`));
    const t0 = performance.now();
    const results = await pipe.exec();
    const sideUpsert = performance.now() - t0;
    if (results!.some(([err]) => err)) throw results!.find(([err]) => err)![0];
    add('upsert side port (VADD … VALUES 384 …, pipelined), vectors/s', VECTORS / (sideUpsert / 1000));
    const blobs = clients[1].pipeline();
    data.forEach((v, i) => blobs.call('VADD', 'blob', 'FP32', Buffer.from(new Float32Array(v).buffer), `b${i}`));
    const t1 = performance.now();
    const blobResults = await blobs.exec();
    const blobUpsert = performance.now() - t1;
    if (blobResults!.some(([err]) => err)) throw blobResults!.find(([err]) => err)![0];
    add('upsert side port (VADD … FP32 blob, pipelined), vectors/s', VECTORS / (blobUpsert / 1000));

    const restLat: number[] = [];
    const sideLat: number[] = [];
    for (const q of queries) {
      let t = performance.now();
      await rest('query', { vector: q, topK: 10 });
      restLat.push(performance.now() - t);
      t = performance.now();
      await clients[0].call('VSIM', 'side', 'VALUES', String(DIM), ...q.map(String), 'COUNT', '10');
      sideLat.push(performance.now() - t);
    }
    add('query REST latency p50, ms', pct(restLat, 0.5));
    add('query REST latency p99, ms', pct(restLat, 0.99));
    add('query side port (VSIM) latency p50, ms', pct(sideLat, 0.5));
    add('query side port (VSIM) latency p99, ms', pct(sideLat, 0.99));
    const restQ = await inFlight(QUERIES, IN_FLIGHT, (i) => rest('query', { vector: queries[i], topK: 10 }));
    add('query REST, 8 in flight, queries/s', QUERIES / (restQ / 1000));
    const sideQ = await inFlight(QUERIES, IN_FLIGHT, (i) =>
      clients[i % IN_FLIGHT].call('VSIM', 'side', 'VALUES', String(DIM), ...queries[i].map(String), 'COUNT', '10'),
    );
    add('query side port (VSIM), 8 clients, queries/s', QUERIES / (sideQ / 1000));
    process.stderr.write(`run ${run + 1}/${RUNS} done\n`);
  }

  process.stdout.write(
    `\n${VECTORS} vectors of ${DIM} dimensions, ${QUERIES} queries, median of ${RUNS} run(s)\n\n| measure | value |\n|---|---|\n`,
  );
  for (const [k, v] of Object.entries(rows)) process.stdout.write(`| ${k} | ${median(v).toFixed(k.includes('ms') ? 2 : 0)} |\n`);
  for (const c of clients) c.disconnect();
  await port.stop();
  await pool.close();
  platform.child.kill('SIGTERM');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
