// The data directory's rules in process (src/platform/data-dir.ts, src/platform/redis/process-guard.ts):
// where it is, what its manifest accepts, its lock, and the reclaiming of servers whose owner died.
// The same behaviour through real `respgate dev` processes: persistence.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULTS, type PlatformConfig } from '../../src/config.js';
import {
  DataDirError,
  DATA_DIR_FORMAT,
  keepGeneratedSecrets,
  keptSecrets,
  openDataDir,
  reconcile,
  resolveDataDir,
  vectorSignatures,
  type VectorIndexSignature,
} from '../../src/platform/data-dir.js';
import { sweepAbandoned } from '../../src/platform/redis/embedded-server.js';
import {
  currentProcess,
  isRunning,
  processStartTime,
  readProcessFile,
  reclaim,
  writeProcessFile,
} from '../../src/platform/redis/process-guard.js';
import { trackChild } from '../helpers/cleanup.js';
import { until } from '../helpers/wait.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'respgate-data-dir-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const config: PlatformConfig = {
  host: '127.0.0.1',
  httpPort: 0,
  token: 't',
  readonlyToken: 'r',
  redisServerBinary: 'redis-server',
  maxRequestSize: DEFAULTS.maxRequestSize,
  dailyRequestLimit: 0,
  logLevel: 'silent',
};

const dense = (dimension: number): VectorIndexSignature => ({ name: 'docs', type: 'DENSE', dimension, similarityFunction: 'COSINE' });

/** A pid that no process has now: a child that already exited. */
async function deadProcess(): Promise<{ pid: number }> {
  const child = spawn('true');
  await new Promise((r) => child.once('exit', r));
  return { pid: child.pid! };
}

describe('where the data stays', () => {
  it('./.respgate-data of the working directory by default, --data-dir resolved against it, nothing with --ephemeral', () => {
    expect(resolveDataDir({}, '/home/me/app')).toBe('/home/me/app/.respgate-data');
    expect(resolveDataDir({ dataDir: 'data' }, '/home/me/app')).toBe('/home/me/app/data');
    expect(resolveDataDir({ dataDir: '/var/lib/respgate' }, '/home/me/app')).toBe('/var/lib/respgate');
    expect(resolveDataDir({ ephemeral: true }, '/home/me/app')).toBeUndefined();
    expect(() => resolveDataDir({ ephemeral: true, dataDir: 'x' })).toThrow(ConfigError);
    expect(() => resolveDataDir({ ephemeral: true, dataDir: 'x' })).toThrow(
      'give --data-dir (keep the data there) or --ephemeral (keep nothing), not both',
    );
  });
});

describe('the manifest', () => {
  it('a new directory records the format, the redis-server version and the vector indexes', () => {
    const { manifest, notes } = reconcile('/d', undefined, [dense(8)], '7.0.15');
    expect(manifest).toEqual({ format: DATA_DIR_FORMAT, redisServer: '7.0.15', vectorIndexes: [dense(8)] });
    expect(notes).toEqual([]);
  });

  it('the default indexes, with the model of an openai embedder (its vectors mean nothing to another model)', () => {
    const sigs = vectorSignatures({
      ...config,
      vectorEmbeddingsModel: 'm-1',
      vectorIndexes: [{ name: 'o', type: 'DENSE', dimension: 4, denseEmbedder: 'openai' }],
    });
    expect(sigs).toEqual([
      { name: 'o', type: 'DENSE', dimension: 4, similarityFunction: 'COSINE', denseEmbedder: 'openai', embeddingsModel: 'm-1' },
    ]);
    expect(vectorSignatures(config).map((s) => s.name)).toEqual(['dense', 'dense-data', 'sparse', 'hybrid']);
  });

  it('refuses a later format, an older redis-server, and an index whose vectors would change meaning', () => {
    const stored = { format: DATA_DIR_FORMAT, redisServer: '7.2.4', vectorIndexes: [dense(8)] };
    expect(() => reconcile('/d', { ...stored, format: DATA_DIR_FORMAT + 1 }, [dense(8)], '7.2.4')).toThrow(
      `data directory /d has format ${DATA_DIR_FORMAT + 1}, written by a newer respgate; this one reads format ${DATA_DIR_FORMAT}: ` +
        'run the newer respgate on it, or give this one another --data-dir (or --ephemeral)',
    );
    expect(() => reconcile('/d', stored, [dense(8)], '7.0.15')).toThrow(
      'data directory /d was written by redis-server 7.2.4, and this redis-server is 7.0.15, which cannot read newer files: ' +
        'give a redis-server 7.2.4 or later with --redis-server, or another --data-dir',
    );
    expect(() => reconcile('/d', stored, [dense(16)], '7.2.4')).toThrow(
      "vector index 'docs' in data directory /d holds vectors of DENSE (dimension 8, COSINE), and is now configured as DENSE (dimension 16, COSINE)",
    );
    expect(() => reconcile('/d', stored, [{ ...dense(8), similarityFunction: 'DOT_PRODUCT' }], '7.2.4')).toThrow(DataDirError);
    expect(() => reconcile('/d', stored, [{ ...dense(8), denseEmbedder: 'local' }], '7.2.4')).toThrow(
      'now configured as DENSE (dimension 8, COSINE, local embedder)',
    );
  });

  it('accepts a newer redis-server (and records it), added indexes, and keeps a removed index with a note', () => {
    const stored = { format: DATA_DIR_FORMAT, redisServer: '7.0.15', vectorIndexes: [dense(8)] };
    const sparse: VectorIndexSignature = { name: 'words', type: 'SPARSE', sparseEmbedder: 'bm25' };
    const { manifest, notes } = reconcile('/d', stored, [sparse], '7.2.4');
    expect(manifest).toEqual({ format: DATA_DIR_FORMAT, redisServer: '7.2.4', vectorIndexes: [sparse, dense(8)] });
    expect(notes).toEqual([
      "vector index 'docs' (DENSE (dimension 8, COSINE)) is kept in the data directory but not served: add it back to serve it",
    ]);
    // Added back with another dimension, it is still refused.
    expect(() => reconcile('/d', manifest, [dense(9)], '7.2.4')).toThrow(DataDirError);
  });

  it('openDataDir writes the manifest, and refuses one that is not JSON or not a manifest', () => {
    const dir = path.join(scratch, 'manifest');
    openDataDir(dir, config).close();
    const written = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(written).toMatchObject({ format: DATA_DIR_FORMAT, redisServer: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    writeFileSync(path.join(dir, 'manifest.json'), '{"format":');
    expect(() => openDataDir(dir, config)).toThrow(`${dir}/manifest.json is not valid JSON`);
    writeFileSync(path.join(dir, 'manifest.json'), '{"hello":1}');
    expect(() => openDataDir(dir, config)).toThrow(`${dir}/manifest.json is not a respgate manifest`);
    expect(existsSync(path.join(dir, 'lock'))).toBe(false); // a refused start leaves the lock free
  });

  it("refuses a directory holding someone else's files, and leaves them alone", () => {
    const dir = path.join(scratch, 'foreign');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'thesis.tex'), '');
    expect(() => openDataDir(dir, config)).toThrow(`${dir} is not a respgate data directory (it holds thesis.tex and no manifest.json)`);
    expect(readdirSync(dir)).toEqual(['thesis.tex']);
  });
});

describe('generated credentials', () => {
  it('are made at the first start and the same at every later one, in a file only the owner reads', () => {
    const dir = path.join(scratch, 'secrets');
    const first = keptSecrets(dir);
    expect(first.token).toMatch(/^[\w-]{43}$/);
    expect(new Set([first.token, first.readonlyToken, first.accountKey]).size).toBe(3);
    expect(keptSecrets(dir)).toEqual(first);
    expect(statSync(path.join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    // Given ones win; the others are the kept ones.
    const kept = keepGeneratedSecrets({ ...config, dataDir: dir, token: 'random-1', readonlyToken: 'random-2' }, { token: 'mine' });
    expect(kept).toMatchObject({ token: 'mine', readonlyToken: first.readonlyToken, accountKey: first.accountKey });
    // Without a data directory (--ephemeral, or both stores given by URL) nothing is kept.
    const eph = { ...config, token: 'random-1' };
    expect(keepGeneratedSecrets(eph, {})).toBe(eph);
    const remote = { ...config, dataDir: dir, redisUrl: 'redis://a:1', internalRedisUrl: 'redis://b:2' };
    expect(keepGeneratedSecrets(remote, {})).toBe(remote);
  });

  it('a damaged file is refused with what to do, and nothing is written into a foreign directory', () => {
    const dir = path.join(scratch, 'secrets-bad');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'secrets.json'), '{"token":"x"}');
    writeFileSync(path.join(dir, 'manifest.json'), '{}');
    expect(() => keptSecrets(dir)).toThrow(`${dir}/secrets.json lacks "token", "readonlyToken" or "accountKey": delete it`);
    writeFileSync(path.join(dir, 'secrets.json'), 'nope');
    expect(() => keptSecrets(dir)).toThrow(`${dir}/secrets.json is not valid JSON`);
    const foreign = path.join(scratch, 'secrets-foreign');
    mkdirSync(foreign);
    writeFileSync(path.join(foreign, 'photo.jpg'), '');
    expect(() => keptSecrets(foreign)).toThrow('is not a respgate data directory');
    expect(readdirSync(foreign)).toEqual(['photo.jpg']);
  });
});

describe('the lock', () => {
  it('a running owner keeps the directory; a dead one (a SIGKILL) leaves it to the next start', async () => {
    const dir = path.join(scratch, 'lock');
    const first = openDataDir(dir, config);
    // This process holds it: a second open (another stack) is refused.
    expect(() => openDataDir(dir, config)).toThrow(`data directory ${dir} is in use by another respgate (pid ${process.pid})`);
    first.close();
    expect(existsSync(path.join(dir, 'lock'))).toBe(false);
    // A lock left by a process that died is taken over.
    writeFileSync(path.join(dir, 'lock'), JSON.stringify({ ...(await deadProcess()), host: os.hostname() }));
    const second = openDataDir(dir, config);
    expect(JSON.parse(readFileSync(path.join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    second.close();
    // A lock of a process with this pid but another start time (the pid was reused) is stale too.
    writeFileSync(path.join(dir, 'lock'), JSON.stringify({ pid: process.pid, startTime: 1, host: os.hostname() }));
    openDataDir(dir, config).close();
    // Another host's lock cannot be checked: it is refused with how to free it.
    writeFileSync(path.join(dir, 'lock'), JSON.stringify({ pid: 1, host: 'elsewhere' }));
    expect(() => openDataDir(dir, config)).toThrow(
      `data directory ${dir} is in use by respgate on host elsewhere (pid 1): stop it there, or give this one another --data-dir; if it no longer runs, delete ${dir}/lock`,
    );
  });
});

describe('servers whose owner died', () => {
  it('pid files name a process by pid and start time', async () => {
    const me = currentProcess();
    expect(me.startTime).toBe(processStartTime(process.pid));
    expect(isRunning(me)).toBe(true);
    expect(isRunning({ pid: process.pid, startTime: me.startTime! + 1 })).toBe(false);
    expect(isRunning(await deadProcess())).toBe(false);
    const file = path.join(scratch, 'x.pid');
    writeProcessFile(file, me);
    expect(readProcessFile(file)).toEqual(me);
    writeFileSync(file, 'garbage');
    expect(readProcessFile(file)).toBeUndefined();
  });

  it('reclaim ends the redis-server a pid file names, and only a live one', async () => {
    const server = trackChild(spawn('redis-server', ['--port', '0', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
    const exited = new Promise((r) => server.once('exit', r));
    await until(() => processStartTime(server.pid!) !== undefined, 'redis-server to start');
    const file = path.join(scratch, 'redis.pid');
    // Another start time: not that process (a reused pid); it is left alone.
    writeProcessFile(file, { pid: server.pid!, startTime: processStartTime(server.pid!)! - 1 });
    expect(await reclaim(file)).toBe(false);
    expect(server.exitCode).toBeNull();
    writeProcessFile(file, { pid: server.pid!, startTime: processStartTime(server.pid!) });
    expect(await reclaim(file)).toBe(true);
    await exited;
    expect(isRunning({ pid: server.pid! })).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it('temporary directories of a dead owner are swept; those of a live owner or of unknown origin stay', async () => {
    const tmp = mkdtempSync(path.join(scratch, 'tmp-'));
    const make = (name: string, owner?: object) => {
      mkdirSync(path.join(tmp, name));
      if (owner) writeFileSync(path.join(tmp, name, 'owner.json'), JSON.stringify(owner));
    };
    make('respgate-redis-dead', await deadProcess());
    make('respgate-redis-alive', currentProcess());
    make('respgate-redis-unknown');
    make('other-dead', await deadProcess());
    expect(await sweepAbandoned(tmp)).toBe(1);
    expect(readdirSync(tmp).sort()).toEqual(['other-dead', 'respgate-redis-alive', 'respgate-redis-unknown']);
  });
});
