// The dev stack keeps its data (docs/platform-kv.md, "Data directory"), tested as a user meets it: real
// `respgate dev` processes on a data directory, stopped by SIGTERM and by SIGKILL, started again. Keys
// written through the proxy port and the REST API, vectors and a delayed queue message come back; the
// delayed message is delivered once. --ephemeral leaves nothing; a directory of another version or
// vector configuration, or in use by another stack, gets a clear error; no redis-server outlives its stack.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { isRunning, processStartTime, readProcessFile, type ProcessId } from '../../src/platform/redis/process-guard.js';
import { onCleanup, trackChild } from '../helpers/cleanup.js';
import { startDestination } from '../helpers/destination.js';
import { runRespgate, startRespgate, stopRespgate } from '../helpers/respgate-cli.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'persist-test-token';
/** Keep the data: the tests' default (RESPGATE_EPHEMERAL, vitest.config.ts) is removed for these processes. */
const KEEP = { RESPGATE_EPHEMERAL: undefined };
const ARGS = ['dev', '--port', '0', '--http-port', '0', '--vector-port', 'off', '--queue-port', 'off', '--token', TOKEN];
const READY = /Press Ctrl\+C to stop/;

const scratch = mkdtempSync(path.join(os.tmpdir(), 'respgate-persist-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Stack {
  child: ChildProcess;
  output: string;
  proxyPort: number;
  url: string;
}

async function startStack(dataDir: string, extra: string[] = []): Promise<Stack> {
  const { child, output } = await startRespgate([...ARGS, '--data-dir', dataDir, ...extra], READY, KEEP);
  return {
    child,
    output,
    proxyPort: Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]),
    url: /UPSTASH_REDIS_REST_URL=(\S+)/.exec(output)![1],
  };
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function call(url: string, pathAndQuery: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url + pathAndQuery, { ...init, headers: { Authorization: `Bearer ${TOKEN}`, ...init.headers } });
  const text = await res.text();
  expect(res.status, `${pathAndQuery}: ${text}`).toBeLessThan(300);
  return JSON.parse(text);
}

async function withProxy<T>(port: number, fn: (r: IORedis) => Promise<T>): Promise<T> {
  const r = new IORedis({ port, lazyConnect: true, maxRetriesPerRequest: 1 });
  onCleanup(() => r.disconnect());
  await r.connect();
  try {
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

/** The servers a data directory's pid files name (the embedded stores of the stack using it). */
function serversOf(dataDir: string): ProcessId[] {
  return ['kv', 'internal'].map((role) => readProcessFile(path.join(dataDir, role, 'redis.pid'))).filter((p) => p !== undefined);
}

/** Writes through all three APIs, and publishes a message delayed by `delay`; returns its id. */
async function writeEverything(s: Stack, tag: string, destUrl: string, delay: string): Promise<string> {
  await withProxy(s.proxyPort, async (r) => {
    expect(await r.set(`proxy:${tag}`, `via the proxy ${tag}`)).toBe('OK');
    expect(await r.rpush(`list:${tag}`, 'a', 'b', 'c')).toBe(3);
  });
  expect(await call(s.url, `/set/rest:${tag}/via%20REST`)).toEqual({ result: 'OK' });
  const vector = Array.from({ length: 384 }, (_, i) => (i === 7 ? 1 : 0));
  expect(
    await call(s.url, '/vector/dense/upsert', { method: 'POST', body: JSON.stringify({ id: `v-${tag}`, vector, metadata: { tag } }) }),
  ).toEqual({ result: 'Success' });
  const published = await call(s.url, `/queue/v2/publish/${destUrl}/delayed/${tag}`, {
    method: 'POST',
    headers: { 'Upstash-Delay': delay },
    body: `delayed ${tag}`,
  });
  return published.messageId as string;
}

async function expectEverything(s: Stack, tag: string): Promise<void> {
  await withProxy(s.proxyPort, async (r) => {
    expect(await r.get(`proxy:${tag}`)).toBe(`via the proxy ${tag}`);
    expect(await r.lrange(`list:${tag}`, 0, -1)).toEqual(['a', 'b', 'c']);
    expect(await r.get(`rest:${tag}`)).toBe('via REST');
  });
  const fetched = await call(s.url, '/vector/dense/fetch', {
    method: 'POST',
    body: JSON.stringify({ ids: [`v-${tag}`], includeMetadata: true }),
  });
  expect(fetched.result).toEqual([{ id: `v-${tag}`, metadata: { tag } }]);
}

describe('the dev stack keeps its data', () => {
  it('after a SIGTERM and after a kill -9, with a delayed message delivered once after each restart', async () => {
    const dataDir = path.join(scratch, 'restarts');
    const dest = await startDestination();
    onCleanup(() => dest.close());
    try {
      // 1. SIGTERM: everything is there afterwards.
      let s = await startStack(dataDir);
      expect(s.output).toContain(`kept in ${dataDir}`);
      const first = await writeEverything(s, 'term', dest.url, '4s');
      await stopRespgate(s.child);
      expect(serversOf(dataDir)).toEqual([]); // stopped cleanly: no server left to reclaim
      s = await startStack(dataDir);
      await expectEverything(s, 'term');

      // 2. kill -9, more than a second after the writes (appendfsync everysec).
      const second = await writeEverything(s, 'kill', dest.url, '4s');
      await new Promise((r) => setTimeout(r, 1500));
      const servers = serversOf(dataDir);
      expect(servers).toHaveLength(2);
      await kill9(s.child);
      // The servers end with the process that started them.
      await until(() => servers.every((p) => !isRunning(p)), 'the embedded redis-servers to end', 5000);
      s = await startStack(dataDir);
      await expectEverything(s, 'term');
      await expectEverything(s, 'kill');

      // Both delayed messages are delivered after the restarts, once each.
      await dest.waitFor(2, 15_000);
      await new Promise((r) => setTimeout(r, 1000));
      const ids = dest.received.map((r) => r.headers['upstash-message-id']);
      expect(ids.sort()).toEqual([first, second].sort());
      expect(dest.received.map((r) => r.body.toString()).sort()).toEqual(['delayed kill', 'delayed term']);
      await stopRespgate(s.child);
    } finally {
      await dest.close();
    }
  }, 90_000);

  it('ACL users made with ACL SETUSER, and their REST tokens, survive a SIGTERM and a kill -9', async () => {
    const dataDir = path.join(scratch, 'acl');
    const aclFile = path.join(dataDir, 'kv', 'users.acl');
    const command = (s: Stack, args: string[], token = TOKEN) =>
      fetch(s.url, { method: 'POST', body: JSON.stringify(args), headers: { Authorization: `Bearer ${token}` } }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { result?: unknown; error?: string },
      }));
    let s = await startStack(dataDir);
    try {
      expect((await command(s, ['ACL', 'SETUSER', 'alice', 'on', '>alice-pw', '~app:*', '+@all'])).body).toEqual({ result: 'OK' });
      expect((await command(s, ['ACL', 'SETUSER', 'bob', 'on', '>bob-pw', '~*', '+@read'])).body).toEqual({ result: 'OK' });
      const aliceToken = (await command(s, ['ACL', 'RESTTOKEN', 'alice', 'alice-pw'])).body.result as string;
      expect((await command(s, ['SET', 'app:k', 'v'], aliceToken)).body).toEqual({ result: 'OK' });
      // The file is the server's own ACL SAVE output (hashed passwords), private to the user.
      await until(() => existsSync(aclFile) && readFileSync(aclFile, 'utf8').includes('user bob'), 'users.acl to list bob', 5000);
      expect(readFileSync(aclFile, 'utf8')).not.toContain('alice-pw');

      await stopRespgate(s.child);
      s = await startStack(dataDir);
      expect((await command(s, ['GET', 'app:k'], aliceToken)).body).toEqual({ result: 'v' });
      const refused = await command(s, ['SET', 'other', 'v'], aliceToken);
      expect(refused.body.error).toMatch(/^NOPERM/);
      expect((await command(s, ['ACL', 'RESTTOKEN', 'bob', 'bob-pw'])).body.result).toEqual(expect.any(String));
      expect((await command(s, ['ACL', 'DELUSER', 'bob'])).body).toEqual({ result: 1 });
      await until(() => !readFileSync(aclFile, 'utf8').includes('user bob'), 'users.acl without bob', 5000);

      await kill9(s.child);
      s = await startStack(dataDir);
      expect((await command(s, ['ACL', 'RESTTOKEN', 'bob', 'bob-pw'])).body.error).toMatch(
        /^ERR Wrong password or user "bob" does not exist/,
      );
      expect((await command(s, ['GET', 'app:k'], aliceToken)).body).toEqual({ result: 'v' });
      // The platform's own token still works: the default user's password is this start's.
      expect((await command(s, ['ACL', 'WHOAMI'])).body).toEqual({ result: 'default' });
    } finally {
      await stopRespgate(s.child);
    }
  }, 90_000);

  it('a second stack on the same data directory gets a clear error and changes nothing', async () => {
    const dataDir = path.join(scratch, 'locked');
    const s = await startStack(dataDir);
    try {
      const second = await runRespgate([...ARGS, '--data-dir', dataDir], KEEP);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`data directory ${dataDir} is in use by another respgate (pid ${s.child.pid})`);
      expect(second.stderr).toContain('give this one another --data-dir');
      await withProxy(s.proxyPort, async (r) => expect(await r.ping()).toBe('PONG'));
    } finally {
      await stopRespgate(s.child);
    }
    // After the stop, the directory is free again.
    const again = await startStack(dataDir);
    await stopRespgate(again.child);
  }, 60_000);

  it('a data directory of a newer format or of another vector configuration is refused with what to do', async () => {
    const dataDir = path.join(scratch, 'incompatible');
    await stopRespgate((await startStack(dataDir)).child);
    const manifestFile = path.join(dataDir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    expect(manifest).toMatchObject({ format: 1, vectorIndexes: expect.arrayContaining([expect.objectContaining({ name: 'dense' })]) });

    const config = path.join(scratch, 'vector.json');
    writeFileSync(config, JSON.stringify({ indexes: [{ name: 'dense', type: 'DENSE', dimension: 8 }] }));
    const other = await runRespgate([...ARGS, '--data-dir', dataDir, '--vector-config', config], KEEP);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      `vector index 'dense' in data directory ${dataDir} holds vectors of DENSE (dimension 384, COSINE), and is now configured as DENSE (dimension 8, COSINE): ` +
        'restore its configuration (--vector-config), or give the new index another name, or use another --data-dir (or --ephemeral)',
    );

    writeFileSync(manifestFile, JSON.stringify({ ...manifest, format: 99 }));
    const newer = await runRespgate([...ARGS, '--data-dir', dataDir], KEEP);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toContain(`data directory ${dataDir} has format 99, written by a newer respgate; this one reads format 1`);

    const dir = mkdtempSync(path.join(scratch, 'foreign-'));
    writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const refused = await runRespgate([...ARGS, '--data-dir', dir], KEEP);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${dir} is not a respgate data directory (it holds notes.txt and no manifest.json)`);
    expect(readdirSync(dir)).toEqual(['notes.txt']);

    const both = await runRespgate([...ARGS, '--data-dir', dir, '--ephemeral'], KEEP);
    expect(both.stderr).toContain('configuration error: give --data-dir (keep the data there) or --ephemeral (keep nothing), not both');
  }, 60_000);

  it('--ephemeral (the tests default) leaves nothing behind, and the default data directory is ./.respgate-data', async () => {
    const cwd = mkdtempSync(path.join(scratch, 'cwd-'));
    const tmp = mkdtempSync(path.join(scratch, 'tmp-'));
    const eph = await startRespgate([...ARGS, '--ephemeral'], READY, { ...KEEP, TMPDIR: tmp }, { cwd });
    expect(eph.output).toContain('--ephemeral: the embedded stores are deleted on exit');
    const stores = () => readdirSync(tmp).filter((e) => e.startsWith('respgate-redis-'));
    expect(stores()).toHaveLength(2);
    await stopRespgate(eph.child);
    expect(readdirSync(cwd)).toEqual([]);
    expect(stores()).toEqual([]);

    // No --token: the generated tokens are kept with the data, so pasted environment lines stay valid.
    const noToken = ARGS.slice(0, -2);
    const token = (output: string) => /UPSTASH_REDIS_REST_TOKEN=(\S+)/.exec(output)![1];
    const kept = await startRespgate(noToken, READY, { ...KEEP, TMPDIR: tmp }, { cwd });
    expect(kept.output).toContain(`kept in ${path.join(cwd, '.respgate-data')}`);
    await stopRespgate(kept.child);
    expect(readdirSync(cwd)).toEqual(['.respgate-data']);
    expect(existsSync(path.join(cwd, '.respgate-data', 'lock'))).toBe(false);
    const again = await startRespgate(noToken, READY, { ...KEEP, TMPDIR: tmp }, { cwd });
    await stopRespgate(again.child);
    expect(token(again.output)).toBe(token(kept.output));
    expect(token(eph.output)).toBe(TOKEN);
  }, 60_000);

  it('no orphans: after three kill -9 of the stack no redis-server of it runs, and an abandoned one is reclaimed', async () => {
    const dataDir = path.join(scratch, 'orphans');
    const tmp = mkdtempSync(path.join(scratch, 'tmp-'));
    // Every redis-server started goes through this wrapper, which records its pid (exec keeps the pid).
    const pids = path.join(tmp, 'pids');
    const wrapper = path.join(tmp, 'redis-server');
    writeFileSync(wrapper, `#!/bin/sh\necho $$ >> '${pids}'\nexec redis-server "$@"\n`, { mode: 0o755 });
    const alive = () =>
      readFileSync(pids, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((pid) => isRunning({ pid }));
    for (let i = 0; i < 3; i++) {
      const s = await startStack(dataDir, ['--redis-server', wrapper]);
      await kill9(s.child);
      await until(() => alive().length === 0, `no redis-server after kill -9 number ${i + 1}`, 5000);
    }
    // Where the kernel cannot end them (no setpriv), the next start does: a redis-server named by the
    // pid file of a stack that died is stopped before a new one opens the same files.
    const abandoned = trackChild(spawn('redis-server', ['--port', '0', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
    const exited = new Promise((resolve) => abandoned.once('exit', resolve));
    await until(() => processStartTime(abandoned.pid!) !== undefined, 'the abandoned server to start');
    writeFileSync(
      path.join(dataDir, 'kv', 'redis.pid'),
      JSON.stringify({ pid: abandoned.pid, startTime: processStartTime(abandoned.pid!) }),
    );
    await stopRespgate((await startStack(dataDir, ['--redis-server', wrapper])).child);
    await exited;
    expect(alive()).toEqual([]);
  }, 90_000);
});
