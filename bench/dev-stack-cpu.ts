// CPU per command of the one-process dev stack (`respgate dev`: proxy, platform, side ports and areas
// in one Node process) of this build and another, side by side: redis-benchmark -c 50 -P 16, rounds
// alternating which build goes first, CPU time of each dev process per command from /proc, median.
// Written for issue 20 (bench/README.md run F), where a standalone proxy and platform were at base's
// cost but the dev stack was not (garbage collection of the first SLOWLOG store).
//
//   npx tsx bench/dev-stack-cpu.ts /tmp/base              # GET, 4 rounds
//   npx tsx bench/dev-stack-cpu.ts /tmp/base set --profile DIR   # also node --cpu-prof into DIR/<build>
//   npx tsx bench/dev-stack-cpu.ts /tmp/base get --pipeline 1 --requests 100000   # -P 1, fewer requests
//   npx tsx bench/dev-stack-cpu.ts /tmp/base set --also /tmp/other --also /tmp/third  # more builds, same rounds
// Each line also gives the commands per /pipeline call (the platform's respgate_platform_http_requests_total).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, median, startUntilReady, sysUs, writeCalls } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OPTIONS = ['--profile', '--pipeline', '--requests', '--rounds', '--also'];
const [other = '/tmp/base', test = 'get'] = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith('--') && !OPTIONS.includes(all[i - 1]));
const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const PROFILE_DIR = option('--profile');
const ROUNDS = Number(option('--rounds') ?? 4);
const REQUESTS = Number(option('--requests') ?? 300_000);
const PIPELINE = option('--pipeline') ?? '16';

/** Builds measured besides this one and `other`, in the same rounds (--also DIR, repeatable). */
const ALSO = process.argv.flatMap((a, i) => (a === '--also' ? [process.argv[i + 1]] : []));

interface Dev {
  port: number;
  httpPort: number;
  pid: number;
  stop: () => void;
}

async function dev(dir: string): Promise<Dev> {
  const port = await freePort();
  const httpPort = await freePort();
  const prof = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, path.basename(dir))}`] : [];
  const ports = ['--vector-port', '--queue-port'];
  const args = [
    ...prof,
    path.join(dir, 'bin/respgate'),
    'dev',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--log-level',
    'warn',
  ];
  for (const flag of ports) args.push(flag, String(await freePort()));
  const { child } = await startUntilReady(process.execPath, args, /ready/);
  return { port, httpPort, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** /pipeline and other key-value calls the platform answered so far (its /metrics). */
async function kvCalls(s: Dev): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${s.httpPort}/metrics`)).text();
  let calls = 0;
  for (const m of text.matchAll(/^respgate_platform_http_requests_total\{area="kv",[^}]*\} (\d+)/gm)) calls += Number(m[1]);
  return calls;
}

/** CPU time of the dev process's children (its embedded redis-servers: the data store does the work). */
function childrenCpuUs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const c of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      total += cpuUs(Number(c));
    }
  }
  return total;
}

const benchmark = (port: number, n: number) =>
  run('redis-benchmark', ['-p', String(port), '-c', '50', '-n', String(n), '-r', '10000', '-t', test, '-P', PIPELINE, '--csv']);

const stacks: Record<string, Dev> = { 'this build': await dev(root), [other]: await dev(other) };
for (const dir of ALSO) stacks[dir] = await dev(dir);
const results = Object.fromEntries(
  Object.keys(stacks).map((k) => [
    k,
    {
      rps: [] as number[],
      cpu: [] as number[],
      sys: [] as number[],
      writes: [] as number[],
      redis: [] as number[],
      perCall: [] as number[],
    },
  ]),
);
try {
  for (const s of Object.values(stacks)) await benchmark(s.port, Math.min(100_000, REQUESTS)); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const names = Object.keys(stacks);
    // Each build goes first in turn.
    for (const name of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
      const s = stacks[name];
      const callsBefore = await kvCalls(s);
      const [before, sysBefore, writesBefore, redisBefore] = [cpuUs(s.pid), sysUs(s.pid), writeCalls(s.pid), childrenCpuUs(s.pid)];
      const { stdout } = await benchmark(s.port, REQUESTS);
      results[name].cpu.push((cpuUs(s.pid) - before) / REQUESTS);
      results[name].redis.push((childrenCpuUs(s.pid) - redisBefore) / REQUESTS);
      results[name].sys.push((sysUs(s.pid) - sysBefore) / REQUESTS);
      results[name].writes.push((writeCalls(s.pid) - writesBefore) / REQUESTS);
      results[name].perCall.push(REQUESTS / ((await kvCalls(s)) - callsBefore));
      results[name].rps.push(Number(stdout.trim().split('\n')[1].split(',')[1].replace(/"/g, '')));
    }
  }
} finally {
  for (const s of Object.values(stacks)) s.stop();
}
console.log(
  `${test.toUpperCase()} -c 50 -P ${PIPELINE} -n ${REQUESTS}, ${ROUNDS} rounds alternating; dev process CPU µs per command (user + system), write calls (write, writev) per command, CPU µs per command of its redis-servers, req/s`,
);
for (const [name, v] of Object.entries(results)) {
  console.log(
    `${name}: CPU ${v.cpu.map((x) => x.toFixed(2)).join(' ')} (median ${median(v.cpu).toFixed(2)}, of which system ${median(v.sys).toFixed(2)}); writes per command ${median(v.writes).toFixed(3)}; its redis-servers ${median(v.redis).toFixed(2)} µs; commands per call ${median(v.perCall).toFixed(1)}; req/s median ${Math.round(median(v.rps))} (${v.rps.map(Math.round).join(' ')})`,
  );
}
