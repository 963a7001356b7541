// The local queue (Area D) end to end: publish over HTTP → BullMQ → signed delivery to a local
// destination. Measures deliveries per second at full load, and publish-to-delivery latency
// (p50/p99) both at full load and at a steady 500 messages/s; for direct URLs and for a fan-out
// to a URL group of 10 endpoints. Medians of several runs.
//
//   npx tsx bench/queue.bench.ts            # 20 000 deliveries per run, 3 runs per case
//   npx tsx bench/queue.bench.ts --quick    # 2 000 deliveries, 1 run (a smoke test of the script)
//
// The platform runs as its own process (`bin/respgate platform`), as a user runs it; the
// destination and the publishers share this process (so both clocks are the same).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { freePort } from '../src/platform/redis/embedded-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const DELIVERIES = quick ? 2000 : 20_000;
const RUNS = quick ? 1 : 3;
const PUBLISHERS = 64;
const STEADY_RATE = 500;
const STEADY_SECONDS = quick ? 2 : 5;
const TOKEN = 'bench-token';

const log = (msg: string) => process.stderr.write(msg + '\n');

// --- destination: records when each message arrives
const arrivals = new Map<string, number>();
let expected = 0;
let onAllArrived: (() => void) | undefined;
const destination = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    res.writeHead(200, { 'Content-Length': '2' });
    res.end('ok');
    arrivals.set(`${Buffer.concat(chunks).toString()}|${req.url}`, at);
    if (arrivals.size === expected) onAllArrived?.();
  });
});
destination.keepAliveTimeout = 60_000;

/** CPU time (ms) a process has used, from /proc (Linux): user + system. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Result {
  deliveriesPerSecond: number;
  p50: number;
  p99: number;
  platformCpuUs: number;
  redisCpuUs: number;
}

let platformPid = 0;
const redisCpu = () => children(platformPid).reduce((sum, pid) => sum + cpuMs(pid), 0);

/** Publishes `count` messages (each fanning out to `fanOut` endpoints), `rate` per second or as fast as possible. */
async function run(pool: Pool, target: string, count: number, fanOut: number, rate?: number): Promise<Result> {
  arrivals.clear();
  expected = count * fanOut;
  const sentAt = new Map<string, number>();
  const all = new Promise<void>((resolve) => {
    onAllArrived = resolve;
  });
  const cpu0 = [cpuMs(platformPid), redisCpu()];
  const started = performance.now();
  let next = 0;
  const publisher = async () => {
    while (next < count) {
      const i = next++;
      if (rate) {
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const body = `m${i}`;
      sentAt.set(body, performance.now());
      const res = await pool.request({
        method: 'POST',
        path: `/queue/v2/publish/${target}`,
        headers: { authorization: `Bearer ${TOKEN}` },
        body,
      });
      await res.body.text();
      if (res.statusCode !== 201) throw new Error(`publish answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: rate ? 32 : PUBLISHERS }, publisher));
  const timeout = setTimeout(() => {
    log(`  only ${arrivals.size} of ${expected} deliveries arrived`);
    process.exit(1);
  }, 120_000);
  await all;
  clearTimeout(timeout);
  const latencies: number[] = [];
  let last = 0;
  for (const [key, at] of arrivals) {
    latencies.push(at - sentAt.get(key.slice(0, key.indexOf('|')))!);
    last = Math.max(last, at);
  }
  latencies.sort((a, b) => a - b);
  return {
    deliveriesPerSecond: expected / ((last - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    platformCpuUs: ((cpuMs(platformPid) - cpu0[0]) * 1000) / expected,
    redisCpuUs: ((redisCpu() - cpu0[1]) * 1000) / expected,
  };
}

async function main(): Promise<void> {
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  const destUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
  const port = await freePort();
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const platform = spawn(
    process.execPath,
    [
      ...profile,
      path.join(root, 'bin/respgate'),
      'platform',
      '--http-port',
      String(port),
      '--token',
      TOKEN,
      '--log-level',
      'warn',
      ...(process.env.BENCH_QUEUE_CONCURRENCY ? ['--queue-concurrency', process.env.BENCH_QUEUE_CONCURRENCY] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    platform.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready')) resolve();
    });
    platform.once('exit', (code) => reject(new Error(`platform exited with ${code}`)));
  });
  platformPid = platform.pid!;
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: PUBLISHERS, keepAliveTimeout: 60_000 });
  try {
    const endpoints = Array.from({ length: 10 }, (_, i) => ({ url: `${destUrl}/e${i}` }));
    const created = await fetch(`${base}/queue/v2/topics/bench-ten/endpoints`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ endpoints }),
    });
    if (created.status !== 200) throw new Error(`creating the URL group answered ${created.status}`);
    log(`warm-up…`);
    await run(pool, `${destUrl}/warm`, 1000, 1);

    const cases: Array<[string, string, number, number | undefined]> = [
      ['direct URL, full load', `${destUrl}/d`, DELIVERIES, undefined],
      [`direct URL, steady ${STEADY_RATE}/s`, `${destUrl}/s`, STEADY_RATE * STEADY_SECONDS, STEADY_RATE],
      ['URL group of 10, full load', 'bench-ten', DELIVERIES / 10, undefined],
      [`URL group of 10, steady ${STEADY_RATE / 10} publishes/s`, 'bench-ten', (STEADY_RATE / 10) * STEADY_SECONDS, STEADY_RATE / 10],
    ];
    const rows: string[] = [];
    // BENCH_CASES=0,2 runs only those cases (by index), e.g. to profile one of them.
    const only = process.env.BENCH_CASES?.split(',').map(Number);
    for (const [index, [name, target, count, rate]] of cases.entries()) {
      if (only && !only.includes(index)) continue;
      const fanOut = target === 'bench-ten' ? 10 : 1;
      const results: Result[] = [];
      for (let r = 0; r < RUNS; r++) {
        const res = await run(pool, target, count, fanOut, rate);
        log(
          `  ${name} run ${r + 1}: ${res.deliveriesPerSecond.toFixed(0)} deliveries/s, p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms, CPU per delivery: platform ${res.platformCpuUs.toFixed(0)} µs, redis-servers ${res.redisCpuUs.toFixed(0)} µs`,
        );
        results.push(res);
      }
      rows.push(
        `| ${name} | ${count * fanOut} | ${median(results.map((x) => x.deliveriesPerSecond)).toFixed(0)} | ${median(results.map((x) => x.p50)).toFixed(1)} | ${median(results.map((x) => x.p99)).toFixed(1)} | ${median(results.map((x) => x.platformCpuUs)).toFixed(0)} | ${median(results.map((x) => x.redisCpuUs)).toFixed(0)} |`,
      );
    }
    console.log(`load average before: ${loadBefore}; after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    console.log(
      '| case | deliveries per run | deliveries/s | p50 publish→delivery (ms) | p99 (ms) | platform CPU per delivery (µs) | redis-server CPU per delivery (µs) |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    await pool.close();
    platform.kill('SIGTERM');
    await new Promise((r) => platform.once('exit', r));
    destination.close();
    destination.closeAllConnections();
  }
}

await main();
