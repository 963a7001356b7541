// Where the one-process dev stack's CPU goes (issue 25): the proxy's side, the HTTP hop between the proxy
// and the platform (its client end and its server end), the platform's /pipeline handling and the
// platform's redis-server client. Starts `respgate dev` under `node --perf-basic-prof`, warms it up, records
// `perf record -e cpu-clock -g` while redis-benchmark runs, and splits the samples.
//
// cpu-clock samples count only time on a CPU. `node --cpu-prof` samples wall-clock time instead, so a write
// that wakes redis-server and is preempted is charged to that write in it (27% of the busy samples were the
// platform's writes to redis-server at -P 1 there, 5% here).
//
// A sample goes to the innermost JS frame of ours on its stack (dist/… or src/…): Node's functions and the
// kernel work they do count for the code of ours that called them; node:http's server frames count as
// the hop's server end. Modules both halves use (resp/, commands/, metrics) count for their caller.
// Samples with no JS of ours (epoll, reads done before a callback runs, libuv) are "event loop"; threads
// other than the main one (V8's optimizing compiler and collector helpers) are apart.
//
//   npx tsx bench/dev-stack-split.ts                                 # GET -P 16, 1 000 000 requests
//   npx tsx bench/dev-stack-split.ts --test set --pipeline 1 --requests 200000 --detail
//   npx tsx bench/dev-stack-split.ts --root /tmp/base                # another checkout's build
//   npx tsx bench/dev-stack-split.ts --script FILE --requests N      # split a saved `perf script -F +pid` output
// Needs perf and root (or perf_event_paranoid ≤ 0); runs the bundle-free dist/ (RESPGATE_NO_BUNDLE=1) so
// frames name their source module.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, startUntilReady, sysUs } from './process-stack.js';

const run = promisify(execFile);
const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const ROOT = path.resolve(option('--root') ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const TEST = option('--test') ?? 'get';
const PIPELINE = option('--pipeline') ?? '16';
const REQUESTS = Number(option('--requests') ?? 1_000_000);
const WARMUP = Number(option('--warmup') ?? 300_000);
const SCRIPT = option('--script');
const DETAIL = argv.includes('--detail');
/** perf's sampling rate; a sample stands for 1/HZ s of CPU. */
const HZ = 999;

/** Modules both halves use: a sample in them counts for the nearest caller that is not one. */
const SHARED = /^(resp|commands)\/|^metrics\.|^large-value-heap\./;

function partOfSource(rel: string): string {
  if (/^upstream\/(http1-pool|http-exchange|undici-pool)\./.test(rel)) return 'hop: proxy HTTP client';
  if (/^platform\/(platform|http-body|area)\.|^platform\/kv\/principals\./.test(rel)) return 'hop: platform HTTP server';
  if (rel.startsWith('platform/redis/')) return 'platform: its redis-server client';
  if (rel.startsWith('platform/')) return 'platform: /pipeline handling';
  if (/^(proxy|server|resp|upstream|commands)\//.test(rel)) return 'proxy side';
  return `other of ours (${rel.split('/')[0]})`;
}

const OURS = /JS:\S*? file:\/\/\S*?\/(?:dist|src)\/(\S+?):\d+/;
const GC = /v8::internal::(Heap::|Scavenger|MarkCompact|MinorMarkCompact|ConcurrentMarking|Sweeper)/;

function classify(mainThread: boolean, frames: string[]): string {
  if (!mainThread) return 'other threads (V8 compiler and collector helpers, libuv pool)';
  if (frames.some((f) => GC.test(f))) return 'garbage collector (main thread)';
  let http = false;
  let shared: string | undefined;
  for (const f of frames) {
    if (f.includes('node:_http_')) http = true;
    const m = OURS.exec(f);
    if (!m) continue;
    if (SHARED.test(m[1])) {
      shared ??= m[1];
      continue;
    }
    return http && m[1].startsWith('platform/') ? 'hop: platform HTTP server' : partOfSource(m[1]);
  }
  if (shared) return partOfSource(shared);
  if (http) return 'hop: platform HTTP server';
  if (frames.some((f) => f.includes(' JS:'))) return "node's JS, none of ours on the stack";
  return 'event loop (epoll, reads before a callback, libuv)';
}

/** The system call a kernel sample is in: the frame that the system call entry called. */
function syscallOf(frames: string[]): string {
  const at = frames.findIndex((f) => f.includes(' do_syscall_64+'));
  if (at <= 0) return 'no system call (interrupt, softirq, page fault)';
  return `${frames[at - 1].replace(/^[0-9a-f]+ /, '').replace(/\+0x.*$/, '')} (system call)`;
}

interface Split {
  samples: number;
  parts: Map<string, { samples: number; kernel: number; leaves: Map<string, number> }>;
}

function split(script: string): Split {
  const parts: Split['parts'] = new Map();
  let samples = 0;
  for (const block of script.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const head = /\s(\d+)\/(\d+)\s/.exec(lines[0] ?? '');
    if (!head || lines.length < 2) continue;
    const frames = lines.slice(1).map((l) => l.trim());
    const part = classify(head[1] === head[2], frames);
    const entry = parts.get(part) ?? { samples: 0, kernel: 0, leaves: new Map<string, number>() };
    parts.set(part, entry);
    samples++;
    entry.samples++;
    const inKernel = frames[0].includes('[kernel.kallsyms]');
    if (inKernel) entry.kernel++;
    const leaf = inKernel ? `kernel: ${syscallOf(frames)}` : frames[0].replace(/^[0-9a-f]+ /, '').replace(/\+0x[0-9a-f]+ .*$/, '');
    entry.leaves.set(leaf, (entry.leaves.get(leaf) ?? 0) + 1);
  }
  return { samples, parts };
}

function report({ samples, parts }: Split, commands: number, header: string): void {
  const us = (n: number) => ((n * 1e6) / HZ / commands).toFixed(3).padStart(7);
  console.log(`${header}\n${samples} samples, ${us(samples).trim()} µs of CPU per command (perf, ${HZ} Hz)\n`);
  console.log('| part | share | µs per command | of which kernel |\n|---|---|---|---|');
  for (const [part, e] of [...parts].sort((a, b) => b[1].samples - a[1].samples)) {
    console.log(`| ${part} | ${((100 * e.samples) / samples).toFixed(1)}% | ${us(e.samples).trim()} | ${us(e.kernel).trim()} |`);
  }
  if (!DETAIL) return;
  for (const [part, e] of [...parts].sort((a, b) => b[1].samples - a[1].samples)) {
    console.log(`\n${part}:`);
    for (const [leaf, n] of [...e.leaves].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${us(n)} µs  ${leaf}`);
  }
}

const benchmark = (port: number, n: number) =>
  run('redis-benchmark', ['-p', String(port), '-c', '50', '-n', String(n), '-r', '10000', '-t', TEST, '-P', PIPELINE, '--csv']);

async function record(): Promise<string> {
  const port = await freePort();
  const args = ['--perf-basic-prof', path.join(ROOT, 'bin/respgate'), 'dev', '--port', String(port), '--log-level', 'warn'];
  for (const flag of ['--http-port', '--vector-port', '--queue-port']) args.push(flag, String(await freePort()));
  process.env.RESPGATE_NO_BUNDLE = '1';
  const dev = await startUntilReady(process.execPath, args, /ready/);
  const data = path.join(tmpdir(), `dev-stack-split-${dev.pid}.data`);
  try {
    await benchmark(port, WARMUP);
    const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-p', String(dev.pid), '-o', data], {
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 500)); // perf attached
    const [cpu, sys] = [cpuUs(dev.pid), sysUs(dev.pid)];
    const { stdout } = await benchmark(port, REQUESTS);
    const procCpu = (cpuUs(dev.pid) - cpu) / REQUESTS;
    const procSys = (sysUs(dev.pid) - sys) / REQUESTS;
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
    const rps = stdout.trim().split('\n')[1].split(',')[1].replace(/"/g, '');
    console.log(`/proc: ${procCpu.toFixed(2)} µs CPU per command (system ${procSys.toFixed(2)}); ${rps} req/s`);
    // Symbols while the perf map of the process still exists.
    const { stdout: script } = await run('perf', ['script', '-F', '+pid', '-i', data], { maxBuffer: 1 << 30 });
    return script;
  } finally {
    dev.child.kill('SIGTERM');
    rmSync(data, { force: true });
    rmSync(`/tmp/perf-${dev.pid}.map`, { force: true });
  }
}

const script = SCRIPT ? readFileSync(SCRIPT, 'utf8') : await record();
if (!SCRIPT && option('--save')) writeFileSync(option('--save')!, script);
report(split(script), REQUESTS, `${TEST.toUpperCase()} -c 50 -P ${PIPELINE} -n ${REQUESTS} through \`respgate dev\` of ${ROOT}`);
