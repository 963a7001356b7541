// Embedded redis-servers end with the process that started them, and never pile up (docs/decisions.md,
// "Embedded redis-servers die with their parent"). Two layers:
// - on Linux each server is exec'd through util-linux `setpriv --pdeathsig TERM`, so the kernel sends it
//   SIGTERM (a clean shutdown that writes its append-only file) when its parent dies, even by SIGKILL;
// - everywhere, a pid file names each server with its start time, and the next start ends a server
//   whose owner died (`reclaim`), so a machine without setpriv still never keeps more than one set.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/** A process as a pid file records it: the pid, and its start time to tell it from a later one with the same pid. */
export interface ProcessId {
  pid: number;
  /** Clock ticks after boot (Linux /proc/<pid>/stat field 22); undefined where there is no /proc. */
  startTime?: number;
}

/** State (R, S, Z…) and start time of a process from /proc, or undefined (no such process, or no /proc). */
function procStat(pid: number): { state: string; startTime: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], startTime: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

/** The start time of a running process, or undefined (no such process, or no /proc). */
export function processStartTime(pid: number): number | undefined {
  return procStat(pid)?.startTime;
}

export function currentProcess(): ProcessId {
  return { pid: process.pid, startTime: processStartTime(process.pid) };
}

/** Whether the recorded process is still the one running under that pid. */
export function isRunning(id: ProcessId): boolean {
  try {
    process.kill(id.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(id.pid);
  // A zombie has ended (only its exit status waits for a parent that may never collect it).
  if (stat?.state === 'Z') return false;
  return id.startTime === undefined || stat?.startTime === id.startTime;
}

export function writeProcessFile(file: string, id: ProcessId, flag: 'w' | 'wx' = 'w'): void {
  writeFileSync(file, JSON.stringify(id) + '\n', { flag, mode: 0o600 });
}

/** The process a pid file names, or undefined when the file is absent or unreadable. */
export function readProcessFile(file: string): ProcessId | undefined {
  try {
    const o = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProcessId>;
    if (typeof o.pid !== 'number' || !Number.isInteger(o.pid) || o.pid <= 0) return undefined;
    return { pid: o.pid, startTime: typeof o.startTime === 'number' ? o.startTime : undefined };
  } catch {
    return undefined;
  }
}

/** Whether the process of that pid is a redis-server (where the start time cannot tell, e.g. macOS). */
function looksLikeRedis(id: ProcessId): boolean {
  if (id.startTime !== undefined) return true; // pid and start time name exactly the process we started
  const ps = spawnSync('ps', ['-o', 'command=', '-p', String(id.pid)], { encoding: 'utf8' });
  return ps.status === 0 && ps.stdout.includes('redis-server');
}

/**
 * Ends the redis-server a pid file names if it still runs (its owner died), waits for it to exit (SIGTERM
 * first so it finishes its append-only file, SIGKILL after `graceMs`), and removes the file.
 */
export async function reclaim(pidFile: string, graceMs = 5000): Promise<boolean> {
  const id = readProcessFile(pidFile);
  let ended = false;
  if (id && isRunning(id) && looksLikeRedis(id)) {
    signal(id.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (isRunning(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (isRunning(id)) signal(id.pid, 'SIGKILL');
    for (let i = 0; i < 500 && isRunning(id); i++) await new Promise((r) => setTimeout(r, 10));
    if (isRunning(id)) throw new Error(`redis-server ${id.pid} (named by ${pidFile}) does not end: stop it, then start again`);
    ended = true;
  }
  rmSync(pidFile, { force: true });
  return ended;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

let pdeathsig: boolean | undefined;

/** Whether `setpriv --pdeathsig` works here (util-linux 2.33 and later; Linux only). */
export function canUsePdeathsig(): boolean {
  if (pdeathsig === undefined) {
    const probe = process.platform === 'linux' ? spawnSync('setpriv', ['--pdeathsig', 'TERM', 'true'], { stdio: 'ignore' }) : undefined;
    pdeathsig = probe !== undefined && probe.status === 0;
  }
  return pdeathsig;
}

/**
 * Spawns `binary` so that it receives SIGTERM when this process dies. The kernel ties the signal to the
 * thread that forked: only the main thread lives as long as the process, so a worker thread spawns plainly
 * (the pid file still lets the next start reclaim such a server).
 */
export function spawnTiedToParent(binary: string, args: string[], options: SpawnOptions): ChildProcess {
  if (isMainThread && canUsePdeathsig()) return spawn('setpriv', ['--pdeathsig', 'TERM', '--', binary, ...args], options);
  return spawn(binary, args, options);
}
