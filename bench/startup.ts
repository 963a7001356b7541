// Startup weight of the sidecar (issue 25): how long `respgate proxy` takes from spawn to its first
// PONG, and its RSS once idle, next to a bare `node` process, median of several runs.
// The proxy gets an upstream that refuses connections (127.0.0.1:1): PING is answered by the proxy
// itself, so nothing but the proxy's own start is measured.
// With --connections N it then opens N client connections (each answered one PING), and reads the
// RSS again after they idled.
// With --benchmark the upstream is a real one instead (`respgate platform` of this checkout, its own
// process, shared by every run), and after the idle figures each proxy serves
// `redis-benchmark -c 50 [-P <--pipeline>] -n <--requests, 200000> -t set,get`; its RSS is read 1.5 s and 10 s after
// (the proxy gives memory back 0.5 s after the load's last collection, the young generation ~0.4 s
// later, src/cli/heap-release.ts: both readings come after the release),
// with the peak (VmHWM).
//   npx tsx bench/startup.ts [--runs 5] [--connections 2000] [--benchmark [--requests N] [--pipeline P]] [--packed] [--root <dir>[::VAR=value,…]]…
// Each --root is measured in turn, interleaved run by run (default: this checkout); `::VAR=value`
// adds environment variables (e.g. `--root . --root .::RESPGATE_NO_BUNDLE=1`). Run `npm run build`
// first: bin/respgate runs dist/ only when it is newer than src/. With --packed each root is measured
// as npm packs it (its files as `npm pack` lists them, copied to a temporary folder, with the root's
// node_modules): an installed sidecar has no src/, so its start does not look for newer sources (in a
// checkout bin/respgate reads the modification time of every file of src/: ~13 ms on a 2-core machine).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUntilReady } from './process-stack.js';

const args = process.argv.slice(2);
const runs = Number(valueOf('--runs') ?? 5);
const roots = valuesOf('--root');
if (roots.length === 0) roots.push(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const connections = Number(valueOf('--connections') ?? 0);
const benchmark = args.includes('--benchmark');
const requests = Number(valueOf('--requests') ?? 200_000);
const pipeline = Number(valueOf('--pipeline') ?? 1);
const packed = args.includes('--packed');
const IDLE_MS = 1500;
const QUIET_MS = 10_000;
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function valueOf(flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

function valuesOf(flag: string): string[] {
  return args.flatMap((a, i) => (a === flag && args[i + 1] ? [args[i + 1]] : []));
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** One PING on a fresh connection: true when +PONG comes back. The connection stays open with `keep`. */
function ping(port: number, keep?: net.Socket[]): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      if (keep) keep.push(socket);
      else socket.destroy();
      resolve(d.toString() === '+PONG\r\n');
    });
  });
}

/** Opens n connections that each had one PING answered, 100 at a time. */
async function openIdle(port: number, n: number): Promise<net.Socket[]> {
  const open: net.Socket[] = [];
  for (let i = 0; i < n; i += 100) {
    const ok = await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => ping(port, open)));
    if (ok.includes(false)) throw new Error('a connection was refused');
  }
  return open;
}

function rssMiB(pid: number, field = 'VmRSS'): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return kb / 1024;
}

/** The upstream of --benchmark: `respgate platform` of this checkout on a free port, ready. */
async function startPlatform(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const args = [path.join(here, 'bin/respgate'), 'platform', '--http-port', String(port), '--token', 'x', '--log-level', 'warn'];
  const { child } = await startUntilReady(process.execPath, args, /ready/);
  return { child, url: `http://127.0.0.1:${port}` };
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function redisBenchmark(port: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      'redis-benchmark',
      ['-p', String(port), '-c', '50', '-P', String(pipeline), '-n', String(requests), '-t', 'set,get', '-q'],
      (err, stdout) => (err ? reject(err) : resolve(stdout.replace(/.*\r/g, '').trim().replace(/\n/g, '; '))),
    ),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

interface Run {
  readyMs: number;
  rss: number;
  /** RSS with `connections` idle clients. */
  rssConnected?: number;
  /** --benchmark: RSS 1.5 s and 10 s after redis-benchmark, its peak, and what redis-benchmark said. */
  afterLoad?: { rss: number; quiet: number; peak: number; said: string; cpuUsPerCommand: number };
}

/** Spawns `args`, and measures the time to its first PONG on `port` and its RSS after IDLE_MS. */
async function startRun(args: string[], port: number, env: Record<string, string> = {}, load = false): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, RESPGATE_LOG_LEVEL: 'silent', ...env } });
  try {
    while (!(await ping(port))) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      if (performance.now() - t0 > 20_000) throw new Error(`${args.join(' ')}: no PONG within 20 s`);
      await sleep(2);
    }
    const readyMs = performance.now() - t0;
    await sleep(IDLE_MS);
    const run: Run = { readyMs, rss: rssMiB(child.pid!) };
    if (connections) {
      const open = await openIdle(port, connections);
      await sleep(IDLE_MS);
      run.rssConnected = rssMiB(child.pid!);
      for (const s of open) s.destroy();
    }
    if (load) {
      const cpu0 = cpuSeconds(child.pid!);
      const said = await redisBenchmark(port);
      const cpuUsPerCommand = ((cpuSeconds(child.pid!) - cpu0) / (2 * requests)) * 1e6;
      await sleep(IDLE_MS);
      const rss = rssMiB(child.pid!);
      await sleep(QUIET_MS - IDLE_MS);
      run.afterLoad = { rss, quiet: rssMiB(child.pid!), peak: rssMiB(child.pid!, 'VmHWM'), said, cpuUsPerCommand };
    }
    return run;
  } finally {
    await stop(child);
  }
}

let upstream = 'http://127.0.0.1:1';

/** `dir[::VAR=value,…]`: a checkout, and the environment its proxy runs with. */
function parseRoot(spec: string): { dir: string; env: Record<string, string> } {
  const [dir, vars = ''] = spec.split('::');
  return {
    dir: path.resolve(dir),
    env: Object.fromEntries(vars ? vars.split(',').map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]) : []),
  };
}

/** --packed: a root's files as `npm pack` ships them, in a temporary folder, with the root's node_modules. */
const packedCopies = new Map<string, string>();
function packedCopy(dir: string): string {
  let copy = packedCopies.get(dir);
  if (copy) return copy;
  copy = mkdtempSync(path.join(os.tmpdir(), 'respgate-packed-'));
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' }));
  for (const { path: file } of listing[0].files as { path: string }[]) cpSync(path.join(dir, file), path.join(copy, file));
  symlinkSync(path.join(dir, 'node_modules'), path.join(copy, 'node_modules'));
  packedCopies.set(dir, copy);
  return copy;
}

async function proxyRun(spec: string): Promise<Run> {
  const port = await freePort();
  const { dir, env } = parseRoot(spec);
  const bin = path.join(packed ? packedCopy(dir) : dir, 'bin/respgate');
  return startRun([bin, 'proxy', '--port', String(port), '--upstream-url', upstream, '--upstream-token', 'x'], port, env, benchmark);
}

/** The floor: a bare node process that answers PONG (node's own start, nothing loaded). */
async function bareNodeRun(): Promise<Run> {
  const port = await freePort();
  const code = `require('net').createServer((s) => s.on('data', () => s.write('+PONG\\r\\n'))).listen(${port}, '127.0.0.1')`;
  return startRun(['-e', code], port);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const platform = benchmark ? await startPlatform() : undefined;
if (platform) upstream = platform.url;
const results = new Map(['bare node', ...roots].map((r) => [r, [] as Run[]]));
try {
  for (let i = 0; i < runs; i++) {
    for (const root of ['bare node', ...roots]) results.get(root)!.push(root === 'bare node' ? await bareNodeRun() : await proxyRun(root));
  }
} finally {
  if (platform) await stop(platform.child);
  for (const copy of packedCopies.values()) rmSync(copy, { recursive: true, force: true });
}
const figures = (xs: number[], digits: number) => `${median(xs).toFixed(digits)} [${xs.map((x) => x.toFixed(digits)).join(', ')}]`;
for (const [root, r] of results) {
  const connected = connections
    ? `, with ${connections} idle connections ${figures(
        r.map((x) => x.rssConnected!),
        1,
      )} MiB`
    : '';
  console.log(
    `${root === 'bare node' ? 'bare node (answers PONG)' : `respgate proxy, ${root}`}: first PONG ${figures(
      r.map((x) => x.readyMs),
      0,
    )} ms, idle RSS ${figures(
      r.map((x) => x.rss),
      1,
    )} MiB${connected} (median of ${runs})`,
  );
  const loaded = r.filter((x) => x.afterLoad).map((x) => x.afterLoad!);
  if (loaded.length)
    console.log(
      `  after redis-benchmark -c 50${pipeline > 1 ? ` -P ${pipeline}` : ''} -n ${requests} -t set,get: RSS ${figures(
        loaded.map((x) => x.rss),
        1,
      )} MiB, 10 s later ${figures(
        loaded.map((x) => x.quiet),
        1,
      )} MiB, peak ${figures(
        loaded.map((x) => x.peak),
        1,
      )} MiB; proxy CPU per command ${figures(
        loaded.map((x) => x.cpuUsPerCommand),
        2,
      )} µs; redis-benchmark: ${loaded.map((x) => x.said).join(' | ')}`,
    );
}
