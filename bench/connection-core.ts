// Issue 20's connection core alone: this build's proxy and vector side port against another build's
// (e.g. /tmp/base = 59476ba, the state before the one connection core), both in front of the SAME
// platform: this checkout's `respgate platform` with its data redis-server. The platform's later
// features (field-TTL emulation, keyspace settings, Search, several databases) then weigh on both
// builds alike, and what differs is the RESP server in front: the connection core, dispatch, batcher
// and upstream client. bench/proxy-throughput.ts runs each build's whole dev stack instead.
//
//   npx tsx bench/connection-core.ts --compare /tmp/base          # 3 rounds, proxy and vector side port
//   npx tsx bench/connection-core.ts --compare /tmp/base --rounds 5 --tests incr,mset --pipelines 16
//   npx tsx bench/connection-core.ts --compare /tmp/base --only proxy      # or --only vector
//   (--requests N: per proxy case at -P 1, 5 N at -P 16; --sideport-requests N: per side-port case)
//
// Per case and round, each build runs redis-benchmark -c 50 (-r 10000 for the proxy) in turn, the order
// alternating between rounds (the build measured second was favoured by 5-18 % in run F); a direct
// redis-server runs the proxy's cases first, for the ratios of the earlier runs. Figures: req/s, and
// CPU time (user + sys, /proc) per command of the build's process and of the shared platform, which a
// loaded machine changes much less than throughput (LRANGE_100's includes its LPUSH filler's, in both
// builds alike). Medians of the rounds. Both builds must be built.
//
// The side port: `respgate vector` (the standalone role, which 59476ba also has) in front of the
// platform's vector index: PING (the connection core and nothing else) and VCARD (one REST call each).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { childWithPort, cpuUs, csvRates, log, median, startRedis, startUntilReady, stop, sysUs, type Proc } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const COMPARE = arg('--compare');
if (!COMPARE) throw new Error('give the other build: --compare /path/to/checkout (built with npm run build)');
const ROUNDS = Number(arg('--rounds') ?? 3);
const REQUESTS = Number(arg('--requests') ?? 100_000);
const SIDE_REQUESTS = Number(arg('--sideport-requests') ?? 50_000);
const TESTS = (arg('--tests') ?? 'set,get,incr,lpush,lrange_100,mset').split(',');
const PIPELINES = (arg('--pipelines') ?? '1,16').split(',').map(Number);
const ONLY = arg('--only');
const TOKEN = 'bench-' + Math.random().toString(36).slice(2);
const INDEX = 'dense';
/** The two builds: this checkout and --compare, by the label used in the tables. */
const BUILDS: [string, string][] = [
  ['this', root],
  ['compare', path.resolve(COMPARE)],
];

const requestsAt = (pipeline: number): number => (pipeline > 1 ? REQUESTS * 5 : REQUESTS);

/** req/s per test name (redis-benchmark's CSV) of one run. */
async function benchmark(port: number, pipeline: number, n: number, what: string[]): Promise<Map<string, number>> {
  const { stdout } = await run(
    'redis-benchmark',
    ['-p', String(port), '-c', '50', '-n', String(n), '-r', '10000', '-P', String(pipeline), '--csv', ...what],
    { maxBuffer: 1 << 20 },
  );
  return csvRates(stdout);
}

/** The proxy's INFO stats total_upstream_calls (its /pipeline calls so far). */
async function upstreamCalls(port: number): Promise<number> {
  const { stdout } = await run('redis-cli', ['-p', String(port), 'INFO', 'stats']);
  return Number(/total_upstream_calls:(\d+)/.exec(stdout)?.[1] ?? NaN);
}

/** One redis-benchmark case with the CPU time per command of `pids` over it. */
async function measure(
  port: number,
  pipeline: number,
  n: number,
  what: string[],
  pids: Record<string, number>,
): Promise<{ rps: number; cpu: Record<string, number>; sys: number }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuUs(pid)]));
  const sysBefore = sysUs(pids.proc);
  const rates = await benchmark(port, pipeline, n, what);
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (cpuUs(pid) - before[k]) / n]));
  // LRANGE_100's test also runs its LPUSH filler first: the last rate is the named test's.
  return { rps: [...rates.values()].at(-1)!, cpu, sys: (sysUs(pids.proc) - sysBefore) / n };
}

async function startPlatform(): Promise<{ proc: Proc; httpPort: number; dataPid: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'respgate-core-'));
  const config = path.join(dir, 'indexes.json');
  // One small dense index: no embedder model to load, the side port's VCARD asks its /info.
  writeFileSync(config, JSON.stringify({ defaults: false, indexes: [{ name: INDEX, type: 'DENSE', dimension: 4 }] }));
  const httpPort = await freePort();
  const proc = await startUntilReady(
    process.execPath,
    [
      path.join(root, 'bin/respgate'),
      'platform',
      '--http-port',
      String(httpPort),
      '--token',
      TOKEN,
      '--vector-config',
      config,
      '--log-level',
      'warn',
    ],
    /embedded redis-server on 127\.0\.0\.1:\d+\D/,
  );
  const dataPort = Number(/embedded redis-server on 127\.0\.0\.1:(\d+)/.exec(proc.out)![1]);
  await new Promise((r) => setTimeout(r, 500)); // the rest of the banner: the platform is ready
  return { proc, httpPort, dataPid: childWithPort(proc.pid, dataPort) };
}

async function startProxy(dir: string, httpPort: number): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const args = ['proxy', '--port', String(port), '--upstream-url', `http://127.0.0.1:${httpPort}`, '--upstream-token', TOKEN];
  const proc = await startUntilReady(process.execPath, [path.join(dir, 'bin/respgate'), ...args, '--log-level', 'warn'], /proxy ready.*\n/);
  return { proc, port };
}

async function startVectorPort(dir: string, httpPort: number): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${httpPort}/vector/${INDEX}`;
  const args = ['vector', '--vector-port', String(port), '--vector-url', url, '--vector-token', TOKEN, '--log-level', 'warn'];
  const proc = await startUntilReady(process.execPath, [path.join(dir, 'bin/respgate'), ...args], /vector side port ready.*\n/);
  return { proc, port };
}

interface Cell {
  rps: number[];
  cpu: number[];
  /** The kernel's share of `cpu` (system time: socket reads and writes). */
  sys: number[];
  platform: number[];
  /** Commands per upstream /pipeline call (the proxy's batch size; the side port has none). */
  batch: number[];
}
const cell = (): Cell => ({ rps: [], cpu: [], sys: [], platform: [], batch: [] });

/** Adds one measurement to a case and logs it (the rounds' own figures, on stderr). */
function record(
  cases: Map<string, Record<string, Cell>>,
  key: string,
  build: string,
  x: Awaited<ReturnType<typeof measure>>,
  batch = NaN,
): void {
  const c = cases.get(key) ?? { this: cell(), compare: cell() };
  c[build].batch.push(batch);
  c[build].rps.push(x.rps);
  c[build].cpu.push(x.cpu.proc);
  c[build].sys.push(x.sys);
  c[build].platform.push(x.cpu.platform);
  cases.set(key, c);
  log(
    `    ${build}: ${Math.round(x.rps)} req/s, ${x.cpu.proc.toFixed(2)} µs/cmd (sys ${x.sys.toFixed(2)}), platform ${x.cpu.platform.toFixed(2)}${Number.isNaN(batch) ? '' : `, ${batch.toFixed(1)} commands per upstream call`}`,
  );
}

/** Rows of one port: per case, req/s and CPU µs per command of both builds. */
function table(title: string, cases: Map<string, Record<string, Cell>>, direct?: Map<string, number[]>): string[] {
  const lines = [
    title,
    '',
    `| case | -P |${direct ? ' direct req/s |' : ''} req/s compare | req/s this | this ÷ compare | CPU µs/cmd compare (sys) | CPU µs/cmd this (sys) | this ÷ compare | platform CPU µs/cmd compare / this |${direct ? ' commands per upstream call compare / this |' : ''}`,
    `|---|---|${direct ? '---|' : ''}---|---|---|---|---|---|---|${direct ? '---|' : ''}`,
  ];
  for (const [key, c] of cases) {
    const [name, p] = key.split(' -P ');
    const m = (k: string, f: keyof Cell) => median(c[k][f]);
    const d = direct ? ` ${Math.round(median(direct.get(key)!))} |` : '';
    lines.push(
      `| ${name} | ${p} |${d} ${Math.round(m('compare', 'rps'))} | ${Math.round(m('this', 'rps'))} | ${(m('this', 'rps') / m('compare', 'rps')).toFixed(2)} | ${m('compare', 'cpu').toFixed(2)} (${m('compare', 'sys').toFixed(2)}) | ${m('this', 'cpu').toFixed(2)} (${m('this', 'sys').toFixed(2)}) | ${(m('this', 'cpu') / m('compare', 'cpu')).toFixed(2)} | ${m('compare', 'platform').toFixed(2)} / ${m('this', 'platform').toFixed(2)} |${direct ? ` ${m('compare', 'batch').toFixed(1)} / ${m('this', 'batch').toFixed(1)} |` : ''}`,
    );
  }
  return lines;
}

/** The proxy port: redis-benchmark's tests on both builds' proxies and a direct redis-server. */
async function proxyCases(httpPort: number, platformPid: number, load: number[]): Promise<string[]> {
  const directPort = await freePort();
  const direct = await startRedis(directPort);
  const proxies = Object.fromEntries(await Promise.all(BUILDS.map(async ([k, dir]) => [k, await startProxy(dir, httpPort)] as const)));
  log(
    `proxies: this :${proxies.this.port} (pid ${proxies.this.proc.pid}), compare :${proxies.compare.port} (pid ${proxies.compare.proc.pid})`,
  );
  const cases = new Map<string, Record<string, Cell>>();
  const directRps = new Map<string, number[]>();
  try {
    for (const [k] of BUILDS) await benchmark(proxies[k].port, 1, 20_000, ['-t', TESTS.join(',')]); // warm-up: JIT, keep-alive
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of PIPELINES) {
        for (const test of TESTS) {
          load.push(loadavg()[0]);
          log(`  proxy ${test.toUpperCase()} -P ${p} round ${r + 1}/${ROUNDS} (load ${loadavg()[0].toFixed(1)})`);
          const n = requestsAt(p);
          const d = await benchmark(directPort, p, n, ['-t', test]);
          const order = r % 2 ? [...BUILDS].reverse() : BUILDS;
          for (const [k] of order) {
            const calls = await upstreamCalls(proxies[k].port);
            const x = await measure(proxies[k].port, p, n, ['-t', test], { proc: proxies[k].proc.pid, platform: platformPid });
            // LRANGE_100 sends its filler's n LPUSHes too.
            const sent = test === 'lrange_100' ? 2 * n : n;
            const batch = sent / ((await upstreamCalls(proxies[k].port)) - calls);
            const key = `${[...d.keys()].at(-1)} -P ${p}`;
            record(cases, key, k, x, batch);
            if (k === order[0][0]) (directRps.get(key) ?? directRps.set(key, []).get(key)!).push([...d.values()].at(-1)!);
          }
        }
      }
    }
  } finally {
    for (const [k] of BUILDS) await stop(proxies[k].proc);
    await stop(direct);
  }
  return table(
    `Proxy port, redis-benchmark -c 50 -r 10000 -n ${REQUESTS} (-P 1) / ${requestsAt(16)} (-P 16); CPU of each build's proxy process per command`,
    cases,
    directRps,
  );
}

/** The vector side port: PING and VCARD through both builds' `respgate vector`. */
async function vectorCases(httpPort: number, platformPid: number, load: number[]): Promise<string[]> {
  const ports = Object.fromEntries(await Promise.all(BUILDS.map(async ([k, dir]) => [k, await startVectorPort(dir, httpPort)] as const)));
  log(`vector side ports: this :${ports.this.port}, compare :${ports.compare.port}`);
  const commands: [string, string[], number][] = [
    ['PING', ['PING'], 16],
    ['PING', ['PING'], 1],
    ['VCARD', ['VCARD', 'bench'], 1],
    ['VCARD', ['VCARD', 'bench'], 16],
  ];
  const cases = new Map<string, Record<string, Cell>>();
  try {
    for (const [k] of BUILDS) for (const [, cmd] of commands) await benchmark(ports[k].port, 1, 5000, cmd); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, cmd, p] of commands) {
        load.push(loadavg()[0]);
        log(`  vector ${name} -P ${p} round ${r + 1}/${ROUNDS} (load ${loadavg()[0].toFixed(1)})`);
        // PING never leaves the side port: more of them for enough CPU ticks.
        const n = name === 'PING' ? SIDE_REQUESTS * (p > 1 ? 20 : 4) : SIDE_REQUESTS;
        for (const [k] of r % 2 ? [...BUILDS].reverse() : BUILDS) {
          const x = await measure(ports[k].port, p, n, cmd, { proc: ports[k].proc.pid, platform: platformPid });
          record(cases, `${name} -P ${p}`, k, x);
        }
      }
    }
  } finally {
    for (const [k] of BUILDS) await stop(ports[k].proc);
  }
  return table(
    `Vector side port (\`respgate vector\` in front of the platform's index), redis-benchmark -c 50; CPU of each build's side-port process per command`,
    cases,
  );
}

async function main(): Promise<void> {
  const platform = await startPlatform();
  log(`platform :${platform.httpPort} (pid ${platform.proc.pid}), data redis-server pid ${platform.dataPid}; compare = ${COMPARE}`);
  const load: number[] = [loadavg()[0]];
  // Each port's table is printed as soon as it is measured (a later failure keeps it).
  try {
    if (ONLY !== 'vector') console.log([...(await proxyCases(platform.httpPort, platform.proc.pid, load)), ''].join('\n'));
    if (ONLY !== 'proxy') console.log([...(await vectorCases(platform.httpPort, platform.proc.pid, load)), ''].join('\n'));
  } finally {
    await stop(platform.proc);
  }
  console.log(
    `Medians of ${ROUNDS} round(s), build order alternating by round; load average (1 min) during the run: median ${median(load).toFixed(1)}, max ${Math.max(...load).toFixed(1)}; Node ${process.version}`,
  );
}

await main();
