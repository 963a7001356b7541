// The data directory of the dev stack (docs/platform-kv.md, "Data directory"): where the embedded
// redis-servers keep their append-only files (the key-value data in kv/; vector records, the queue and
// the platform's bookkeeping in internal/), with a manifest that says which format and vector
// configuration the data belongs to, and a lock so that two stacks never write the same files.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, DEFAULTS, generateToken, type PlatformConfig, type VectorIndexConfig } from '../config.js';
import { currentProcess, isRunning, type ProcessId } from './redis/process-guard.js';
import { DEFAULT_INDEXES } from './vector/config.js';

/** Version of the directory's layout; a directory of a later format is refused, never guessed at. */
export const DATA_DIR_FORMAT = 1;
const MANIFEST = 'manifest.json';
const LOCK = 'lock';
const SECRETS = 'secrets.json';
/** Everything respgate puts in a data directory; anything else means it is someone else's directory. */
const OWN_ENTRIES = new Set([MANIFEST, LOCK, SECRETS, 'kv', 'internal', `${MANIFEST}.tmp`, `${SECRETS}.tmp`]);

export type StoreRole = 'kv' | 'internal';

/** What must match for stored vectors to keep their meaning: kind, dimension, metric and embedders. */
export interface VectorIndexSignature {
  name: string;
  type: string;
  dimension?: number;
  similarityFunction?: string;
  denseEmbedder?: string;
  embeddingsModel?: string;
  sparseEmbedder?: string;
  /** Created at run time by the dev stack's vector side port (a VADD of a new dimension): served from its record, not from the configuration. */
  createdAtRunTime?: boolean;
}

export interface Manifest {
  format: number;
  /** redis-server version that last wrote the files (an older one may not read them). */
  redisServer?: string;
  vectorIndexes: VectorIndexSignature[];
}

export class DataDirError extends Error {}

export interface OpenDataDir {
  root: string;
  /** The redis-server directory of an embedded store, and its pid file (a server still named there is ended on start). */
  store(role: StoreRole): { dir: string; pidFile: string };
  /** Things the user should know (an index kept but not served). */
  notes: string[];
  /** Adds an index created at run time to the manifest, so a restart knows it (and refuses another index of its name). */
  recordVectorIndex(config: VectorIndexConfig): void;
  /** Releases the lock (after the embedded servers stopped). */
  close(): void;
}

/** --data-dir / --ephemeral → the directory to keep the data in (absolute), or undefined for a throw-away stack. */
export function resolveDataDir(flags: { dataDir?: string; ephemeral?: boolean }, cwd = process.cwd()): string | undefined {
  if (flags.ephemeral && flags.dataDir)
    throw new ConfigError('give --data-dir (keep the data there) or --ephemeral (keep nothing), not both');
  if (flags.ephemeral) return undefined;
  return path.resolve(cwd, flags.dataDir || DEFAULTS.dataDir);
}

/** Whether the platform keeps anything in its data directory: only embedded stores do. */
export function usesDataDir(config: Pick<PlatformConfig, 'dataDir' | 'redisUrl' | 'internalRedisUrl'>): config is { dataDir: string } {
  return config.dataDir !== undefined && !(config.redisUrl && config.internalRedisUrl);
}

/**
 * With a data directory, the tokens and the account key that were not given (flag or variable) are the
 * directory's kept ones instead of new random ones, so a restart keeps every credential a user pasted.
 */
export function keepGeneratedSecrets(
  config: PlatformConfig,
  given: { token?: string; readonlyToken?: string; accountKey?: string },
): PlatformConfig {
  if (!usesDataDir(config)) return config;
  const kept = keptSecrets(config.dataDir);
  return {
    ...config,
    token: given.token || kept.token,
    readonlyToken: given.readonlyToken || kept.readonlyToken,
    accountKey: given.accountKey || kept.accountKey,
  };
}

/** The vector configuration as the manifest records it. */
export function vectorSignatures(config: PlatformConfig): VectorIndexSignature[] {
  return (config.vectorIndexes ?? DEFAULT_INDEXES).map((c) => signatureOf(c, config));
}

function signatureOf(c: VectorIndexConfig, config: PlatformConfig): VectorIndexSignature {
  return {
    name: c.name,
    type: c.type,
    dimension: c.dimension,
    similarityFunction: c.type === 'SPARSE' ? undefined : (c.similarityFunction ?? 'COSINE'),
    denseEmbedder: c.denseEmbedder,
    embeddingsModel:
      c.denseEmbedder === 'openai' ? (c.embeddingsModel ?? config.vectorEmbeddingsModel ?? 'text-embedding-3-small') : undefined,
    sparseEmbedder: c.sparseEmbedder,
  };
}

/** Checks, locks and (re)writes the data directory; throws a DataDirError that says what to do. */
export function openDataDir(root: string, config: PlatformConfig): OpenDataDir {
  prepare(root);
  const releaseLock = lock(root);
  try {
    const stored = readManifest(root);
    const redisServer = redisServerVersion(config.redisServerBinary);
    const { manifest, notes } = reconcile(root, stored, vectorSignatures(config), redisServer);
    writeManifest(root, manifest);
    return {
      root,
      notes,
      recordVectorIndex(c) {
        const now = readManifest(root) ?? manifest;
        if (now.vectorIndexes.some((s) => s.name === c.name)) return;
        writeManifest(root, { ...now, vectorIndexes: [...now.vectorIndexes, { ...signatureOf(c, config), createdAtRunTime: true }] });
      },
      store: (role) => ({ dir: path.join(root, role), pidFile: path.join(root, role, 'redis.pid') }),
      close: releaseLock,
    };
  } catch (err) {
    releaseLock();
    throw err;
  }
}

/** Creates the directory, or checks that an existing one is respgate's (never writes into someone else's). */
function prepare(root: string): void {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const foreign = readdirSync(root).filter((e) => !OWN_ENTRIES.has(e));
  if (foreign.length > 0 && !exists(path.join(root, MANIFEST)))
    throw new DataDirError(
      `${root} is not a respgate data directory (it holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''} and no ${MANIFEST}): ` +
        'give another --data-dir (RESPGATE_DATA_DIR), or --ephemeral to keep nothing',
    );
}

/** Credentials the stack generates when they are not given, kept so that a restart does not change them. */
export interface KeptSecrets {
  token: string;
  readonlyToken: string;
  accountKey: string;
}

/**
 * The generated tokens of a data directory (`secrets.json`, mode 0600): made at its first start and read at
 * every later one, so the environment lines a user pasted keep working. Flags and variables still win.
 */
export function keptSecrets(root: string): KeptSecrets {
  prepare(root);
  const file = path.join(root, SECRETS);
  const fresh = generateToken;
  try {
    // Exclusive create: of two stacks starting at once, both read the first one's (the lock then refuses one).
    writeFileSync(file, JSON.stringify({ token: fresh(), readonlyToken: fresh(), accountKey: fresh() }, null, 2) + '\n', {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let o: Partial<KeptSecrets>;
  try {
    o = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeptSecrets>;
  } catch (err) {
    throw new DataDirError(`${file} is not valid JSON (${(err as Error).message}): delete it (new tokens are then made), or fix it`);
  }
  const ok = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  if (!ok(o.token) || !ok(o.readonlyToken) || !ok(o.accountKey))
    throw new DataDirError(`${file} lacks "token", "readonlyToken" or "accountKey": delete it (new tokens are then made), or fix it`);
  return { token: o.token, readonlyToken: o.readonlyToken, accountKey: o.accountKey };
}

function exists(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- lock

interface LockOwner extends ProcessId {
  host: string;
}

/**
 * One stack per directory: `lock` names the owner (pid, start time, host) and is created exclusively. A
 * lock whose owner no longer runs (a SIGKILL) is taken over; one held by a running process is an error.
 */
function lock(root: string): () => void {
  const file = path.join(root, LOCK);
  const me: LockOwner = { ...currentProcess(), host: os.hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(me) + '\n', { flag: 'wx', mode: 0o600 });
      return () => {
        const now = readLock(file);
        if (now && now.pid === me.pid && now.host === me.host) rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readLock(file);
    if (owner && owner.host !== me.host)
      throw new DataDirError(
        `data directory ${root} is in use by respgate on host ${owner.host} (pid ${owner.pid}): stop it there, or give this one another --data-dir; ` +
          `if it no longer runs, delete ${file}`,
      );
    if (owner && isRunning(owner))
      throw new DataDirError(
        `data directory ${root} is in use by another respgate (pid ${owner.pid}): stop that one, or give this one another --data-dir (RESPGATE_DATA_DIR), or --ephemeral`,
      );
    // Its owner died (or the file is half-written by one that did): take it over.
    rmSync(file, { force: true });
  }
  throw new DataDirError(`could not lock data directory ${root}: another respgate keeps taking it; start one at a time`);
}

function readLock(file: string): LockOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    if (typeof o.pid !== 'number' || typeof o.host !== 'string') return undefined;
    return { pid: o.pid, startTime: typeof o.startTime === 'number' ? o.startTime : undefined, host: o.host };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- manifest

function readManifest(root: string): Manifest | undefined {
  const file = path.join(root, MANIFEST);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(text) as Partial<Manifest>;
  } catch (err) {
    throw new DataDirError(`${file} is not valid JSON (${(err as Error).message}): restore it, or give another --data-dir`);
  }
  if (typeof m.format !== 'number' || !Array.isArray(m.vectorIndexes))
    throw new DataDirError(`${file} is not a respgate manifest (no "format" or "vectorIndexes"): restore it, or give another --data-dir`);
  return m as Manifest;
}

function writeManifest(root: string, m: Manifest): void {
  const tmp = path.join(root, `${MANIFEST}.tmp`);
  writeFileSync(tmp, JSON.stringify(m, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path.join(root, MANIFEST));
}

/** The manifest to write now, or a DataDirError when the stored data cannot be served as configured. */
export function reconcile(
  root: string,
  stored: Manifest | undefined,
  vector: VectorIndexSignature[],
  redisServer: string | undefined,
): { manifest: Manifest; notes: string[] } {
  if (!stored) return { manifest: { format: DATA_DIR_FORMAT, redisServer, vectorIndexes: vector }, notes: [] };
  if (stored.format > DATA_DIR_FORMAT)
    throw new DataDirError(
      `data directory ${root} has format ${stored.format}, written by a newer respgate; this one reads format ${DATA_DIR_FORMAT}: ` +
        'run the newer respgate on it, or give this one another --data-dir (or --ephemeral)',
    );
  if (stored.redisServer && redisServer && olderMinor(redisServer, stored.redisServer))
    throw new DataDirError(
      `data directory ${root} was written by redis-server ${stored.redisServer}, and this redis-server is ${redisServer}, which cannot read newer files: ` +
        `give a redis-server ${stored.redisServer} or later with --redis-server, or another --data-dir`,
    );
  const notes: string[] = [];
  const kept = new Map(stored.vectorIndexes.map((s) => [s.name, s]));
  for (const now of vector) {
    const was = kept.get(now.name);
    if (was && describe(was) !== describe(now))
      throw new DataDirError(
        `vector index '${now.name}' in data directory ${root} holds vectors of ${describe(was)}, and is now configured as ${describe(now)}: ` +
          'restore its configuration (--vector-config), or give the new index another name, or use another --data-dir (or --ephemeral)',
      );
  }
  const configured = new Set(vector.map((v) => v.name));
  for (const was of stored.vectorIndexes) {
    if (!configured.has(was.name) && !was.createdAtRunTime)
      notes.push(`vector index '${was.name}' (${describe(was)}) is kept in the data directory but not served: add it back to serve it`);
  }
  const vectorIndexes = [...vector, ...stored.vectorIndexes.filter((s) => !configured.has(s.name))];
  const newest = stored.redisServer && redisServer && olderMinor(redisServer, stored.redisServer) ? stored.redisServer : redisServer;
  return { manifest: { format: DATA_DIR_FORMAT, redisServer: newest ?? stored.redisServer, vectorIndexes }, notes };
}

/** "DENSE (dimension 384, COSINE, local embedder)": the fields that give stored vectors their meaning. */
function describe(s: VectorIndexSignature): string {
  const parts = [
    s.dimension !== undefined ? `dimension ${s.dimension}` : '',
    s.similarityFunction ?? '',
    s.denseEmbedder ? `${s.denseEmbedder} embedder${s.embeddingsModel ? ` ${s.embeddingsModel}` : ''}` : '',
    s.sparseEmbedder ? `${s.sparseEmbedder} sparse embedder` : '',
  ].filter(Boolean);
  return `${s.type}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** Whether version `a` (x.y.z) has a lower major.minor than `b`: the RDB format changes with minor releases. */
function olderMinor(a: string, b: string): boolean {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am < bm || (am === bm && an < bn);
}

/** `redis-server --version` → "7.0.15"; undefined when it cannot be run (the start then says why). */
function redisServerVersion(binary: string): string | undefined {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 5000 });
  return /v=(\d+\.\d+\.\d+)/.exec(r.stdout ?? '')?.[1];
}
