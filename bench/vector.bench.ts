// Vector area: upsert throughput and query latency (p50/p99) for 100 000 vectors of 384 dimensions,
// exact search vs HNSW, with and without a metadata filter, and the recall@10 of HNSW against exact.
//
//   npx tsx bench/vector.bench.ts              # 100 000 vectors, 500 queries per case, 3 runs
//   npx tsx bench/vector.bench.ts --quick      # 10 000 vectors, 100 queries, 1 run (smoke test)
//   npx tsx bench/vector.bench.ts --vectors 50000 --queries 200 --runs 3
//   npx tsx bench/vector.bench.ts --data uniform   # i.i.d. uniform vectors instead of clustered ones
//   npx tsx bench/vector.bench.ts --upsert-only    # only the upsert throughput (exact index, RUNS times)
//
// Data: by default each vector is unit(c + 0.15·u) for one of 1 000 random unit centres c and u uniform
// in [-1, 1]^384, so vectors have near neighbours as sentence embeddings do. I.i.d. uniform vectors in
// 384 dimensions have none (all distances alike): HNSW recall on them is low at any usable speed.
//
// The platform runs as its own process (`bin/respgate platform`) with two indexes: `bench-exact`
// (exact search only) and `bench-hnsw` (HNSW past 10 000 vectors). A Transport sends the operations;
// REST is the one here, and another transport (the side port's RESP commands) can be added to TRANSPORTS.
import type { ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { startPlatformProcess } from './platform-process.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const VECTORS = flag('--vectors', quick ? 10_000 : 100_000);
const QUERIES = flag('--queries', quick ? 100 : 500);
const RUNS = flag('--runs', quick ? 1 : 3);
const DIM = 384;
const UNIFORM = args.includes('--data') && args[args.indexOf('--data') + 1] === 'uniform';
const CENTRES = 1000;
const UPSERT_ONLY = args.includes('--upsert-only');
const BATCH = 1000;
const IN_FLIGHT = 2;
const TOKEN = 'bench-token';

function log(msg: string): void {
  process.stderr.write(msg + '\n');
}

/** What a benchmark needs from a way of reaching the vector area. */
interface Transport {
  name: string;
  /** Upserts one batch of already serialised records into an index. */
  upsert(index: string, batchJson: string): Promise<void>;
  /** One query; returns the ids, best first. */
  query(index: string, body: { vector: number[]; topK: number; filter?: string }): Promise<string[]>;
  pending(index: string): Promise<number>;
  reset(index: string): Promise<void>;
  close(): Promise<void>;
}

class RestTransport implements Transport {
  readonly name = 'REST';
  private readonly pool: Pool;
  constructor(baseUrl: string) {
    this.pool = new Pool(baseUrl, { connections: 8, pipelining: 1 });
  }

  private async call(pathname: string, body: string): Promise<any> {
    const res = await this.pool.request({
      path: pathname,
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    const json = (await res.body.json()) as { result?: unknown; error?: string };
    if (res.statusCode !== 200) throw new Error(`${pathname}: ${res.statusCode} ${json.error}`);
    return json.result;
  }

  async upsert(index: string, batchJson: string): Promise<void> {
    await this.call(`/vector/${index}/upsert`, batchJson);
  }
  async query(index: string, body: object): Promise<string[]> {
    return ((await this.call(`/vector/${index}/query`, JSON.stringify(body))) as Array<{ id: string }>).map((r) => r.id);
  }
  async pending(index: string): Promise<number> {
    return ((await this.call(`/vector/${index}/info`, '')) as { pendingVectorCount: number }).pendingVectorCount;
  }
  async reset(index: string): Promise<void> {
    await this.call(`/vector/${index}/reset`, '');
  }
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unit(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => Number((x / n).toFixed(6)));
}

function sampler(rand: () => number): () => number[] {
  const centres = Array.from({ length: CENTRES }, () => unit(Array.from({ length: DIM }, () => rand() * 2 - 1)));
  return () => {
    const u = Array.from({ length: DIM }, () => rand() * 2 - 1);
    if (UNIFORM) return unit(u);
    const c = centres[Math.floor(rand() * CENTRES)];
    return unit(c.map((x, i) => x + 0.15 * u[i]));
  };
}

function startPlatform(): Promise<{ child: ChildProcess; url: string }> {
  return startPlatformProcess(
    TOKEN,
    [
      { name: 'bench-exact', type: 'DENSE', dimension: DIM, similarityFunction: 'COSINE', hnswThreshold: 1e12 },
      { name: 'bench-hnsw', type: 'DENSE', dimension: DIM, similarityFunction: 'COSINE' },
    ],
    ['--max-request-size', '64mb'],
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function upsertAll(t: Transport, index: string, batches: string[]): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches.length) await t.upsert(index, batches[next++]);
    }),
  );
  return VECTORS / ((performance.now() - start) / 1000);
}

async function waitIndexed(t: Transport, index: string): Promise<number> {
  const start = performance.now();
  while ((await t.pending(index)) > 0) await new Promise((r) => setTimeout(r, 200)); // a bench may poll
  return (performance.now() - start) / 1000;
}

async function latencies(
  t: Transport,
  index: string,
  queries: number[][],
  filter?: string,
): Promise<{ p50: number; p99: number; results: string[][] }> {
  const times: number[] = [];
  const results: string[][] = [];
  for (const vector of queries) {
    const start = performance.now();
    results.push(await t.query(index, { vector, topK: 10, ...(filter ? { filter } : {}) }));
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), results };
}

function recall(approx: string[][], exact: string[][]): number {
  let hits = 0;
  let total = 0;
  approx.forEach((a, i) => {
    const set = new Set(a);
    hits += exact[i].filter((id) => set.has(id)).length;
    total += exact[i].length;
  });
  return hits / total;
}

const TRANSPORTS: Array<(url: string) => Transport> = [(url) => new RestTransport(url)];

async function main(): Promise<void> {
  log(`generating ${VECTORS} vectors of ${DIM} dimensions…`);
  const randomVector = sampler(rng(42));
  const batches: string[] = [];
  for (let b = 0; b < VECTORS; b += BATCH) {
    const items = [];
    for (let i = b; i < Math.min(VECTORS, b + BATCH); i++)
      items.push({ id: `v${i}`, vector: randomVector(), metadata: { bucket: i % 10 } });
    batches.push(JSON.stringify(items));
  }
  const queries = Array.from({ length: QUERIES }, () => randomVector());
  const { child, url } = await startPlatform();
  try {
    for (const make of TRANSPORTS) {
      const t = make(url);
      const rows: string[] = [];
      // Upsert throughput: the exact index RUNS times (reset between), the HNSW index once (its graph
      // is built in the background after the upserts are acknowledged, as the service's pendingVectorCount shows).
      const exactRates: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        if (r > 0) await t.reset('bench-exact');
        exactRates.push(await upsertAll(t, 'bench-exact', batches));
        log(`  upsert exact run ${r + 1}: ${exactRates.at(-1)!.toFixed(0)} vectors/s`);
      }
      if (UPSERT_ONLY) {
        process.stdout.write(
          `\n${t.name}: upsert of ${VECTORS} vectors × ${DIM} dimensions, runs ${exactRates.map((r) => r.toFixed(0)).join(', ')} vectors/s, median ${median(exactRates).toFixed(0)}\n`,
        );
        await t.close();
        continue;
      }
      const hnswRate = await upsertAll(t, 'bench-hnsw', batches);
      log(`  upsert hnsw: ${hnswRate.toFixed(0)} vectors/s; building the graph…`);
      const buildSeconds = await waitIndexed(t, 'bench-hnsw');
      log(`  graph built in ${buildSeconds.toFixed(1)} s`);

      const cases: Array<[string, string, string | undefined]> = [
        ['exact', 'bench-exact', undefined],
        ['HNSW', 'bench-hnsw', undefined],
        ['exact, filter bucket = 3', 'bench-exact', 'bucket = 3'],
        ['HNSW, filter bucket = 3', 'bench-hnsw', 'bucket = 3'],
      ];
      const summary = new Map<string, { p50: number[]; p99: number[]; results?: string[][] }>();
      for (let r = 0; r < RUNS; r++) {
        for (const [name, index, filter] of cases) {
          const m = await latencies(t, index, queries, filter);
          const s = summary.get(name) ?? { p50: [], p99: [] };
          s.p50.push(m.p50);
          s.p99.push(m.p99);
          s.results = m.results;
          summary.set(name, s);
          log(`  ${name} run ${r + 1}: p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms`);
        }
      }
      const recallPlain = recall(summary.get('HNSW')!.results!, summary.get('exact')!.results!);
      const recallFiltered = recall(summary.get('HNSW, filter bucket = 3')!.results!, summary.get('exact, filter bucket = 3')!.results!);
      rows.push(`| upsert, exact index (batches of ${BATCH}, ${IN_FLIGHT} in flight) | ${median(exactRates).toFixed(0)} vectors/s | |`);
      rows.push(
        `| upsert, HNSW index (acknowledged; graph built after) | ${hnswRate.toFixed(0)} vectors/s | graph of ${VECTORS} built in ${buildSeconds.toFixed(1)} s |`,
      );
      for (const [name] of cases) {
        const s = summary.get(name)!;
        const r =
          name === 'HNSW'
            ? `recall@10 ${recallPlain.toFixed(3)}`
            : name.startsWith('HNSW,')
              ? `recall@10 ${recallFiltered.toFixed(3)}`
              : '';
        rows.push(`| query topK 10, ${name} | p50 ${median(s.p50).toFixed(2)} ms, p99 ${median(s.p99).toFixed(2)} ms | ${r} |`);
      }
      process.stdout.write(
        `\n${t.name}: ${VECTORS} vectors × ${DIM} dimensions, ${QUERIES} queries per case, ${UNIFORM ? 'uniform' : 'clustered'} data, median of ${RUNS} run(s)\n\n` +
          '| measure | result | notes |\n|---|---|---|\n' +
          rows.join('\n') +
          '\n',
      );
      await t.close();
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

await main();
