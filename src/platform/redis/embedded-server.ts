// Starts a private redis-server on a free loopback port: throw-away (a temporary directory removed on
// stop) or keeping its data in a given directory (append-only file, fsync every second). Either way the
// server ends with this process (process-guard.ts).
import { type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { errorText, RedisConnection, type RedisEndpoint } from './connection.js';
import {
  currentProcess,
  isRunning,
  processStartTime,
  readProcessFile,
  reclaim,
  spawnTiedToParent,
  writeProcessFile,
} from './process-guard.js';

export interface EmbeddedRedis {
  endpoint: RedisEndpoint;
  /** The server keeps its ACL users in a file of the data directory: ACL SAVE after each change keeps them. */
  aclFile: boolean;
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
  /**
   * Keep the data here: `appendonly yes`, `appendfsync everysec` (a SIGKILL of the machine loses at most
   * the last second of writes). The caller owns the directory (data-dir.ts holds its lock). Default: a
   * temporary directory, removed on stop.
   */
  dataDir?: string;
  /** Where the server's pid is recorded (default: inside its directory); a server still named there is ended first. */
  pidFile?: string;
}

const TEMP_PREFIX = 'respgate-redis-';
/** In a temporary directory: which process started the server (so a later start can tell it was abandoned). */
const OWNER_FILE = 'owner.json';
const PID_FILE = 'redis.pid';

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

/** The redis-server arguments; its config comes from stdin ('-') so the password never appears on a command line. */
function serverArgs(port: number, dir: string, persistent: boolean, databases: number, aclFile: string | undefined): string[] {
  return [
    '-',
    ...(aclFile ? ['--aclfile', aclFile] : []),
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'],
    ...['--databases', String(databases), '--logfile', '', '--loglevel', 'warning'],
    // No RDB snapshots either way: a kept store is its append-only file alone (one format to check and load).
    ...['--save', ''],
    ...(persistent ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']),
  ];
}

export async function startEmbeddedRedis(options: EmbeddedRedisOptions = {}): Promise<EmbeddedRedis> {
  const binary = options.binary ?? 'redis-server';
  const password = options.password === null ? undefined : (options.password ?? randomBytes(24).toString('base64url'));
  const persistent = options.dataDir !== undefined;
  let dir: string;
  if (options.dataDir !== undefined) {
    dir = options.dataDir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } else {
    await sweepAbandonedOnce();
    dir = mkdtempSync(path.join(os.tmpdir(), TEMP_PREFIX));
    writeProcessFile(path.join(dir, OWNER_FILE), currentProcess());
  }
  const pidFile = options.pidFile ?? path.join(dir, PID_FILE);
  const discard = () => {
    if (persistent) rmSync(pidFile, { force: true });
    else rmSync(dir, { recursive: true, force: true });
  };
  await reclaim(pidFile); // a server of a start that died, still holding this directory's files
  const aclFile = persistent && password !== undefined ? prepareAclFile(dir, password) : undefined;
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawnTiedToParent(binary, serverArgs(port, dir, persistent, options.databases ?? 16, aclFile), {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: Ctrl+C in a terminal (SIGINT to the whole foreground group) reaches only
      // respgate, which stops its users of the store first and the server last.
      detached: true,
    });
    // setpriv execs redis-server in place: the pid and its start time are the server's.
    if (child.pid !== undefined) writeProcessFile(pidFile, { pid: child.pid, startTime: processStartTime(child.pid) });
    child.stdin!.on('error', () => undefined);
    // An ACL user directive rather than requirepass: CONFIG GET requirepass then reveals nothing. A kept
    // store has it in its ACL file instead (Redis refuses users in both places).
    child.stdin!.end(password === undefined || aclFile ? '' : `user default on >${password} ~* &* +@all\n`);
    const output = collectOutput(child);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const endpoint: RedisEndpoint = { host: '127.0.0.1', port, password };
    const ready = await waitUntilReady(port, password, exited, spawnError);
    if (ready === true) {
      return { endpoint, aclFile: aclFile !== undefined, stop: () => stopChild(child, exited, discard, persistent ? 10_000 : 3000) };
    }
    child.kill('SIGKILL');
    await Promise.race([exited, spawnError]); // a binary that is not found never emits 'exit'
    const text = output();
    if (isNotFound(ready, text)) {
      discard();
      throw new Error(`'${binary}' was not found: install Redis 7 (Debian: apt-get install redis-server) or run 'npm run setup'`);
    }
    if (attempt >= 3 || options.port !== undefined) {
      discard();
      throw new Error(
        `redis-server did not start on port ${port}${persistent ? ` with the data in ${dir}` : ''}: ${text || String(ready)}`,
      );
    }
    // The port was taken between choosing and binding: try another one.
  }
}

/**
 * The ACL file of a kept store (`users.acl`, 0600): the users that database clients created with ACL
 * SETUSER, as the server's ACL SAVE wrote them, and the `default` user with this start's password (a
 * SHA-256 hash, as ACL SAVE writes passwords), replacing the last start's.
 */
function prepareAclFile(dir: string, password: string): string {
  const file = path.join(dir, 'users.acl');
  const kept = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && !/^user default /.test(line))
    : [];
  const hash = createHash('sha256').update(password).digest('hex');
  writeFileSync(file, [`user default on #${hash} ~* &* +@all`, ...kept].join('\n') + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

function isNotFound(ready: true | Error | string, output: string): boolean {
  return (ready instanceof Error && (ready as NodeJS.ErrnoException).code === 'ENOENT') || /failed to execute .*No such file/.test(output);
}

/** The server's log lines (stdout, logfile '') and stderr, the last 16 KB, for the error of a failed start. */
function collectOutput(child: ChildProcess): () => string {
  let text = '';
  const add = (d: Buffer) => {
    text = (text + d.toString()).slice(-16 * 1024);
  };
  child.stdout!.on('data', add);
  child.stderr!.on('data', add);
  return () => text.trim();
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
  let deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (stop !== undefined) return stop;
    try {
      const conn = await RedisConnection.open({ host: '127.0.0.1', port, password }, 500);
      try {
        // A kept store answers -LOADING while it reads its append-only file: wait as long as it makes progress.
        const [pong] = await conn.send([['PING']]);
        const err = errorText(pong);
        if (!err) return true;
        if (!/^LOADING/.test(err)) return err;
        deadline = Date.now() + 10_000;
      } finally {
        conn.close();
      }
    } catch (err) {
      if (/WRONGPASS|NOAUTH/.test(String(err))) return String(err);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return 'timed out after 10 s';
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, discard: () => void, graceMs: number): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    // SIGTERM: redis-server fsyncs its append-only file and exits.
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  discard();
}

let swept: Promise<void> | undefined;

/** Once per process: temporary directories whose owner died lose their server and are removed. */
function sweepAbandonedOnce(): Promise<void> {
  swept ??= sweepAbandoned(os.tmpdir()).then(
    () => undefined,
    () => undefined,
  );
  return swept;
}

/** Ends the servers of temporary directories whose owner process is gone, and removes the directories. */
export async function sweepAbandoned(tmp: string): Promise<number> {
  let removed = 0;
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const dir = path.join(tmp, name);
    const owner = readProcessFile(path.join(dir, OWNER_FILE));
    // No owner file: made by an older version or still being created; leave it.
    if (!owner || isRunning(owner)) continue;
    await reclaim(path.join(dir, PID_FILE));
    rmSync(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
