// Vector side port vs the platform's REST API vs Redis 8 (issue 21's speed goal), on the same data.
//
//   npx tsx bench/sideport-vector.ts                         # 10 000 vectors of 384 dimensions, 2 000 queries, 3 runs
//   npx tsx bench/sideport-vector.ts --compare /tmp/vs-base  # the same, also against another checkout (interleaved)
//   npx tsx bench/sideport-vector.ts --redis8 /path/redis-server --ef 200,500   # and a Redis 8 at those EF values
//   npx tsx bench/sideport-vector.ts --quick                 # 2 000 vectors, 300 queries, 1 run
//   (--vectors N, --queries N, --runs N override the sizes; --profile DIR writes the servers' CPU profiles,
//   --only vsim|rest measures one kind of query; --node-flags "…" starts respgate with those node flags;
//   --gc-trace adds a table of the slow queries against the servers' GC pauses and event-loop stalls;
//   --latency-log FILE writes every query's start and latency)
//
// Each checkout runs as `respgate dev` (one process: the platform with one dense 384-d COSINE index and the
// vector side port in front of it, as a user runs it; the proxy idles). Per run and target:
//   VADD   10 000 FP32 VADDs into an empty key, pipelined 200 at a time, on 1 connection, then again on 8
//          (each its share); then, for the platform, the time until the graph holds every vector
//          (pendingVectorCount 0: Redis indexes before it answers VADD).
//   VSIM   2 000 `VSIM key VALUES 384 … COUNT 10` one at a time on 1 connection, then 8 connections in a
//          closed loop; p50/p99 of the latencies; recall@10 against exact brute force (cosine, float64).
//   REST   the same queries as /query (topK 10) on the same index and data, 1 and 8 connections.
//   CPU    the server process's CPU time per query (from /proc), to tell server cost from waiting.
// Targets take turns in every run (the order rotates), since the 2-core machine is shared. Medians of the
// runs are printed as a Markdown table; the runs' own figures go to stderr.
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis as IORedis } from 'ioredis';
import { Pool } from 'undici';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, log, median, startUntilReady, stop, sysUs, type Proc } from './process-stack.js';
import { unitVectors } from './random-vectors.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const VECTORS = Number(flag('--vectors') ?? (quick ? 2000 : 10_000));
const QUERIES = Number(flag('--queries') ?? (quick ? 300 : 2000));
const RUNS = Number(flag('--runs') ?? (quick ? 1 : 3));
const REDIS8 = flag('--redis8');
const EFS = (flag('--ef') ?? '500').split(',').map(Number);
const COMPARE = flag('--compare');
/** Writes a CPU profile of each respgate process into this directory (node --cpu-prof). */
const PROFILE = flag('--profile');
/** Only the side port's queries (vsim) or only REST's (rest): for profiles. */
const ONLY = flag('--only');
/** Extra node flags for the respgate processes (e.g. "--trace-gc" or "--import /path/probe.mjs"). */
const NODE_FLAGS = (flag('--node-flags') ?? '').split(' ').filter(Boolean);
/**
 * Where the slow queries' time went: the respgate processes record their garbage collections and
 * event-loop stalls (a probe loaded with --import), and each query pass is summed up at the end.
 */
const GC_TRACE = args.includes('--gc-trace');
/** Appends every query's start (epoch ms), latency and pass to this file (JSON lines), to find the slow ones. */
const LATENCY_LOG = flag('--latency-log');
const DIM = 384;
const K = 10;
const WIDE = 8;
const WINDOW = 200;
const TOKEN = 'bench-token';
const KEY = 'bench';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---- data: i.i.d. uniform unit vectors (the "random 384-dimensional vectors"), bench/random-vectors.ts
const unitVector = unitVectors(DIM);
const data = Array.from({ length: VECTORS }, unitVector);
const queries = Array.from({ length: QUERIES }, unitVector);
const blobs = data.map((v) => Buffer.from(v.buffer));
const vsimArgs = queries.map((q) => [KEY, 'VALUES', String(DIM), ...Array.from(q, String), 'COUNT', String(K)]);
const restBodies = queries.map((q) => JSON.stringify({ vector: Array.from(q), topK: K }));

/**
 * Exact top K of every query by cosine, in float64 (usearch's own f32 cosine is approximate: its top 10
 * agrees with the exact one only ~96 % of the time on these vectors, so it is no ground truth).
 */
function groundTruth(): Set<string>[] {
  const norms = data.map((v) => Math.hypot(...v));
  return queries.map((q) => {
    const best: { i: number; s: number }[] = [];
    for (let i = 0; i < VECTORS; i++) {
      const v = data[i];
      let dot = 0;
      for (let j = 0; j < DIM; j++) dot += q[j] * v[j];
      const s = dot / norms[i];
      if (best.length < K || s > best[K - 1].s) {
        best.push({ i, s });
        best.sort((a, b) => b.s - a.s);
        if (best.length > K) best.pop();
      }
    }
    return new Set(best.map((b) => String(b.i)));
  });
}

const recall = (truth: Set<string>[], answers: string[][]) =>
  answers.reduce((hits, a, i) => hits + a.filter((id) => truth[i].has(id)).length, 0) / (answers.length * K);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Runs `count` tasks with at most `width` in flight (task gets the index and its lane); returns elapsed ms. */
async function inFlight(count: number, width: number, task: (i: number, lane: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, lane) => {
      while (next < count) await task(next++, lane);
    }),
  );
  return performance.now() - start;
}

// ---- targets

interface Target {
  name: string;
  pid: number;
  port: number;
  /** Extra VSIM arguments (Redis: EF). */
  vsimExtra: string[];
  /** The platform's REST /query, when the target has one. */
  rest?: { one: Pool; wide: Pool; url: string };
  stop(): Promise<void>;
}

async function startDev(dir: string, name: string): Promise<Target> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'respgate-vbench-'));
  const config = path.join(tmp, 'indexes.json');
  writeFileSync(
    config,
    JSON.stringify({ defaults: false, indexes: [{ name: 'bench', type: 'DENSE', dimension: DIM, similarityFunction: 'COSINE' }] }),
  );
  // freePort releases each port before returning it, so two calls may give the same one.
  let ports: number[];
  do ports = [await freePort(), await freePort(), await freePort()];
  while (new Set(ports).size < 3);
  const [http, port, proxy] = ports;
  const proc: Proc = await startUntilReady(
    process.execPath,
    [
      ...(PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : []),
      ...NODE_FLAGS,
      ...(GC_TRACE ? ['--import', gcProbe()] : []),
      path.join(dir, 'bin/respgate'),
      'dev',
      '--ephemeral',
      '--http-port',
      String(http),
      '--port',
      String(proxy),
      '--vector-port',
      String(port),
      '--queue-port',
      'off',
      '--token',
      TOKEN,
      '--vector-config',
      config,
      '--vector-index',
      'bench',
      '--log-level',
      'warn',
    ],
    /Vector side port/,
  );
  const url = `http://127.0.0.1:${http}`;
  log(`${name}: respgate dev (pid ${proc.pid}) from ${dir}: side port :${port}, platform ${url}`);
  const one = new Pool(url, { connections: 1 });
  const wide = new Pool(url, { connections: WIDE });
  return {
    name,
    pid: proc.pid,
    port,
    vsimExtra: [],
    rest: { one, wide, url },
    stop: async () => {
      await Promise.all([one.close(), wide.close()]);
      await stop(proc);
    },
  };
}

async function startRedis8(bin: string): Promise<Omit<Target, 'name' | 'vsimExtra'>> {
  const port = await freePort();
  const proc = await startUntilReady(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    /Ready to accept/,
  );
  log(`Redis 8: ${bin} (pid ${proc.pid}) on :${port}`);
  return { pid: proc.pid, port, stop: () => stop(proc) };
}

async function rest(pool: Pool, body: string): Promise<string[]> {
  const res = await pool.request({
    path: `/vector/bench/query/${KEY}`,
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
  const json = (await res.body.json()) as { result?: { id: string }[]; error?: string };
  if (res.statusCode !== 200) throw new Error(`query: ${json.error}`);
  return json.result!.map((r) => r.id);
}

async function vadd(clients: IORedis[]): Promise<number> {
  await clients[0].del(KEY);
  const share = Math.ceil(VECTORS / clients.length);
  const start = performance.now();
  await Promise.all(
    clients.map(async (c, lane) => {
      const end = Math.min(VECTORS, (lane + 1) * share);
      for (let from = lane * share; from < end; from += WINDOW) {
        const batch = [];
        for (let i = from; i < Math.min(end, from + WINDOW); i++) batch.push(c.call('VADD', KEY, 'FP32', blobs[i], String(i)));
        await Promise.all(batch);
      }
    }),
  );
  return VECTORS / ((performance.now() - start) / 1000);
}

/** Waits until the platform's graph holds every vector; returns the seconds waited. */
async function indexed(t: Target): Promise<number> {
  const start = performance.now();
  for (;;) {
    const res = await t.rest!.one.request({ path: '/vector/bench/info', method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } });
    const info = (await res.body.json()) as { result: { pendingVectorCount: number; vectorCount: number } };
    if (info.result.vectorCount !== VECTORS) throw new Error(`${t.name}: ${info.result.vectorCount} vectors, expected ${VECTORS}`);
    if (info.result.pendingVectorCount === 0) return (performance.now() - start) / 1000;
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Row = Record<string, number>;

/** One pass of the queries: 1 connection (latencies, recall) then 8; server CPU per query. */
async function queryPass(
  label: string,
  pid: number,
  ask: (i: number, lane: number, width: number) => Promise<string[]>,
  truth: Set<string>[],
  row: Row,
): Promise<void> {
  const lat: number[] = [];
  const answers: string[][] = [];
  const starts: number[] = [];
  let cpu = cpuUs(pid);
  let own = process.cpuUsage();
  const oneMs = await inFlight(QUERIES, 1, async (i) => {
    const t = performance.now();
    answers[i] = await ask(i, 0, 1);
    lat.push(performance.now() - t);
    starts.push(t);
  });
  logLatencies(`${label} 1`, starts, lat);
  passes.push({ label: `${label} 1 conn`, pid, starts, lat });
  row[`${label} 1 conn, q/s`] = QUERIES / (oneMs / 1000);
  row[`${label} 1 conn p50, ms`] = pct(lat, 0.5);
  row[`${label} 1 conn p99, ms`] = pct(lat, 0.99);
  row[`${label} server CPU per query (1 conn), µs`] = (cpuUs(pid) - cpu) / QUERIES;
  row[`${label} bench client CPU per query (1 conn), µs`] = clientUs(own) / QUERIES;
  row[`${label} recall@10`] = recall(truth, answers);
  const wideLat: number[] = [];
  const wideStarts: number[] = [];
  cpu = cpuUs(pid);
  const main = mainThreadUs(pid);
  const sys = sysUs(pid);
  own = process.cpuUsage();
  const wideMs = await inFlight(QUERIES, WIDE, async (i, lane) => {
    const t = performance.now();
    await ask(i, lane, WIDE);
    wideLat.push(performance.now() - t);
    wideStarts.push(t);
  });
  logLatencies(`${label} 8`, wideStarts, wideLat);
  passes.push({ label: `${label} 8 conns`, pid, starts: wideStarts, lat: wideLat });
  row[`${label} 8 conns, q/s`] = QUERIES / (wideMs / 1000);
  row[`${label} 8 conns p50, ms`] = pct(wideLat, 0.5);
  row[`${label} 8 conns p99, ms`] = pct(wideLat, 0.99);
  row[`${label} server CPU per query (8 conns), µs`] = (cpuUs(pid) - cpu) / QUERIES;
  row[`${label} bench client CPU per query (8 conns), µs`] = clientUs(own) / QUERIES;
  // Where the server's CPU went: its JavaScript thread (the rest: GC helpers, libuv's pool) and the kernel.
  row[`${label} server main-thread CPU per query (8 conns), µs`] = (mainThreadUs(pid) - main) / QUERIES;
  row[`${label} server system CPU per query (8 conns), µs`] = (sysUs(pid) - sys) / QUERIES;
}

/** CPU time (user + system) of a process's main thread, µs: /proc/<pid>/task/<pid>/stat. */
function mainThreadUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100);
}

/** This (client) process's CPU time since `since`, µs: what sending and reading the queries cost here. */
function clientUs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return d.user + d.system;
}

/** --latency-log: one JSON line per query, its start as epoch ms (comparable with the server's own clock). */
function logLatencies(pass: string, starts: number[], lat: number[]): void {
  if (!LATENCY_LOG) return;
  const lines = starts.map((t, i) => JSON.stringify({ pass, t: performance.timeOrigin + t, ms: lat[i] }));
  appendFileSync(LATENCY_LOG, lines.join('\n') + '\n');
}

// ---- --gc-trace: the servers' GC pauses and event-loop stalls against the slow queries

interface Pass {
  label: string;
  pid: number;
  starts: number[];
  lat: number[];
}
const passes: Pass[] = [];
const traceDir = GC_TRACE ? mkdtempSync(path.join(tmpdir(), 'respgate-gctrace-')) : '';

/** The probe: every GC (perf_hooks) and every gap of over 3 ms in a 1 ms timer, as epoch ms, written at exit. */
function gcProbe(): string {
  const file = path.join(traceDir, 'probe.mjs');
  writeFileSync(
    file,
    `import { PerformanceObserver, performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
const o = performance.timeOrigin, gcs = [], stalls = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push([o + e.startTime, e.duration, e.detail?.kind]); }).observe({ entryTypes: ['gc'] });
let last = performance.now();
setInterval(() => { const now = performance.now(); if (now - last > 3) stalls.push([o + last, now - last]); last = now; }, 1).unref();
process.on('exit', () => writeFileSync(${JSON.stringify(traceDir)} + '/trace-' + process.pid + '.json', JSON.stringify({ gcs, stalls })));
`,
  );
  return file;
}

/** Per pass: scavenges and full GCs during it, their pause, and how many slow queries (> 3× p50) overlap a GC or a stall. */
function printGcTrace(): void {
  let out =
    '\n| pass (server pid) | p50 ms | p99 ms | queries > 3× p50 | of them during a GC | during a stall | scavenges | full GCs | GC pause ms |\n|---|---|---|---|---|---|---|---|---|\n';
  for (const p of passes) {
    let trace: { gcs: [number, number, number][]; stalls: [number, number][] };
    try {
      trace = JSON.parse(readFileSync(path.join(traceDir, `trace-${p.pid}.json`), 'utf8'));
    } catch {
      continue; // Redis
    }
    const at = p.starts.map((t) => performance.timeOrigin + t);
    const from = Math.min(...at);
    const to = Math.max(...at.map((t, i) => t + p.lat[i]));
    const gcs = trace.gcs.filter(([t]) => t >= from && t <= to);
    const p50 = pct(p.lat, 0.5);
    const slow = at.map((t, i) => [t, t + p.lat[i]] as const).filter(([a, b]) => b - a > 3 * p50);
    const overlaps = (spans: [number, number, ...unknown[]][]) =>
      slow.filter(([a, b]) => spans.some(([t, ms]) => t < b && t + ms > a)).length;
    const scavenges = gcs.filter(([, , kind]) => kind === 1).length;
    const full = gcs.filter(([, , kind]) => kind === 4).length;
    const pause = gcs.reduce((sum, [, ms]) => sum + ms, 0);
    out += `| ${p.label} (${p.pid}) | ${p50.toFixed(2)} | ${pct(p.lat, 0.99).toFixed(2)} | ${slow.length} | ${overlaps(gcs)} | ${overlaps(trace.stalls)} | ${scavenges} | ${full} | ${pause.toFixed(0)} |\n`;
  }
  process.stdout.write(out);
}

const names = (reply: unknown) => (reply as Buffer[]).map(String);

async function measureDev(t: Target, truth: Set<string>[]): Promise<Row> {
  const row: Row = {};
  const clients = Array.from({ length: WIDE }, () => new IORedis({ port: t.port }));
  try {
    row['VADD FP32 1 conn, vectors/s'] = await vadd(clients.slice(0, 1));
    row['VADD FP32 8 conns, vectors/s'] = await vadd(clients);
    row['graph complete after VADD, s'] = await indexed(t);
    if (ONLY !== 'rest')
      await queryPass('VSIM', t.pid, (i, lane) => clients[lane].callBuffer('VSIM', ...vsimArgs[i]).then(names), truth, row);
    if (ONLY !== 'vsim')
      await queryPass('REST /query', t.pid, (i, _lane, width) => rest(width === 1 ? t.rest!.one : t.rest!.wide, restBodies[i]), truth, row);
  } finally {
    for (const c of clients) c.disconnect();
  }
  row['VSIM / REST, 1 conn'] = row['VSIM 1 conn, q/s'] / row['REST /query 1 conn, q/s'];
  row['VSIM / REST, 8 conns'] = row['VSIM 8 conns, q/s'] / row['REST /query 8 conns, q/s'];
  return row;
}

async function measureRedis(t: Omit<Target, 'name' | 'vsimExtra'>, truth: Set<string>[]): Promise<Record<string, Row>> {
  const clients = Array.from({ length: WIDE }, () => new IORedis({ port: t.port }));
  const out: Record<string, Row> = {};
  try {
    const adds: Row = {};
    adds['VADD FP32 1 conn, vectors/s'] = await vadd(clients.slice(0, 1));
    adds['VADD FP32 8 conns, vectors/s'] = await vadd(clients);
    for (const ef of EFS) {
      const row: Row = { ...adds };
      await queryPass(
        'VSIM',
        t.pid,
        (i, lane) => clients[lane].callBuffer('VSIM', ...vsimArgs[i], 'EF', String(ef)).then(names),
        truth,
        row,
      );
      out[`Redis 8 EF ${ef}`] = row;
    }
  } finally {
    for (const c of clients) c.disconnect();
  }
  return out;
}

async function main(): Promise<void> {
  log(
    `${VECTORS} vectors × ${DIM}, ${QUERIES} queries, ${RUNS} run(s); load average ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const truth = groundTruth();
  const targets: Target[] = [await startDev(root, 'this build')];
  if (COMPARE) targets.push(await startDev(path.resolve(COMPARE), `--compare ${COMPARE}`));
  const redis = REDIS8 ? await startRedis8(REDIS8) : undefined;
  const results: Record<string, Row[]> = {};
  try {
    for (let run = 0; run < RUNS; run++) {
      const order = [...targets.keys()].map((k) => targets[(k + run) % targets.length]);
      for (const t of order) {
        const row = await measureDev(t, truth);
        (results[t.name] ??= []).push(row);
        log(`run ${run + 1} ${t.name}: ${JSON.stringify(row, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))}`);
      }
      if (redis) {
        for (const [name, row] of Object.entries(await measureRedis(redis, truth))) {
          (results[name] ??= []).push(row);
          log(`run ${run + 1} ${name}: ${JSON.stringify(row, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))}`);
        }
      }
    }
  } finally {
    for (const t of targets) await t.stop();
    await redis?.stop();
  }
  printTable(results);
  if (GC_TRACE) printGcTrace();
  log(
    `load average at the end ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
}

function printTable(results: Record<string, Row[]>): void {
  const cols = Object.keys(results);
  const measures = [...new Set(cols.flatMap((c) => results[c].flatMap((r) => Object.keys(r))))];
  const digits = (m: string) => (m.includes('recall') || m.includes(' / ') ? 3 : m.endsWith('ms') || m.endsWith(', s') ? 2 : 0);
  let out = `\n${VECTORS} vectors of ${DIM} dimensions, ${QUERIES} queries, median of ${RUNS} run(s)\n\n`;
  out += `| measure | ${cols.join(' | ')} |\n|---|${cols.map(() => '---').join('|')}|\n`;
  for (const m of measures) {
    const cells = cols.map((c) => {
      const xs = results[c].map((r) => r[m]).filter((x) => x !== undefined);
      return xs.length ? median(xs).toFixed(digits(m)) : '';
    });
    out += `| ${m} | ${cells.join(' | ')} |\n`;
  }
  process.stdout.write(out);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
