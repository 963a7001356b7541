// System calls and context switches of a process over a span, for bench/cpu-per-command.ts --syscalls.
// System calls are counted by the kernel's tracepoints through `perf stat` (counting only: no
// per-event record, so the process runs at its normal speed, unlike under strace); context switches
// come from /proc/<pid>/task/*/status and need no tool.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The calls counted one by one; every other one is in `all` (raw_syscalls:sys_enter). */
export const SYSCALLS = ['read', 'write', 'writev', 'epoll_pwait', 'epoll_wait', 'epoll_ctl', 'futex', 'setsockopt'] as const;
const EVENTS = ['raw_syscalls:sys_enter', ...SYSCALLS.map((s) => `syscalls:sys_enter_${s}`)];

/** Voluntary and involuntary context switches of every thread of a process so far. */
export function contextSwitches(pid: number): { voluntary: number; involuntary: number } {
  let voluntary = 0;
  let involuntary = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
    voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { voluntary, involuntary };
}

export interface SyscallCounter {
  /** Stops counting: calls by name (`all` = every system call), or undefined when perf could not count. */
  stop(): Promise<Record<string, number> | undefined>;
}

/**
 * Starts counting the system calls of `pid` (all threads), resolved once perf is attached; needs `perf`
 * and the tracepoints (root, or perf_event_paranoid ≤ 1 with tracefs readable).
 */
export async function countSyscalls(pid: number): Promise<SyscallCounter> {
  const out = path.join(tmpdir(), `syscalls-${pid}-${Date.now()}.csv`);
  let perf: ChildProcess;
  try {
    perf = spawn('perf', ['stat', '-x', ',', '-o', out, '-e', EVENTS.join(','), '-p', String(pid)], { stdio: 'ignore' });
  } catch {
    return { stop: async () => undefined };
  }
  let failed = false;
  perf.on('error', () => (failed = true));
  // perf attaches to the tracepoints asynchronously: a short wait so the span is counted whole.
  await new Promise((r) => setTimeout(r, 300));
  return {
    stop: async () => {
      if (failed || perf.exitCode !== null) return undefined;
      await new Promise<void>((resolve) => {
        perf.once('exit', () => resolve());
        perf.kill('SIGINT');
      });
      try {
        const counts: Record<string, number> = {};
        for (const line of readFileSync(out, 'utf8').split('\n')) {
          const [value, , event] = line.split(',');
          if (!event || !/^\d+$/.test(value)) continue;
          counts[event === 'raw_syscalls:sys_enter' ? 'all' : event.replace('syscalls:sys_enter_', '')] = Number(value);
        }
        return counts.all === undefined ? undefined : counts;
      } catch {
        return undefined;
      } finally {
        rmSync(out, { force: true });
      }
    },
  };
}
