// The command line as a user meets it: help, configuration errors (clear message, exit code 1).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { onCleanup, trackChild } from './helpers/cleanup.js';
import { runRespgate } from './helpers/respgate-cli.js';

const bin = path.resolve(__dirname, '../bin/respgate');

describe('respgate CLI', () => {
  it('--help lists the three commands, and each command lists every flag with its environment variable', async () => {
    const top = await runRespgate(['--help']);
    expect(top.code).toBe(0);
    for (const cmd of ['dev', 'proxy', 'platform']) expect(top.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    const dev = await runRespgate(['dev', '--help']);
    for (const flag of [
      '--port',
      '--http-port',
      '--host',
      '--token',
      '--readonly-token',
      '--redis-url',
      '--requirepass',
      '--upstream-timeout',
      '--max-request-size',
      '--daily-request-limit',
      '--log-level',
    ]) {
      expect(dev.stdout, flag).toContain(flag);
    }
    const proxy = await runRespgate(['proxy', '--help']);
    for (const flag of ['--upstream-url', '--upstream-token', '--metrics-port', '--max-batch']) expect(proxy.stdout, flag).toContain(flag);
    // Every option line names its environment variable.
    const options = (dev.stdout + proxy.stdout).split('\n').filter((l) => /^\s+--[a-z]/.test(l) && !l.includes('--help'));
    const text = (dev.stdout + proxy.stdout).replace(/\s+/g, ' '); // help lines wrap
    for (const line of options) {
      const flag = /^--[a-z][a-z0-9-]*/.exec(line.trim())![0]; // a wrapped line may start with a flag name too
      expect(text, flag).toMatch(new RegExp(`env: RESPGATE_${flag.slice(2).toUpperCase().replace(/-/g, '_')}\\b`));
    }
  });

  it('refuses bad values with the flag, the value and the expected form, exit code 1', async () => {
    const r = await runRespgate(['platform', '--http-port', '99999']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("configuration error: --http-port must be a TCP port number from 0 to 65535, got '99999'");
    const size = await runRespgate(['platform', '--max-request-size', 'lots']);
    expect(size.stderr).toContain('--max-request-size must be a size such as 1048576, 512kb or 10mb');
    const url = await runRespgate(['platform', '--redis-url', 'http://x']);
    expect(url.stderr).toContain('--redis-url must start with redis://');
    const format = await runRespgate(['proxy', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 't'], {
      RESPGATE_UPSTREAM_FORMAT: 'xml',
    });
    expect(format.code).toBe(1);
    expect(format.stderr).toContain("configuration error: --upstream-format must be auto, resp2 or json (got 'xml')");
  });

  it('RESPGATE_ALLOW_UNAUTHENTICATED=0 is off: an exposed proxy without a password is still refused', async () => {
    const args = ['proxy', '--host', '0.0.0.0', '--port', '0', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 't'];
    const off = await runRespgate(args, { RESPGATE_ALLOW_UNAUTHENTICATED: '0' });
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('the proxy binds 0.0.0.0 (reachable from the network) and clients need no authentication');
    const bad = await runRespgate(args, { RESPGATE_ALLOW_UNAUTHENTICATED: 'maybe' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "configuration error: --allow-unauthenticated must be yes or no (also true/false, 1/0, on/off), got 'maybe'",
    );
  });

  it('proxy without an upstream says where to give one', async () => {
    const r = await runRespgate(['proxy'], { UPSTASH_REDIS_REST_URL: '', UPSTASH_REDIS_REST_TOKEN: '', RESPGATE_UPSTREAM_URL: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no upstream: give --upstream-url (or RESPGATE_UPSTREAM_URL / UPSTASH_REDIS_REST_URL)');
    const redisUrl = await runRespgate(['proxy', '--upstream-url', 'redis://127.0.0.1:6379', '--upstream-token', 't']);
    expect(redisUrl.stderr).toContain('a redis:// URL is a Redis server, not a REST API');
  });

  it('a busy proxy port gives the likely cause and the fix, and leaves nothing running', async () => {
    // The embedded redis-servers are started through a wrapper that records their pids, with a
    // private TMPDIR for their data directories: afterwards neither a process nor a directory remains.
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'respgate-cli-test-'));
    const pids = path.join(tmp, 'pids');
    const wrapper = path.join(tmp, 'redis-server');
    writeFileSync(wrapper, `#!/bin/sh\necho $$ >> '${pids}'\nexec redis-server "$@"\n`, { mode: 0o755 });
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const r = await runRespgate(['dev', '--port', String(port), '--http-port', '0', '--log-level', 'silent', '--redis-server', wrapper], {
        TMPDIR: tmp,
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain('--port or RESPGATE_PORT');
      // The data store and the internal store were started, and are gone with their directories.
      const started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
      expect(started).toHaveLength(2);
      for (const pid of started) expect(alive(pid), `redis-server ${pid}`).toBe(false);
      expect(readdirSync(tmp).filter((f) => f.startsWith('respgate-redis-'))).toEqual([]);
    } finally {
      busy.close();
      // If the CLI did leave one running, the test fails above and still stops it here.
      const left = existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').map(Number).filter(alive) : [];
      for (const pid of left) process.kill(pid, 'SIGKILL');
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('--redis-url: a Redis the platform does not own', () => {
  it('the banner says what the platform creates there and that it stays; after exit exactly that is left, and the commands it gives remove it', async () => {
    const store = await startEmbeddedRedis({ password: 'store-pass-1' });
    onCleanup(() => store.stop());
    const url = `redis://:store-pass-1@127.0.0.1:${store.endpoint.port}`;
    const child = trackChild(
      spawn(process.execPath, [bin, 'platform', '--redis-url', url, '--http-port', '0', '--log-level', 'silent', '--token', 'tok-1'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 20 s:\n${output}`)), 20_000);
      const onData = (d: Buffer) => {
        output += d.toString();
        if (output.includes('Press Ctrl+C')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then((code) => reject(new Error(`respgate exited with ${code}:\n${output}`)));
    });
    expect(output).toContain(`data store                    redis://:***@127.0.0.1:${store.endpoint.port}`);
    expect(output).toContain('created there and kept after exit: ACL user default_ro, function library respgate_json');
    expect(output).toContain('(remove with: ACL DELUSER default_ro; FUNCTION DELETE respgate_json)');
    expect(output).toContain('Press Ctrl+C to stop (the data stays in the Redis of --redis-url).');
    expect(output).not.toMatch(/deleted on exit|not kept|embedded/);
    expect(output).not.toContain('store-pass-1');
    // A user's keys: a string and a JSON document (which loads the function library).
    const rest = /export UPSTASH_REDIS_REST_URL=(\S+)/.exec(output)![1];
    const send = (cmd: string[]) =>
      fetch(rest, { method: 'POST', headers: { Authorization: 'Bearer tok-1' }, body: JSON.stringify(cmd) }).then((r) => r.json());
    expect(await send(['SET', 'greeting', 'hello'])).toEqual({ result: 'OK' });
    expect(await send(['JSON.SET', 'doc', '$', '{"a":1}'])).toEqual({ result: 'OK' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const redis = new IORedis({ port: store.endpoint.port, password: 'store-pass-1', lazyConnect: true });
    onCleanup(() => redis.disconnect());
    await redis.connect();
    expect((await redis.keys('*')).sort()).toEqual(['doc', 'greeting']);
    expect((await redis.acl('USERS')).sort()).toEqual(['default', 'default_ro']);
    const libraries = (await redis.call('FUNCTION', 'LIST')) as unknown[][];
    expect(libraries.map((l) => l[1])).toEqual(['respgate_json']);
    // The banner's removal commands work and leave the user's data alone.
    expect(await redis.acl('DELUSER', 'default_ro')).toBe(1);
    expect(await redis.call('FUNCTION', 'DELETE', 'respgate_json')).toBe('OK');
    expect(await redis.acl('USERS')).toEqual(['default']);
    expect(await redis.call('FUNCTION', 'LIST')).toEqual([]);
    expect(await redis.get('greeting')).toBe('hello');
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
