// Runs bin/respgate as a user would, for the tests of its command line: once to its exit, or as a
// long-running process that is ready once its banner says so (tracked, so no process outlives a run).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { trackChild } from './cleanup.js';

const run = promisify(execFile);
const bin = path.resolve(__dirname, '../../bin/respgate');

/** Starts a long-running respgate process and resolves with its output once `ready` appears (bounded). */
export function startRespgate(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; output: string }> {
  const child = trackChild(
    spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, RESPGATE_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`respgate not ready within 20 s:\n${output}`)), 20_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`respgate exited with ${code}:\n${output}`));
    });
  });
}

export function stopRespgate(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Runs bin/respgate to its exit (20 s at most); resolves with exit code and output whatever the exit code. */
export async function runRespgate(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
