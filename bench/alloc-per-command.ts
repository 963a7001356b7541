// Bytes the proxy allocates per command, by allocation site: this build and others, each a platform and
// a standalone proxy (process-stack.ts startStack), the proxy run under V8's sampling heap profiler
// counting collected objects too (bench/heap-sampler.mjs). Garbage per command is what sets how often
// the young generation is scavenged; what survives sets what each scavenge costs (bench/README.md,
// "Allocation per command").
//
//   npx tsx bench/alloc-per-command.ts --compare /tmp/base                       # GET, SET, INCR, MSET at -P 16
//   npx tsx bench/alloc-per-command.ts --compare /tmp/base --tests get,set --pipeline 1 --requests 40000 --top 15
//
// Per test and build: a warm-up of 100 000 commands at -P 16, then the profile over --requests commands
// (redis-benchmark -c 50 -r 10000). Sampling: one sample per 512 bytes on average, so sites under ~1 byte
// per command are noise. Both builds must be built (npm run build).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { log, startStack, stop } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const builds: [string, string][] = [
  ['this', root],
  ...(arg('--compare') ? [['compare', path.resolve(arg('--compare')!)] as [string, string]] : []),
];
const TESTS = (arg('--tests') ?? 'get,set,incr,mset').split(',');
const PIPELINE = Number(arg('--pipeline') ?? 16);
const REQUESTS = Number(arg('--requests') ?? (PIPELINE > 1 ? 200_000 : 40_000));
const TOP = Number(arg('--top') ?? 8);
const SAMPLER = path.join(root, 'bench/heap-sampler.mjs');

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** Self bytes by function (name, file and line of the function's start). */
function bySite(head: HeapNode): Map<string, number> {
  const sites = new Map<string, number>();
  const walk = (node: HeapNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    if (node.selfSize) sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(head);
  return sites;
}

const benchmark = (port: number, n: number, pipeline: number, test: string) =>
  run('redis-benchmark', ['-p', String(port), '-c', '50', '-n', String(n), '-r', '10000', '-P', String(pipeline), '-t', test, '-q'], {
    maxBuffer: 1 << 20,
  });

async function profile(dir: string, name: string, test: string): Promise<Map<string, number>> {
  const out = mkdtempSync(path.join(tmpdir(), 'respgate-alloc-'));
  process.env.HEAP_SAMPLE_DIR = out;
  const stack = await startStack(dir, name, (role) => (role.endsWith('proxy') ? ['--import', SAMPLER] : []));
  try {
    await benchmark(stack.proxyPort, 100_000, 16, test);
    process.kill(stack.proxy.pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 200));
    await benchmark(stack.proxyPort, REQUESTS, PIPELINE, test);
    process.kill(stack.proxy.pid, 'SIGUSR2');
    const file = path.join(out, `heap-${stack.proxy.pid}.heapprofile`);
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300)); // written in one call: let it finish
    return bySite((JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head);
  } finally {
    await stop(stack.proxy);
    await stop(stack.platform);
  }
}

const lines: string[] = [];
for (const test of TESTS) {
  const totals: string[] = [];
  for (const [name, dir] of builds) {
    log(`${test.toUpperCase()} -P ${PIPELINE}, ${name} (${dir})`);
    const sites = await profile(dir, name === 'this' ? '' : `${name} `, test);
    const total = [...sites.values()].reduce((a, b) => a + b, 0) / REQUESTS;
    totals.push(`${name} ${total.toFixed(0)}`);
    lines.push(`${test.toUpperCase()} -P ${PIPELINE}, ${name}: ${total.toFixed(0)} bytes per command`);
    for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, TOP))
      lines.push(`  ${(bytes / REQUESTS).toFixed(1).padStart(8)}  ${site}`);
  }
  lines.push(`${test.toUpperCase()} -P ${PIPELINE}: bytes allocated per command, ${totals.join(', ')}`, '');
}
console.log(lines.join('\n'));
