// Starts a private redis-server on a free loopback port, with no persistence files left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { RedisConnection, type RedisEndpoint } from './connection.js';

export interface EmbeddedRedis {
  endpoint: RedisEndpoint;
  stop(): Promise<void>;
}

export interface EmbeddedRedisOptions {
  /** redis-server executable; default `redis-server` from PATH. */
  binary?: string;
  port?: number;
  /** Number of logical databases; the Area B store has exactly one, like the real service. */
  databases?: number;
  /** Password of the `default` user; generated when absent, none when null (test oracles). */
  password?: string | null;
}

/** Finds a free TCP port on loopback (the OS picks one; a short race with other processes remains). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startEmbeddedRedis(options: EmbeddedRedisOptions = {}): Promise<EmbeddedRedis> {
  const binary = options.binary ?? 'redis-server';
  const password = options.password === null ? undefined : (options.password ?? randomBytes(24).toString('base64url'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-redis-'));
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    // Config comes from stdin ('-') so the password never appears on a command line.
    const args = [
      '-',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--databases',
      String(options.databases ?? 16),
      '--logfile',
      '',
      '--loglevel',
      'warning',
    ];
    const child = spawn(binary, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    child.stdin!.on('error', () => undefined);
    // An ACL user directive rather than requirepass: CONFIG GET requirepass then reveals nothing.
    child.stdin!.end(password === undefined ? '' : `user default on >${password} ~* &* +@all\n`);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const endpoint: RedisEndpoint = { host: '127.0.0.1', port, password };
    const ready = await waitUntilReady(port, password, exited, spawnError);
    if (ready === true) {
      return { endpoint, stop: () => stopChild(child, exited, dir) };
    }
    child.kill('SIGKILL');
    if (ready instanceof Error && (ready as NodeJS.ErrnoException).code === 'ENOENT') {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`'${binary}' was not found: install Redis 7 (Debian: apt-get install redis-server) or run 'npm run setup'`);
    }
    if (attempt >= 3 || options.port !== undefined) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start on port ${port}: ${stderr.trim() || String(ready)}`);
    }
    // The port was taken between choosing and binding: try another one.
  }
}

async function waitUntilReady(
  port: number,
  password: string | undefined,
  exited: Promise<number | null>,
  spawnError: Promise<Error>,
): Promise<true | Error | string> {
  let stop: true | Error | string | undefined;
  void exited.then((code) => (stop ??= `exited with code ${code}`));
  void spawnError.then((err) => (stop ??= err));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (stop !== undefined) return stop;
    try {
      const conn = await RedisConnection.open({ host: '127.0.0.1', port, password }, 500);
      conn.close();
      return true;
    } catch (err) {
      if (/WRONGPASS|NOAUTH/.test(String(err))) return String(err);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return 'timed out after 10 s';
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
}
