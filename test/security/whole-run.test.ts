// A whole run of the real CLI, as an operator runs it: the dev stack, a pass-through proxy and an
// ACL-users proxy in front of it, used with right and wrong tokens and passwords by redis-cli and
// ioredis (INFO, CLIENT LIST, MONITOR included). Then every log line of every process, and every
// reply the clients saw, is searched for each secret used; none may appear. The processes are
// stopped with SIGTERM and must exit 0 (graceful shutdown is tested with commands in flight below).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { trackChild } from '../helpers/cleanup.js';
import { RawClient } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';
import { startFaultServer } from '../proxy/faults-server.js';

const run = promisify(execFile);
const bin = path.resolve(__dirname, '../../bin/respgate');
const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Secrets of this run: long random-looking strings, so a hit is never a coincidence. */
const secret = (name: string) => `${name}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const S = {
  token: secret('tok'),
  readonly: secret('rotok'),
  requirepass: secret('pass'),
  filePass: secret('filepass'),
  wrongToken: secret('wrongtok'),
  alicePass: secret('alicepw'),
  aliceWrong: secret('alicewrong'),
  accountKey: secret('acctkey'),
  wrongPass: secret('wrongpass'),
};

interface Proc {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

function start(args: string[], ready: RegExp, extraEnv: Record<string, string> = {}): Promise<Proc & { match: RegExpMatchArray }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(RESPGATE_|UPSTASH_)/.test(k)) env[k] = v;
  env.RESPGATE_EPHEMERAL = '1'; // throw-away stores: nothing written into the working directory
  Object.assign(env, extraEnv);
  const child = trackChild(spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const p: Proc = { child, stdout: '', stderr: '', exited: new Promise((r) => child.once('exit', (code) => r(code))) };
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = p.stdout.match(ready);
      if (m)
        resolve({
          ...p,
          get stdout() {
            return p.stdout;
          },
          get stderr() {
            return p.stderr;
          },
          match: m,
        });
    };
    child.stdout!.on('data', (d: Buffer) => {
      p.stdout += d.toString();
      check();
    });
    child.stderr!.on('data', (d: Buffer) => {
      p.stderr += d.toString();
    });
    void p.exited.then((code) => reject(new Error(`respgate ${args[0]} exited (${code}) before it was ready: ${p.stderr}`)));
  });
}

describe('a whole run: no secret in any log line, error, INFO, CLIENT LIST or MONITOR', () => {
  it('uses every secret, then finds none of them', async () => {
    const passFile = path.join(dir, 'requirepass');
    writeFileSync(passFile, S.filePass + '\n');
    const dev = await start(
      [
        'dev',
        '--port',
        '0',
        '--http-port',
        '0',
        '--vector-port',
        '0',
        '--queue-port',
        '0',
        '--token',
        S.token,
        '--readonly-token',
        S.readonly,
        '--requirepass',
        S.requirepass,
        '--account-key',
        S.accountKey,
        '--log-level',
        'trace',
      ],
      /Key-value REST API\s+(http:\/\/\S+)[\s\S]*Press Ctrl\+C/,
    );
    const url = dev.match[1];
    const devPort = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(dev.stdout)![1]);
    const passThrough = await start(
      ['proxy', '--port', '0', '--upstream-url', url, '--log-level', 'trace'],
      /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/,
    );
    const acl = await start(
      [
        'proxy',
        '--port',
        '0',
        '--upstream-url',
        url,
        '--upstream-token',
        S.token,
        '--acl-users',
        '--requirepass-file',
        passFile,
        '--log-level',
        'trace',
      ],
      /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/,
    );
    const seen: string[] = []; // every reply the clients got
    const setUser = await fetch(`${url}/acl/setuser/alice/on/>${S.alicePass}/~*/+@all`, {
      headers: { authorization: `Bearer ${S.token}` },
    });
    expect(setUser.status).toBe(200);

    // The dev stack's proxy, with redis-cli.
    const cli = async (port: number, ...args: string[]) => {
      const r = await run('redis-cli', ['-p', String(port), '--no-auth-warning', ...args]).catch(
        (e: { stdout: string; stderr: string }) => e,
      );
      seen.push(r.stdout, r.stderr);
      return r.stdout;
    };
    expect((await cli(devPort, '-a', S.requirepass, 'SET', 'sec:k', 'v')).trim()).toBe('OK');
    expect(await cli(devPort, '-a', S.wrongPass, 'GET', 'sec:k')).toMatch(/WRONGPASS|NOAUTH/);
    expect(await cli(devPort, '-a', S.requirepass, 'CLIENT', 'LIST')).toMatch(/cmd=client\|list/);
    expect(await cli(devPort, '-a', S.requirepass, 'INFO')).toMatch(/redis_version/);

    // Pass-through: ioredis with the Standard token, the Read Only token and a wrong one.
    const ptPort = Number(passThrough.match[1]);
    const io = new IORedis({ port: ptPort, password: S.token, lazyConnect: true });
    await io.connect();
    seen.push(String(await io.get('sec:k')), (await io.client('LIST')) as string, await io.info());
    await io.quit();
    const ro = new IORedis({ port: ptPort, password: S.readonly, lazyConnect: true });
    await ro.connect();
    seen.push(String(await ro.set('sec:k', 'x').catch((e: Error) => e.message)));
    await ro.quit();
    const wrong = new IORedis({
      port: ptPort,
      password: S.wrongToken,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    wrong.on('error', (e: Error) => seen.push(e.message));
    seen.push(
      await wrong.connect().then(
        () => 'connected',
        (e: Error) => e.message,
      ),
    );
    wrong.disconnect();
    expect(seen.join('\n')).toContain('WRONGPASS');

    // Pass-through event streams: a subscriber and MONITOR with the Standard token, MONITOR refused
    // to the Read Only token; the streams carry the tokens in their requests, never in a log line.
    const sub = new IORedis({ port: ptPort, password: S.token, lazyConnect: true });
    await sub.connect();
    const message = new Promise<string[]>((resolve) => sub.once('message', (...args: string[]) => resolve(args)));
    expect(await sub.subscribe('sec:ch')).toBe(1);
    const mon = await RawClient.connect(ptPort);
    expect((await mon.call(['AUTH', S.token], ['MONITOR'])).map(String)).toEqual(['+OK\r\n', '+OK\r\n']);
    const roMon = await RawClient.connect(ptPort);
    const roReplies = (await roMon.call(['AUTH', S.readonly], ['MONITOR'])).map(String);
    seen.push(...roReplies);
    expect(roReplies[1]).toMatch(/^-NOPERM /);
    const publisher = new IORedis({ port: ptPort, password: S.token, lazyConnect: true });
    await publisher.connect();
    expect(await publisher.publish('sec:ch', 'hello')).toBe(1);
    expect(await message).toEqual(['sec:ch', 'hello']);
    await until(() => mon.peek().includes('sec:ch'), 'MONITOR to show the PUBLISH');
    seen.push(mon.peek());
    for (const c of [mon, roMon]) c.close();
    await Promise.all([sub.quit(), publisher.quit()]);

    // ACL users and the file password, with MONITOR watching.
    const aclPort = Number(acl.match[1]);
    const monitor = await RawClient.connect(aclPort);
    expect((await monitor.call(['AUTH', S.filePass], ['MONITOR'])).map(String)).toEqual(['+OK\r\n', '+OK\r\n']);
    const c = await RawClient.connect(aclPort);
    const replies = (
      await c.call(
        ['AUTH', 'alice', S.aliceWrong],
        ['AUTH', 'alice', S.alicePass],
        ['SET', 'sec:a', 'x'],
        ['AUTH', 'default', S.wrongPass],
        ['CLIENT', 'LIST'],
      )
    ).map(String);
    seen.push(...replies);
    expect(replies.slice(0, 3)).toEqual(['-WRONGPASS invalid username-password pair or user is disabled.\r\n', '+OK\r\n', '+OK\r\n']);
    await until(() => monitor.peek().includes('sec:a'), 'MONITOR to show the SET');
    seen.push(monitor.peek());
    monitor.close();
    c.close();

    for (const p of [acl, passThrough, dev]) p.child.kill('SIGTERM');
    expect(await Promise.all([acl.exited, passThrough.exited, dev.exited])).toEqual([0, 0, 0]);

    const logs = [dev.stderr, passThrough.stdout, passThrough.stderr, acl.stdout, acl.stderr].join('\n');
    expect(logs.split('\n').length).toBeGreaterThan(10); // trace level: there is something to search
    const everything = logs + '\n' + seen.join('\n');
    for (const [name, value] of Object.entries(S)) expect(everything.includes(value), `${name} appears`).toBe(false);
  }, 60_000);
});

describe("docs/security.md's pass-through example, as written", () => {
  it('with UPSTASH_REDIS_REST_TOKEN in its environment the proxy uses it and says so; without it, redis-cli -a <token> and --user default --pass work', async () => {
    const { startTestPlatform } = await import('../helpers/platform.js');
    const platform = await startTestPlatform();
    try {
      const fromEnv = await start(
        ['proxy', '--port', '0', '--upstream-url', platform.url],
        /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)[^\n]*\n[^\n]*\n(.*)\n/,
        { UPSTASH_REDIS_REST_TOKEN: platform.token },
      );
      expect(fromEnv.match[2]).toBe(
        '  upstream token from UPSTASH_REDIS_REST_TOKEN (unset it for pass-through: each client AUTHs with its own token)',
      );
      const envPort = fromEnv.match[1];
      expect((await run('redis-cli', ['-p', envPort, 'PING'])).stdout).toBe('PONG\n');
      const own = await start(
        ['proxy', '--port', '0', '--upstream-url', platform.url],
        /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)[^\n]*\n[^\n]*\n(.*)\n/,
      );
      expect(own.match[2]).toBe('  no --upstream-token: clients authenticate with their own REST token (AUTH <token>)');
      const port = own.match[1];
      const cli = (...args: string[]) => run('redis-cli', ['-p', port, '--no-auth-warning', ...args]).then((r) => r.stdout);
      expect(await cli('GET', 'docs:k')).toBe('NOAUTH Authentication required.\n\n');
      expect(await cli('-a', platform.token, 'SET', 'docs:k', 'v')).toBe('OK\n');
      expect(await cli('--user', 'default', '--pass', platform.token, 'GET', 'docs:k')).toBe('v\n');
      for (const p of [fromEnv, own]) p.child.kill('SIGTERM');
      expect(await Promise.all([fromEnv.exited, own.exited])).toEqual([0, 0]);
    } finally {
      await platform.stop();
    }
  }, 30_000);
});

describe('graceful shutdown (SIGTERM)', () => {
  it('stops accepting, answers the commands in flight, closes a blocked client at the bound, exits 0', async () => {
    const { startTestPlatform } = await import('../helpers/platform.js');
    const platform = await startTestPlatform();
    const fault = await startFaultServer(platform.url);
    try {
      let slow = false;
      fault.decide = () => (slow ? { kind: 'forward', delayMs: 700 } : { kind: 'forward' });
      const p = await start(
        [
          'proxy',
          '--port',
          '0',
          '--upstream-url',
          fault.url,
          '--upstream-token',
          platform.token,
          '--shutdown-timeout',
          '3000',
          '--log-level',
          'warn',
        ],
        /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/,
      );
      const port = Number(p.match[1]);
      const blocked = await RawClient.connect(port);
      const busy = await RawClient.connect(port);
      expect((await busy.call(['PING'])).map(String)).toEqual(['+PONG\r\n']);
      blocked.write('*3\r\n$5\r\nBLPOP\r\n$9\r\nsd:nolist\r\n$1\r\n0\r\n');
      slow = true;
      const inFlight = busy.call(['SET', 'sd:k', 'kept']);
      await until(() => fault.seen.some((r) => r.body.includes('sd:k')), 'the SET to reach the upstream');
      const started = Date.now();
      p.child.kill('SIGTERM');
      expect((await inFlight).map(String)).toEqual(['+OK\r\n']);
      // No new connections once it stops accepting.
      await until(
        async () =>
          !(await RawClient.connect(port).then(
            (c) => (c.close(), true),
            () => false,
          )),
        'the listener to close',
        3000,
      );
      await blocked.untilClosed(5000);
      expect(await p.exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(5000);
      const check = await fetch(`${platform.url}/get/sd:k`, { headers: { authorization: `Bearer ${platform.token}` } });
      expect(await check.json()).toEqual({ result: 'kept' });
    } finally {
      await fault.stop();
      await platform.stop();
    }
  }, 30_000);
});
