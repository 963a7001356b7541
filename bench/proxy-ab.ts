// Several standalone proxies (builds, or one build under different environment variables or node
// flags) in front of ONE platform (this checkout's), measured in the same run with rounds alternating:
// CPU time per command of each proxy process (user and sys from /proc), optionally a `perf record`
// of each proxy over the same load, and the number of garbage collections per million commands
// (`--trace-gc` lines on the proxy's stdout). bench/connection-core.ts compares two builds; this
// compares any number of variants, which is what a hunt for one switch's cost needs.
//
//   npx tsx bench/proxy-ab.ts --proxy base=/tmp/base --proxy this=. --proxy undici=.::RESPGATE_UPSTREAM_HTTP=undici
//   npx tsx bench/proxy-ab.ts --proxy base=/tmp/base --proxy this=. --tests set,get --pipeline 16 --rounds 6
//   npx tsx bench/proxy-ab.ts --proxy base=/tmp/base --proxy this=. --perf /tmp/perf   # perf.data per proxy
//   npx tsx bench/proxy-ab.ts --proxy base=/tmp/base --proxy this=. --trace-gc           # GCs per 1M commands
//
// A spec is LABEL=DIR[::NAME=VALUE[,NAME=VALUE…]][::node:FLAG[ FLAG…]]: DIR's bin/respgate, started with
// those variables added to the environment and those flags given to node. With --perf DIR, each proxy
// runs with --perf-basic-prof (JIT frames by name) and, in the last round, under
// `perf record -e cpu-clock -F 999 -g` (`--perf-freq N` for another rate; DIR/LABEL-TEST.data; read with `perf report -i FILE --no-children
// --sort dso,sym`).
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { childWithPort, cpuUs, csvRates, log, median, startUntilReady, stop, sysUs, type Proc } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const all = (name: string): string[] => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const ROUNDS = Number(arg('--rounds') ?? 4);
const PIPELINE = Number(arg('--pipeline') ?? 16);
const REQUESTS = Number(arg('--requests') ?? (PIPELINE > 1 ? 1_000_000 : 100_000));
const TESTS = (arg('--tests') ?? 'set,get,incr').split(',');
const PERF_DIR = arg('--perf');
/** perf's sampling frequency (Hz) with --perf. */
const PERF_FREQ = arg('--perf-freq') ?? '999';
const TRACE_GC = args.includes('--trace-gc');
/** A regular expression: lines of the proxy's output matching it are counted per 1M commands (e.g. with node:--trace-deopt). */
const COUNT = arg('--count') ? new RegExp(arg('--count')!, 'g') : undefined;
const TOKEN = 'bench-' + Math.random().toString(36).slice(2);

interface Variant {
  label: string;
  dir: string;
  env: Record<string, string>;
  node: string[];
}

function parseSpec(spec: string): Variant {
  const [head, ...parts] = spec.split('::');
  const eq = head.indexOf('=');
  const v: Variant = { label: head.slice(0, eq), dir: path.resolve(head.slice(eq + 1)), env: {}, node: [] };
  for (const p of parts) {
    if (p.startsWith('node:')) v.node.push(...p.slice(5).split(' ').filter(Boolean));
    else for (const kv of p.split(',')) v.env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  }
  return v;
}

const VARIANTS = all('--proxy').map(parseSpec);
if (VARIANTS.length === 0) throw new Error('give --proxy LABEL=DIR[::ENV=V,…][::node:FLAGS] at least once');

async function startPlatform(): Promise<{ proc: Proc; httpPort: number; dataPid: number }> {
  const httpPort = await freePort();
  const proc = await startUntilReady(
    process.execPath,
    [path.join(root, 'bin/respgate'), 'platform', '--http-port', String(httpPort), '--token', TOKEN, '--log-level', 'warn'],
    /embedded redis-server on 127\.0\.0\.1:\d+\D/,
  );
  const dataPort = Number(/embedded redis-server on 127\.0\.0\.1:(\d+)/.exec(proc.out)![1]);
  await new Promise((r) => setTimeout(r, 500));
  return { proc, httpPort, dataPid: childWithPort(proc.pid, dataPort) };
}

/** One proxy of a variant; its stdout is kept (the --trace-gc lines are counted from it). */
async function startProxy(v: Variant, httpPort: number): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const node = [...v.node, ...(PERF_DIR ? ['--perf-basic-prof'] : []), ...(TRACE_GC ? ['--trace-gc'] : [])];
  const saved = { ...process.env };
  Object.assign(process.env, v.env);
  try {
    const proc = await startUntilReady(
      process.execPath,
      [
        ...node,
        path.join(v.dir, 'bin/respgate'),
        'proxy',
        '--port',
        String(port),
        '--upstream-url',
        `http://127.0.0.1:${httpPort}`,
        '--upstream-token',
        TOKEN,
        '--log-level',
        'warn',
      ],
      /proxy ready.*\n/,
    );
    return { proc, port };
  } finally {
    for (const k of Object.keys(v.env)) if (saved[k] === undefined) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

async function benchmark(port: number, test: string, n: number): Promise<number> {
  const { stdout } = await run(
    'redis-benchmark',
    ['-p', String(port), '-c', '50', '-n', String(n), '-r', '10000', '-P', String(PIPELINE), '--csv', '-t', test],
    { maxBuffer: 1 << 20 },
  );
  return [...csvRates(stdout).values()].at(-1)!;
}

const gcLines = (proc: Proc): number => (proc.out.match(/(Scavenge|Mark-Compact|Mark-sweep|Minor)/g) ?? []).length;
const scavenges = (proc: Proc): number => (proc.out.match(/Scavenge/g) ?? []).length;
const counted = (proc: Proc): number => (COUNT ? (proc.out.match(COUNT) ?? []).length : 0);

async function perfRecord(pid: number, file: string, work: () => Promise<unknown>): Promise<void> {
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', PERF_FREQ, '-g', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise((r) => setTimeout(r, 300));
  await work();
  perf.kill('SIGINT');
  await new Promise((r) => perf.once('exit', r));
}

async function main(): Promise<void> {
  if (PERF_DIR) mkdirSync(PERF_DIR, { recursive: true });
  const platform = await startPlatform();
  const proxies: { v: Variant; proc: Proc; port: number }[] = [];
  for (const v of VARIANTS) proxies.push({ v, ...(await startProxy(v, platform.httpPort)) });
  log(proxies.map((p) => `${p.v.label}: pid ${p.proc.pid} :${p.port}`).join(', '));
  const cells = new Map<string, { cpu: number[]; sys: number[]; gc: number[]; scav: number[]; rps: number[]; count: number[] }>();
  const load: number[] = [];
  try {
    for (const p of proxies) await benchmark(p.port, TESTS.join(','), PIPELINE > 1 ? 200_000 : 20_000); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (const test of TESTS) {
        load.push(loadavg()[0]);
        log(`  ${test.toUpperCase()} -P ${PIPELINE} round ${r + 1}/${ROUNDS} (load ${loadavg()[0].toFixed(1)})`);
        // Rotate the order each round: the first and last place are shared out.
        const order = proxies.map((_, i) => proxies[(i + r) % proxies.length]);
        for (const p of order) {
          const c0 = cpuUs(p.proc.pid);
          const s0 = sysUs(p.proc.pid);
          const g0 = gcLines(p.proc);
          const sc0 = scavenges(p.proc);
          const k0 = counted(p.proc);
          let rps = 0;
          const work = async () => (rps = await benchmark(p.port, test, REQUESTS));
          if (PERF_DIR && r === ROUNDS - 1) await perfRecord(p.proc.pid, path.join(PERF_DIR, `${p.v.label}-${test}.data`), work);
          else await work();
          const n = REQUESTS / 1e6;
          const key = `${test}\t${p.v.label}`;
          const c = cells.get(key) ?? { cpu: [], sys: [], gc: [], scav: [], rps: [], count: [] };
          c.cpu.push((cpuUs(p.proc.pid) - c0) / REQUESTS);
          c.sys.push((sysUs(p.proc.pid) - s0) / REQUESTS);
          c.gc.push((gcLines(p.proc) - g0) / n);
          c.scav.push((scavenges(p.proc) - sc0) / n);
          c.rps.push(rps);
          c.count.push((counted(p.proc) - k0) / n);
          cells.set(key, c);
          log(
            `    ${p.v.label}: ${c.cpu.at(-1)!.toFixed(2)} µs/cmd (sys ${c.sys.at(-1)!.toFixed(2)})${TRACE_GC ? `, ${c.gc.at(-1)!.toFixed(0)} GCs per 1M` : ''}${COUNT ? `, ${c.count.at(-1)!.toFixed(0)} matches per 1M` : ''}, ${Math.round(rps)} req/s`,
          );
        }
      }
    }
  } finally {
    for (const p of proxies) await stop(p.proc);
    await stop(platform.proc);
  }
  const first = VARIANTS[0].label;
  console.log(
    `| test | variant | CPU µs/cmd (sys), median | ÷ ${first} | rounds |${TRACE_GC ? ' GCs / scavenges per 1M |' : ''}${COUNT ? ' matches per 1M |' : ''}`,
  );
  console.log(`|---|---|---|---|---|${TRACE_GC ? '---|' : ''}${COUNT ? '---|' : ''}`);
  for (const test of TESTS) {
    const ref = median(cells.get(`${test}\t${first}`)!.cpu);
    for (const v of VARIANTS) {
      const c = cells.get(`${test}\t${v.label}`)!;
      console.log(
        `| ${test.toUpperCase()} -P ${PIPELINE} | ${v.label} | ${median(c.cpu).toFixed(2)} (${median(c.sys).toFixed(2)}) | ${(median(c.cpu) / ref).toFixed(3)} | ${c.cpu.map((x) => x.toFixed(2)).join(' ')} |${TRACE_GC ? ` ${median(c.gc).toFixed(0)} / ${median(c.scav).toFixed(0)} |` : ''}${COUNT ? ` ${median(c.count).toFixed(0)} |` : ''}`,
      );
    }
  }
  console.log(
    `load average (1 min): median ${median(load).toFixed(1)}, max ${Math.max(...load).toFixed(1)}; ${REQUESTS} requests per case, -c 50 -r 10000`,
  );
}

await main();
