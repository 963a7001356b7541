// Startup weight of the sidecar (issue 25): how long `respgate proxy` takes from spawn to its first
// PONG, and its RSS once idle, next to a bare `node` process, median of several runs.
// The proxy gets an upstream that refuses connections (127.0.0.1:1): PING is answered by the proxy
// itself, so nothing but the proxy's own start is measured.
//   npx tsx bench/startup.ts [--runs 5] [--root <checkout with a fresh build>]…
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

/** One PING on a fresh connection: true when +PONG comes back. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString() === '+PONG\r\n');
    });
  });
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

/** Spawns `args`, and measures the time to its first PONG on `port` and its RSS after IDLE_MS. */
async function startRun(args: string[], port: number): Promise<{ readyMs: number; rss: number }> {
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
    return { readyMs, rss: rssMiB(child.pid!) };
  } finally {
    await stop(child);
  }
}

async function proxyRun(root: string): Promise<{ readyMs: number; rss: number }> {
  const port = await freePort();
  const bin = path.join(root, 'bin/respgate');
  return startRun([bin, 'proxy', '--port', String(port), '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x'], port);
}

/** The floor: a bare node process that answers PONG (node's own start, nothing loaded). */
async function bareNodeRun(): Promise<{ readyMs: number; rss: number }> {
  const port = await freePort();
  const code = `require('net').createServer((s) => s.on('data', () => s.write('+PONG\\r\\n'))).listen(${port}, '127.0.0.1')`;
  return startRun(['-e', code], port);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const results = new Map(['bare node', ...roots].map((r) => [r, { ready: [] as number[], rss: [] as number[] }]));
for (let i = 0; i < runs; i++) {
  for (const root of ['bare node', ...roots]) {
    const r = root === 'bare node' ? await bareNodeRun() : await proxyRun(root);
    results.get(root)!.ready.push(r.readyMs);
    results.get(root)!.rss.push(r.rss);
  }
}
for (const [root, r] of results) {
  console.log(
    `${root === 'bare node' ? 'bare node (answers PONG)' : `respgate proxy, ${root}`}: first PONG ${median(r.ready).toFixed(0)} ms ` +
      `[${r.ready.map((x) => x.toFixed(0)).join(', ')}], idle RSS ${median(r.rss).toFixed(1)} MiB [${r.rss.map((x) => x.toFixed(1)).join(', ')}] (median of ${runs})`,
  );
}
