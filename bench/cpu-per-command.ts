// CPU time per command (user + sys from /proc/<pid>/stat, all threads) of a standalone
// `respgate proxy`, of the local platform behind it (`respgate platform`), and of the platform's
// data redis-server, next to a direct redis-server doing the same work in the same run
// (redis-benchmark SET and GET, -c 50 -r 10000, -P 1 and -P 16). Issue 14.
//
//   npx tsx bench/cpu-per-command.ts               # 3 rounds, median per cell
//   npx tsx bench/cpu-per-command.ts --rounds 5
//   npx tsx bench/cpu-per-command.ts --warmup 3     # 3 passes per test and depth before the rounds (default 1)
//   npx tsx bench/cpu-per-command.ts --quick       # 1 round, fewer requests (a smoke run)
//   npx tsx bench/cpu-per-command.ts --profile DIR # also `node --cpu-prof` of proxy and platform into DIR
//   npx tsx bench/cpu-per-command.ts --pipelines 16 --tests get   # some cases only (e.g. to profile one)
//   npx tsx bench/profile-summary.ts DIR/proxy-*.cpuprofile       # self time by function
//   npx tsx bench/cpu-per-command.ts --root /path/to/other/checkout  # that checkout's proxy and platform
//   npx tsx bench/cpu-per-command.ts --syscalls    # also system calls (by kind) and context switches per
//                                   # command of redis-server and each proxy (perf stat tracepoints, /proc)
//   npx tsx bench/cpu-per-command.ts --compare /path/to/other/build  # A/B: that build's proxy and platform too,
//                                   # measured in the same rounds, interleaved with this one (rows "… (B)");
//                                   # --compare may be given several times (rows (B), (C) …)
//
// CPU per command is much less sensitive to other load on the machine than throughput is (a busy
// neighbour slows the run but does not add CPU time to our processes), which is why it is the figure
// this bench reports. Counters tick at 100 Hz (10 ms), so each case runs long enough for hundreds of ticks.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, log, median, startRedis, startStack, stop, sysUs, writeCalls } from './process-stack.js';
import { contextSwitches, countSyscalls, SYSCALLS } from './syscall-count.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const quick = process.argv.includes('--quick');
const ROUNDS = Number(arg('--rounds') ?? (quick ? 1 : 3));
/**
 * Passes of each test at each pipeline depth before the rounds (default 1). V8 keeps optimizing the
 * proxy's functions for a while under load: with one warm-up at -P 1 only, each build still compiled
 * (and deoptimized) dozens of functions in the first measured rounds, CPU a sidecar that runs for
 * hours pays once. A direct redis-server gets the same passes.
 */
const WARMUP = Number(arg('--warmup') ?? 1);
const PROFILE_DIR = arg('--profile');
const SYSCALL_COUNTS = process.argv.includes('--syscalls');
/** Requests per case, by -P: enough CPU time at each side for hundreds of 10 ms ticks. */
const REQUESTS: Record<number, number> = quick ? { 1: 20_000, 16: 100_000 } : { 1: 200_000, 16: 1_000_000 };
const requests = (pipeline: number): number => REQUESTS[pipeline] ?? (pipeline < 8 ? REQUESTS[1] : REQUESTS[16]);
const TESTS = (arg('--tests') ?? 'set,get').split(',');
const PIPELINES = (arg('--pipelines') ?? '1,16').split(',').map(Number);
/** Sample-key suffix and row label of each stack: this build, then each --compare build. */
const LETTERS = ['', 'B', 'C', 'D', 'E'];

function nodeArgs(name: string): string[] {
  return PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
}

async function benchmark(port: number, test: string, pipeline: number): Promise<number> {
  const { stdout } = await run(
    'redis-benchmark',
    ['-p', String(port), '-c', '50', '-n', String(requests(pipeline)), '-r', '10000', '-t', test, '-P', String(pipeline), '--csv'],
    { maxBuffer: 1 << 20 },
  );
  const line = stdout.trim().split('\n')[1];
  return Number(line.split(',')[1].replace(/"/g, ''));
}

/** p50 latency in µs of one client alone (-c 1 -P 1), from redis-benchmark's CSV. */
async function p50Latency(port: number): Promise<number> {
  const { stdout } = await run(
    'redis-benchmark',
    ['-p', String(port), '-c', '1', '-n', quick ? '5000' : '20000', '-r', '10000', '-t', 'get', '--csv'],
    { maxBuffer: 1 << 20 },
  );
  const [header, line] = stdout
    .trim()
    .split('\n')
    .map((l) => l.split(',').map((f) => f.replace(/"/g, '')));
  return Number(line[header.indexOf('p50_latency_ms')]) * 1000;
}

/** System calls by kind (`all`, SYSCALLS, `cs-vol`, `cs-invol`: context switches) per command of one process. */
type CallCounts = Record<string, number>;

/** CPU µs per command of each process while `work` runs (and, with --syscalls, the system calls of `traced`). */
async function cpuDuring(
  pids: Record<string, number>,
  commands: number,
  work: () => Promise<number>,
  traced: string[] = [],
): Promise<{
  perCommand: Record<string, number>;
  writes: Record<string, number>;
  sys: Record<string, number>;
  calls: Record<string, CallCounts>;
  rps: number;
}> {
  const tracing = SYSCALL_COUNTS ? traced : [];
  const counters = await Promise.all(tracing.map((k) => countSyscalls(pids[k])));
  const switchesBefore = tracing.map((k) => contextSwitches(pids[k]));
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuUs(pid)]));
  const writesBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, writeCalls(pid)]));
  const sysBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, sysUs(pid)]));
  const rps = await work();
  const perCommand = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (cpuUs(pid) - before[k]) / commands]));
  const writes = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (writeCalls(pid) - writesBefore[k]) / commands]));
  const sys = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (sysUs(pid) - sysBefore[k]) / commands]));
  const calls: Record<string, CallCounts> = {};
  for (const [i, k] of tracing.entries()) {
    const switches = contextSwitches(pids[k]);
    const counted = await counters[i].stop();
    const perCmd: CallCounts = {
      'cs-vol': (switches.voluntary - switchesBefore[i].voluntary) / commands,
      'cs-invol': (switches.involuntary - switchesBefore[i].involuntary) / commands,
    };
    if (counted) for (const [name, n] of Object.entries(counted)) perCmd[name] = n / commands;
    calls[k] = perCmd;
  }
  return { perCommand, writes, sys, calls, rps };
}

/** One row of the system-call table: per command, by kind ('—' when perf could not count). */
function callRow(label: string, p: number, who: string, c: CallCounts): string {
  const f = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(3));
  const epoll = c.all === undefined ? undefined : (c.epoll_pwait ?? 0) + (c.epoll_wait ?? 0);
  const other = c.all === undefined ? undefined : c.all - SYSCALLS.reduce((sum, name) => sum + (c[name] ?? 0), 0) + (c.setsockopt ?? 0);
  return `| ${label} | ${p} | ${who} | ${f(c.all)} | ${f(c.read)} | ${f(c.write)} | ${f(c.writev)} | ${f(epoll)} | ${f(c.epoll_ctl)} | ${f(c.futex)} | ${f(other)} | ${f(c['cs-vol'])} / ${f(c['cs-invol'])} |`;
}

async function main(): Promise<void> {
  // --root: another checkout's code (e.g. the commit before a change), run under the same load.
  const directPort = await freePort();
  const directProc = await startRedis(directPort);
  log(`direct redis-server :${directPort} (pid ${directProc.pid})`);
  const stacks = [await startStack(arg('--root') ?? root, '', nodeArgs)];
  // Every --compare DIR: another build, measured in the same rounds (B, C …).
  const compareDirs = process.argv.flatMap((a, i) => (a === '--compare' ? [process.argv[i + 1]] : []));
  for (const [i, dir] of compareDirs.entries()) stacks.push(await startStack(dir, `${LETTERS[i + 1]} `, nodeArgs));
  const load: number[] = [loadavg()[0]];
  const rows: string[] = [];
  const writeRows: string[] = [];
  const callRows: string[] = [];
  let latencyLine: string;
  try {
    // Warm-up: JIT, keep-alive connections, at every depth measured (see WARMUP).
    for (let w = 0; w < WARMUP; w++)
      for (const p of PIPELINES)
        for (const test of TESTS) {
          await benchmark(directPort, test, p);
          for (const stack of stacks) await benchmark(stack.proxyPort, test, p);
        }
    const latency = { direct: [] as number[], proxy: stacks.map(() => [] as number[]) };
    for (let r = 0; r < ROUNDS; r++) {
      latency.direct.push(await p50Latency(directPort));
      for (const [i, stack] of stacks.entries()) latency.proxy[i].push(await p50Latency(stack.proxyPort));
    }
    const d50 = median(latency.direct);
    latencyLine = `p50 latency of one client alone (redis-benchmark -c 1 -t get): direct ${Math.round(d50)} µs, ${stacks
      .map((_, i) => {
        const x50 = median(latency.proxy[i]);
        return `through proxy + platform${i ? ` ${LETTERS[i]}` : ''} ${Math.round(x50)} µs: the hop adds ${Math.round(x50 - d50)} µs`;
      })
      .join('; ')}`;
    for (const p of PIPELINES) {
      for (const test of TESTS) {
        const samples: Record<string, number[]> = { direct: [], directRps: [], directW: [], directS: [] };
        const callSamples: Record<string, CallCounts[]> = {};
        for (let r = 0; r < ROUNDS; r++) {
          log(`  ${test.toUpperCase()} -P ${p} round ${r + 1}/${ROUNDS} (load ${loadavg()[0].toFixed(1)})`);
          load.push(loadavg()[0]);
          const measureDirect = async (): Promise<void> => {
            const d = await cpuDuring({ direct: directProc.pid }, requests(p), () => benchmark(directPort, test, p), ['direct']);
            if (d.calls.direct) (callSamples.direct ??= []).push(d.calls.direct);
            samples.direct.push(d.perCommand.direct);
            samples.directRps.push(d.rps);
            samples.directW.push(d.writes.direct);
            samples.directS.push(d.sys.direct);
          };
          const measureStack = async (i: number): Promise<void> => {
            const stack = stacks[i];
            const b = LETTERS[i]; // '' for this build, B, C … for the --compare builds' samples
            const x = await cpuDuring(
              { proxy: stack.proxy.pid, platform: stack.platform.pid, data: stack.dataPid },
              requests(p),
              () => benchmark(stack.proxyPort, test, p),
              ['proxy'],
            );
            if (x.calls.proxy) (callSamples['proxy' + b] ??= []).push(x.calls.proxy);
            for (const k of ['proxy', 'platform', 'data']) (samples[k + b] ??= []).push(x.perCommand[k]);
            (samples['proxyRps' + b] ??= []).push(x.rps);
            (samples['proxyW' + b] ??= []).push(x.writes.proxy);
            (samples['platformW' + b] ??= []).push(x.writes.platform);
            (samples['proxyS' + b] ??= []).push(x.sys.proxy);
            (samples['platformS' + b] ??= []).push(x.sys.platform);
          };
          // Direct, this build, the --compare builds in one round, the other way round in the next: a slow
          // spell of the machine then falls on both sides of the paired ratios as often (bench/README.md,
          // "why runs differ").
          const order = [measureDirect, ...stacks.map((_, i) => () => measureStack(i))];
          for (const measure of r % 2 ? order.reverse() : order) await measure();
        }
        const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
        // Per kind of call, the median of the rounds.
        const callMedian = (rounds: CallCounts[]): CallCounts =>
          Object.fromEntries(Object.keys(rounds[0]).map((name) => [name, median(rounds.map((r) => r[name] ?? 0))]));
        if (callSamples.direct) callRows.push(callRow(test.toUpperCase(), p, 'redis-server direct', callMedian(callSamples.direct)));
        for (const b of stacks.map((_, i) => LETTERS[i]))
          if (callSamples['proxy' + b])
            callRows.push(callRow(test.toUpperCase(), p, `proxy${b ? ` (${b})` : ''}`, callMedian(callSamples['proxy' + b])));
        // The median of a cell, and the median of its ratios to the direct redis-server of the same round.
        const ratio = (key: string) => {
          const v = m[key];
          const paired = median(samples[key].map((x, r) => x / samples.direct[r]));
          return `${v < 10 ? v.toFixed(2) : v.toFixed(1)} µs (${paired.toFixed(2)}×)`;
        };
        const sysShare = (sys: number, all: number) => `${Math.round((100 * sys) / all)}%`;
        for (const b of stacks.map((_, i) => LETTERS[i])) {
          const label = `${test.toUpperCase()}${b ? ` (${b})` : ''}`;
          rows.push(
            `| ${label} | ${p} | ${m.direct.toFixed(2)} µs | ${ratio('proxy' + b)} | ${ratio('platform' + b)} | ${ratio('data' + b)} | ${Math.round(m.directRps)} / ${Math.round(m['proxyRps' + b])} |`,
          );
          writeRows.push(
            `| ${label} | ${p} | ${m.directW.toFixed(3)} | ${m['proxyW' + b].toFixed(3)} | ${m['platformW' + b].toFixed(3)} | ${sysShare(m.directS, m.direct)} / ${sysShare(m['proxyS' + b], m['proxy' + b])} / ${sysShare(m['platformS' + b], m['platform' + b])} |`,
          );
        }
      }
    }
  } finally {
    for (const stack of stacks) {
      await stop(stack.proxy);
      await stop(stack.platform);
    }
    await stop(directProc);
  }
  console.log(
    `CPU time (user + sys) per command, median of ${ROUNDS} round(s) (ratios: the median of each round's ratio to the direct redis-server); redis-benchmark -c 50 -r 10000, -n ${requests(1)} (-P 1) / ${requests(16)} (-P 16)`,
  );
  console.log('');
  console.log(
    '| test | -P | redis-server direct | proxy | platform | data redis-server behind the platform | req/s direct / through the proxy |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log('');
  console.log(
    'Write system calls (write, writev; /proc/<pid>/io syscw) per command, and the share of system (kernel) time in the CPU time:',
  );
  console.log('');
  console.log('| test | -P | writes: redis-server direct | proxy | platform | sys share: direct / proxy / platform |');
  console.log('|---|---|---|---|---|---|');
  for (const row of writeRows) console.log(row);
  console.log('');
  if (callRows.length > 0) {
    console.log(
      'System calls per command (perf stat tracepoints, all threads; `—`: perf could not count) and context switches per command (/proc):',
    );
    console.log('');
    console.log(
      '| test | -P | process | all | read | write | writev | epoll wait | epoll_ctl | futex | other | context switches vol / invol |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of callRows) console.log(row);
    console.log('');
  }
  console.log(latencyLine);
  console.log(
    `load average (1 min) during the run: median ${median(load).toFixed(1)}, max ${Math.max(...load).toFixed(1)}; ${readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'cpu'}, ${(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm) ?? []).length} cores, Node ${process.version}`,
  );
}

await main();
