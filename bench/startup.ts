// Startup weight of the sidecar (issue 25): how long `respgate proxy` takes from spawn to its first
// PONG, and its RSS once idle, next to a bare `node` process, median of several runs.
// The proxy gets an upstream that refuses connections (127.0.0.1:1): PING is answered by the proxy
// itself, so nothing but the proxy's own start is measured.
// With --connections N it then opens N client connections (each answered one PING), and reads the
// RSS again after they idled.
//   npx tsx bench/startup.ts [--runs 5] [--connections 2000] [--root <checkout with a fresh build>]…
// Each --root is measured in turn, interleaved run by run (default: this checkout); run
// `npm run build` first: bin/respgate runs dist/ only when it is newer than src/.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const runs = Number(valueOf('--runs') ?? 5);
const roots = valuesOf('--root');
if (roots.length === 0) roots.push(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const connections = Number(valueOf('--connections') ?? 0);
const IDLE_MS = 1500;

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

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return kb / 1024;
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
}

/** Spawns `args`, and measures the time to its first PONG on `port` and its RSS after IDLE_MS. */
async function startRun(args: string[], port: number): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, RESPGATE_LOG_LEVEL: 'silent' } });
  try {
    while (!(await ping(port))) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      if (performance.now() - t0 > 20_000) throw new Error(`${args.join(' ')}: no PONG within 20 s`);
      await sleep(2);
    }
    const readyMs = performance.now() - t0;
    await sleep(IDLE_MS);
    const rss = rssMiB(child.pid!);
    if (!connections) return { readyMs, rss };
    const open = await openIdle(port, connections);
    await sleep(IDLE_MS);
    const rssConnected = rssMiB(child.pid!);
    for (const s of open) s.destroy();
    return { readyMs, rss, rssConnected };
  } finally {
    await stop(child);
  }
}

async function proxyRun(root: string): Promise<Run> {
  const port = await freePort();
  const bin = path.join(root, 'bin/respgate');
  return startRun([bin, 'proxy', '--port', String(port), '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x'], port);
}

/** The floor: a bare node process that answers PONG (node's own start, nothing loaded). */
async function bareNodeRun(): Promise<Run> {
  const port = await freePort();
  const code = `require('net').createServer((s) => s.on('data', () => s.write('+PONG\\r\\n'))).listen(${port}, '127.0.0.1')`;
  return startRun(['-e', code], port);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const results = new Map(['bare node', ...roots].map((r) => [r, [] as Run[]]));
for (let i = 0; i < runs; i++) {
  for (const root of ['bare node', ...roots]) results.get(root)!.push(root === 'bare node' ? await bareNodeRun() : await proxyRun(root));
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
}
