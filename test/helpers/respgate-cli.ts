// Runs bin/respgate as a user would, for the tests of its command line: once to its exit, or as a
// long-running process that is ready once its banner says so (tracked, so no process outlives a run).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { trackChild } from './cleanup.js';

const run = promisify(execFile);
const bin = path.resolve(__dirname, '../../bin/respgate');

/** Extra environment of a respgate process; `undefined` removes a variable. */
export type Env = Record<string, string | undefined>;

/** The environment of a respgate under test: throw-away stores (--ephemeral) unless `env` removes RESPGATE_EPHEMERAL. */
export function respgateEnv(env: Env, base: Env = {}): NodeJS.ProcessEnv {
  const merged: Env = { ...process.env, RESPGATE_EPHEMERAL: '1', ...base, ...env };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
}

/** Starts a long-running respgate process and resolves with its output once `ready` appears (bounded). */
export function startRespgate(
  args: string[],
  ready: RegExp,
  env: Env = {},
  options: { cwd?: string } = {},
): Promise<{ child: ChildProcess; output: string }> {
  const child = trackChild(
    spawn(process.execPath, [bin, ...args], {
      env: respgateEnv(env, { RESPGATE_LOG_LEVEL: 'silent' }),
      cwd: options.cwd,
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
  env: Env = {},
  options: { cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: respgateEnv(env), cwd: options.cwd, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
