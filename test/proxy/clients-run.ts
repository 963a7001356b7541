// Runs the external clients of clients.test.ts (redis-cli, redis-benchmark, python3 + redis-py) and
// finds or installs a Python that has Debian's python3-redis.
import { spawn, spawnSync } from 'node:child_process';
import { trackChild } from '../helpers/cleanup.js';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion (killing it after `timeoutMs`), optionally feeding stdin. */
export function run(program: string, args: string[], options: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = trackChild(spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => undefined); // the program may exit before reading everything
    child.stdin.end(options.input ?? '');
  });
}

const hasRedisPy = (python: string) => spawnSync(python, ['-c', 'import redis'], { stdio: 'ignore' }).status === 0;

/**
 * A Python 3 interpreter that can `import redis` (Debian's python3-redis). `python3` on PATH may be
 * another installation (pyenv) that does not see Debian's dist-packages, so /usr/bin/python3 is
 * tried too. When none has it, python3-redis is installed with apt-get (as root, or with sudo).
 */
export function pythonWithRedis(): { python: string; installed: boolean } {
  const candidates = ['python3', '/usr/bin/python3'];
  for (const python of candidates) if (hasRedisPy(python)) return { python, installed: false };
  const asRoot = process.getuid?.() === 0;
  const apt = (args: string[]) =>
    spawnSync(asRoot ? 'apt-get' : 'sudo', asRoot ? args : ['-n', 'apt-get', ...args], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 240_000,
    });
  const install = () => apt(['install', '-y', '-qq', '--no-install-recommends', 'python3-redis']).status === 0;
  if (!install()) {
    apt(['update', '-qq']);
    if (!install())
      throw new Error(
        'python3-redis is missing and `apt-get install -y python3-redis` failed: install it (Debian package python3-redis) and rerun',
      );
  }
  for (const python of candidates) if (hasRedisPy(python)) return { python, installed: true };
  throw new Error('python3-redis was installed but no python3 can import redis (tried python3 and /usr/bin/python3)');
}
