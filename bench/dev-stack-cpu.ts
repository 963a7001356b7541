// CPU per command of the one-process dev stack (`respgate dev`: proxy, platform, side ports and areas
// in one Node process) of this build and another, side by side: redis-benchmark -c 50 -P 16, rounds
// alternating which build goes first, CPU time of each dev process per command from /proc, median.
// Written for issue 20 (bench/README.md run F), where a standalone proxy and platform were at base's
// cost but the dev stack was not (garbage collection of the first SLOWLOG store).
//
//   npx tsx bench/dev-stack-cpu.ts /tmp/base              # GET, 4 rounds
//   npx tsx bench/dev-stack-cpu.ts /tmp/base set --profile DIR   # also node --cpu-prof into DIR/<build>
//   npx tsx bench/dev-stack-cpu.ts /tmp/base get --pipeline 1 --requests 100000   # -P 1, fewer requests
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, median, startUntilReady, sysUs, writeCalls } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OPTIONS = ['--profile', '--pipeline', '--requests', '--rounds'];
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

async function dev(dir: string): Promise<{ port: number; pid: number; stop: () => void }> {
  const port = await freePort();
  const prof = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, path.basename(dir))}`] : [];
  const ports = ['--http-port', '--vector-port', '--queue-port'];
  const args = [...prof, path.join(dir, 'bin/respgate'), 'dev', '--port', String(port), '--log-level', 'warn'];
  for (const flag of ports) args.push(flag, String(await freePort()));
  const { child } = await startUntilReady(process.execPath, args, /ready/);
  return { port, pid: child.pid!, stop: () => child.kill('SIGTERM') };
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

const stacks = { 'this build': await dev(root), [other]: await dev(other) };
const results = Object.fromEntries(
  Object.keys(stacks).map((k) => [
    k,
    { rps: [] as number[], cpu: [] as number[], sys: [] as number[], writes: [] as number[], redis: [] as number[] },
  ]),
);
try {
  for (const s of Object.values(stacks)) await benchmark(s.port, Math.min(100_000, REQUESTS)); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const names = Object.keys(stacks);
    for (const name of r % 2 ? names.reverse() : names) {
      const s = stacks[name];
      const [before, sysBefore, writesBefore, redisBefore] = [cpuUs(s.pid), sysUs(s.pid), writeCalls(s.pid), childrenCpuUs(s.pid)];
      const { stdout } = await benchmark(s.port, REQUESTS);
      results[name].cpu.push((cpuUs(s.pid) - before) / REQUESTS);
      results[name].redis.push((childrenCpuUs(s.pid) - redisBefore) / REQUESTS);
      results[name].sys.push((sysUs(s.pid) - sysBefore) / REQUESTS);
      results[name].writes.push((writeCalls(s.pid) - writesBefore) / REQUESTS);
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
    `${name}: CPU ${v.cpu.map((x) => x.toFixed(2)).join(' ')} (median ${median(v.cpu).toFixed(2)}, of which system ${median(v.sys).toFixed(2)}); writes per command ${median(v.writes).toFixed(3)}; its redis-servers ${median(v.redis).toFixed(2)} µs; req/s median ${Math.round(median(v.rps))}`,
  );
}
