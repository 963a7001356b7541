// Everything a test file starts (platforms, proxies, redis-servers, child processes) is registered
// here and stopped after the file's own afterAll hooks (test/helpers/teardown.ts), even when a step
// failed half-way and the test's handle to it was never assigned.
import { spawn, type ChildProcess } from 'node:child_process';

const pending = new Set<() => Promise<void>>();

/** Runs `stop` at the end of the test file unless it was called before; returns the once-only stop. */
export function onCleanup(stop: () => Promise<void> | void): () => Promise<void> {
  let done: Promise<void> | undefined;
  const once = () => {
    pending.delete(once);
    done ??= Promise.resolve().then(stop);
    return done;
  };
  pending.add(once);
  return once;
}

/** A started resource whose stop() is registered (and runs once, whoever calls it first). */
export function tracked<T extends { stop(): Promise<void> }>(resource: T): T {
  const stop = onCleanup(resource.stop.bind(resource));
  resource.stop = stop;
  return resource;
}

/** A child process killed at the end of the test file if it is still running. */
export function trackChild<T extends ChildProcess>(child: T): T {
  const stop = onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.once('exit', () => void stop());
  return child;
}

/** Runs a tracked process to its end without blocking this process's event loop (a proxy may run in it). */
export function runProcess(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = trackChild(spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Stops everything still registered, newest first; one failure does not keep the others running. */
export async function cleanupAll(): Promise<void> {
  const errors: unknown[] = [];
  for (const stop of [...pending].reverse()) await stop().catch((err: unknown) => errors.push(err));
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} cleanup(s) failed`);
}

/** How many resources are still registered (for the tests of this module). */
export function registered(): number {
  return pending.size;
}
