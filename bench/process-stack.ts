// Processes of the CPU and latency benches: a plain redis-server, the platform and a standalone
// proxy started from a checkout's bin/respgate, and CPU time and write calls read from /proc.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';

const run = promisify(execFile);
const TICK_US = 1e6 / 100; // CLK_TCK = 100 on Linux

/** A progress line on stderr (stdout carries the results). */
export function log(msg: string): void {
  process.stderr.write(msg + '\n');
}

/** User + system CPU time of a process (all its threads) in µs. */
export function cpuUs(pid: number): number {
  return userUs(pid) + sysUs(pid);
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
export const userUs = (pid: number): number => Number(statFields(pid)[11]) * TICK_US; // utime (field 14)
export const sysUs = (pid: number): number => Number(statFields(pid)[12]) * TICK_US; // stime (field 15)

/** Write system calls (write, writev) a process made so far: /proc/<pid>/io syscw. */
export function writeCalls(pid: number): number {
  return Number(/syscw:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface Proc {
  pid: number;
  child: ChildProcess;
  out: string;
}

/** Starts a process and waits until its stdout matches `ready`. */
export async function startUntilReady(cmd: string, args: string[], ready: RegExp): Promise<Proc> {
  // Throw-away stores: no .respgate-data, so no append-only file (builds before the data directory had none).
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RESPGATE_EPHEMERAL: '1' } });
  const proc: Proc = { pid: child.pid!, child, out: '' };
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      proc.out += d;
      if (ready.test(proc.out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)));
  });
  return proc;
}

export function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.child.once('exit', () => resolve());
    proc.child.kill('SIGTERM');
  });
}

/** The child process of `parent` whose command line names `port` (the embedded redis-servers). */
export function childWithPort(parent: number, port: number): number {
  for (const task of readdirSync(`/proc/${parent}/task`)) {
    const children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    for (const c of children) {
      const cmdline = readFileSync(`/proc/${c}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(`:${port}`) || cmdline.includes(` ${port}`)) return Number(c);
    }
  }
  throw new Error(`no child of ${parent} listens on ${port}`);
}

export interface Stack {
  platform: Proc;
  proxy: Proc;
  dataPid: number;
  proxyPort: number;
  /** The platform's HTTP port and token (Area B). */
  httpPort: number;
  token: string;
}

/** A platform (with its data redis-server) and a standalone proxy in front of it, from checkout `dir`. */
export async function startStack(dir: string, name: string, nodeArgs: (name: string) => string[] = () => []): Promise<Stack> {
  const bin = path.join(dir, 'bin/respgate');
  const httpPort = await freePort();
  const token = 'bench-' + Math.random().toString(36).slice(2);
  const platform = await startUntilReady(
    process.execPath,
    [...nodeArgs(`${name}platform`), bin, 'platform', '--http-port', String(httpPort), '--token', token, '--log-level', 'warn'],
    /embedded redis-server on 127\.0\.0\.1:\d+\D/,
  );
  const dataPort = Number(/embedded redis-server on 127\.0\.0\.1:(\d+)/.exec(platform.out)![1]);
  const dataPid = childWithPort(platform.pid, dataPort);
  const proxyPort = await freePort();
  const proxy = await startUntilReady(
    process.execPath,
    [
      ...nodeArgs(`${name}proxy`),
      bin,
      'proxy',
      '--port',
      String(proxyPort),
      '--upstream-url',
      `http://127.0.0.1:${httpPort}`,
      '--upstream-token',
      token,
      '--log-level',
      'warn',
    ],
    /proxy ready.*\n/,
  );
  log(
    `${name || 'this build'}: proxy :${proxyPort} (pid ${proxy.pid}) → platform :${httpPort} (pid ${platform.pid}) → data redis-server :${dataPort} (pid ${dataPid})`,
  );
  return { platform, proxy, dataPid, proxyPort, httpPort, token };
}

/** A plain redis-server, ready once it answers PING. */
export async function startRedis(port: number): Promise<Proc> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (let i = 0; i < 100; i++) {
    try {
      const { stdout } = await run('redis-cli', ['-p', String(port), 'PING']);
      if (stdout.trim() === 'PONG') break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { pid: child.pid!, child, out: '' };
}

/** req/s per test name from redis-benchmark's `--csv` output. */
export function csvRates(stdout: string): Map<string, number> {
  const rates = new Map<string, number>();
  for (const line of stdout.trim().split('\n').slice(1)) {
    const [name, rps] = line.split(',').map((f) => f.replace(/"/g, ''));
    rates.set(name, Number(rps));
  }
  return rates;
}
