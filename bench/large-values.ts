// Large values through the proxy (issue 25): `redis-benchmark -c 4 -n 200 -d 1048576 -t set,get`
// against a direct redis-server and through a standalone `respgate proxy` in front of
// `respgate platform` (bench/process-stack.ts), with the wall time of each test and the CPU time of
// each process per command, so the hop that costs is visible. Rounds interleave direct and proxy
// (and every --compare build), median per cell.
//
//   npx tsx bench/large-values.ts                       # 3 rounds, 1 MiB values
//   npx tsx bench/large-values.ts --rounds 5 --size 1048576 --requests 200
//   npx tsx bench/large-values.ts --compare /path/to/other/build   # rows (B): that build too, same rounds
//   npx tsx bench/large-values.ts --rounds 1 --profile DIR          # node --cpu-prof of proxy and platform
//   npx tsx bench/large-values.ts --rounds 1 --tests get --profile DIR  # GET only, profiled
//   npx tsx bench/large-values.ts --warmup 1                        # passes of each test before the rounds (default 3)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, log, median, startRedis, startStack, stop, type Stack } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 3);
const SIZE = Number(arg('--size') ?? 1_048_576);
const REQUESTS = Number(arg('--requests') ?? 200);
/** --tests get: GET only (the values are SET once first, so GETs read 1 MiB values, not nil). */
const TESTS = (arg('--tests') ?? 'set,get').split(',');
const LETTERS = ['', 'B', 'C', 'D'];
const PROFILE_DIR = arg('--profile');
/** Passes of each test before the rounds: a fresh platform's CPU per 1 MiB SET falls 3× over its first few hundred. */
const WARMUP = Number(arg('--warmup') ?? 3);
/** --profile DIR: `node --cpu-prof` of each proxy and platform into DIR (bench/profile-summary.ts reads them). */
const nodeArgs = (name: string): string[] =>
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];

/** Seconds redis-benchmark took for `test` (requests ÷ its requests per second). */
async function benchmark(port: number, test: string): Promise<number> {
  const { stdout } = await run(
    'redis-benchmark',
    ['-p', String(port), '-c', '4', '-n', String(REQUESTS), '-d', String(SIZE), '-t', test, '--csv'],
    { maxBuffer: 1 << 20 },
  );
  const rps = Number(stdout.trim().split('\n')[1].split(',')[1].replace(/"/g, ''));
  return REQUESTS / rps;
}

/** A process's peak resident memory so far (VmHWM), in MiB. */
function peakMiB(pid: number): number {
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);
}

async function main(): Promise<void> {
  const directPort = await freePort();
  const direct = await startRedis(directPort);
  const compareDirs = process.argv.flatMap((a, i) => (a === '--compare' ? [process.argv[i + 1]] : []));
  const stacks: Stack[] = [await startStack(root, '', nodeArgs)];
  for (const [i, dir] of compareDirs.entries()) stacks.push(await startStack(dir, `${LETTERS[i + 1]} `, nodeArgs));
  const samples = new Map<string, number[]>();
  const add = (key: string, v: number) => samples.set(key, [...(samples.get(key) ?? []), v]);
  const load: number[] = [];
  const peaks: string[] = [];
  try {
    if (!TESTS.includes('set')) for (const port of [directPort, ...stacks.map((s) => s.proxyPort)]) await benchmark(port, 'set');
    for (let w = 0; w < WARMUP; w++) {
      for (const test of TESTS) {
        await benchmark(directPort, test);
        for (const s of stacks) await benchmark(s.proxyPort, test);
      }
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const test of TESTS) {
        log(`  ${test.toUpperCase()} round ${r + 1}/${ROUNDS} (load ${loadavg()[0].toFixed(1)})`);
        load.push(loadavg()[0]);
        add(`${test} direct`, await benchmark(directPort, test));
        for (const [i, s] of stacks.entries()) {
          const pids = { proxy: s.proxy.pid, platform: s.platform.pid, data: s.dataPid };
          const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuUs(pid)]));
          add(`${test} time ${LETTERS[i]}`, await benchmark(s.proxyPort, test));
          for (const [k, pid] of Object.entries(pids)) add(`${test} ${k} ${LETTERS[i]}`, (cpuUs(pid) - before[k]) / REQUESTS / 1000);
        }
      }
    }
    for (const [i, s] of stacks.entries())
      peaks.push(`${LETTERS[i] || 'this build'}: proxy ${peakMiB(s.proxy.pid)} MiB, platform ${peakMiB(s.platform.pid)} MiB`);
  } finally {
    for (const s of stacks) {
      await stop(s.proxy);
      await stop(s.platform);
    }
    await stop(direct);
  }
  const m = (key: string) => median(samples.get(key)!);
  console.log(
    `redis-benchmark -c 4 -n ${REQUESTS} -d ${SIZE} -t set,get; median of ${ROUNDS} round(s); CPU ms per command of each process`,
  );
  console.log('');
  console.log('| test | direct (s) | through the proxy (s) | proxy ÷ direct | CPU ms/command: proxy | platform | data redis-server |');
  console.log('|---|---|---|---|---|---|---|');
  for (const test of TESTS) {
    for (const b of stacks.map((_, i) => LETTERS[i])) {
      const t = m(`${test} time ${b}`);
      console.log(
        `| ${test.toUpperCase()}${b ? ` (${b})` : ''} | ${m(`${test} direct`).toFixed(3)} | ${t.toFixed(3)} | ${(t / m(`${test} direct`)).toFixed(1)}× | ${m(`${test} proxy ${b}`).toFixed(2)} | ${m(`${test} platform ${b}`).toFixed(2)} | ${m(`${test} data ${b}`).toFixed(2)} |`,
      );
    }
  }
  console.log('');
  console.log(`load average (1 min): median ${median(load).toFixed(1)}, max ${Math.max(...load).toFixed(1)}`);
  console.log(`peak RSS over the run (VmHWM): ${peaks.join('; ')}`);
}

await main();
