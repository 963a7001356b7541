// Client authentication of the proxy (docs/security.md): pass-through tokens, the proxy password,
// ACL users; and the rule that a listener reachable from the network needs client authentication.
// Real platform, real proxy, real clients (ioredis, redis-cli); the fault server only records the
// requests (and, once, plays an upstream that revoked a token).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { startSideport } from '../../src/sideports/server.js';
import { command, startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { startFaultServer, type FaultServer } from './faults-server.js';

const run = promisify(execFile);
const WRONGPASS = '-WRONGPASS invalid username-password pair or user is disabled.\r\n';
const NOAUTH = '-NOAUTH Authentication required.\r\n';

let platform: RunningPlatform;
let fault: FaultServer;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
  expect((await command(platform, ['ACL', 'SETUSER', 'alice', 'on', '>alice-pass-1', '~a:*', '+get', '+set', '+ping'])).json).toEqual({
    result: 'OK',
  });
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await fault?.stop();
  await platform?.stop();
});

async function proxy(overrides: Partial<ProxyConfig>, upstreamUrl = fault.url, token = platform.token): Promise<RunningProxy> {
  const p = await startTestProxy({ url: upstreamUrl, token }, overrides);
  cleanups.push(() => p.stop());
  return p;
}

async function raw(p: RunningProxy): Promise<RawClient> {
  const c = await RawClient.connect(p.port);
  cleanups.push(() => c.close());
  return c;
}

const texts = (rs: Buffer[]) => rs.map((r) => r.toString('latin1'));

describe('pass-through: no upstream token, each client authenticates with its own REST token', () => {
  let p: RunningProxy;
  beforeAll(async () => {
    p = await proxy({ upstreamToken: '' });
  });

  it('NOAUTH before AUTH; AUTH <token>, AUTH default <token> and HELLO 3 AUTH default <token> all work', async () => {
    const c = await raw(p);
    expect(texts(await c.call(['GET', 'pt:k']))).toEqual([NOAUTH]);
    expect(texts(await c.call(['AUTH', platform.token], ['SET', 'pt:k', 'v1'], ['GET', 'pt:k']))).toEqual([
      '+OK\r\n',
      '+OK\r\n',
      '$2\r\nv1\r\n',
    ]);
    const d = await raw(p);
    expect(texts(await d.call(['AUTH', 'default', platform.token], ['GET', 'pt:k']))).toEqual(['+OK\r\n', '$2\r\nv1\r\n']);
    const e = await raw(p);
    const [hello, get] = texts(await e.call(['HELLO', '3', 'AUTH', 'default', platform.token], ['GET', 'pt:k']));
    expect(hello).toMatch(/^%7\r\n/);
    expect(get).toBe('$2\r\nv1\r\n');
    // And the official clients' way: ioredis with a password.
    const io = new IORedis({ port: p.port, password: platform.token, lazyConnect: true, maxRetriesPerRequest: 0 });
    cleanups.push(() => void io.disconnect());
    await io.connect();
    expect(await io.get('pt:k')).toBe('v1');
  });

  it('a wrong token is WRONGPASS after the upstream said 401, and that verdict is cached briefly', async () => {
    const c = await raw(p);
    const wrong = 'not-a-token-' + Date.now();
    const before = fault.seen.length;
    expect(texts(await c.call(['AUTH', wrong]))).toEqual([WRONGPASS]);
    expect(fault.seen.length).toBe(before + 1); // one check upstream
    expect(texts(await c.call(['AUTH', 'default', wrong], ['GET', 'pt:k']))).toEqual([WRONGPASS, NOAUTH]);
    expect(fault.seen.length).toBe(before + 1); // answered from the cache
    expect(texts(await c.call(['HELLO', '3', 'AUTH', 'default', wrong]))).toEqual([WRONGPASS]);
  });

  it('the Read Only token reads, and its refusals reach the client as NOPERM errors', async () => {
    const c = await raw(p);
    const [ok, get, set] = texts(await c.call(['AUTH', platform.readonlyToken], ['GET', 'pt:k'], ['SET', 'pt:k', 'x']));
    expect([ok, get]).toEqual(['+OK\r\n', '$2\r\nv1\r\n']);
    expect(set).toMatch(/^-NOPERM .*'set'/);
  });

  it('AUTH with a token inside MULTI is not run: EXEC says to authenticate before MULTI, the token stays the same', async () => {
    const c = await raw(p);
    await c.call(['AUTH', platform.readonlyToken]);
    const replies = texts(await c.call(['MULTI'], ['AUTH', platform.token], ['EXEC'], ['SET', 'pt:k2', 'x']));
    expect(replies.slice(0, 2)).toEqual(['+OK\r\n', '+QUEUED\r\n']);
    expect(replies[2]).toBe("*1\r\n-ERR respgate cannot run 'auth' with upstream credentials inside MULTI: authenticate before MULTI\r\n");
    expect(replies[3]).toMatch(/^-NOPERM /);
  });

  it("pub/sub carries the client's own token (test/security/stream-credentials.test.ts has the rest)", async () => {
    const c = await raw(p);
    await c.call(['AUTH', platform.token]);
    const from = fault.seen.length;
    expect(texts(await c.call(['SUBSCRIBE', 'pt:ch']))).toEqual(['*3\r\n$9\r\nsubscribe\r\n$5\r\npt:ch\r\n:1\r\n']);
    expect(fault.seen.slice(from).map((r) => [decodeURIComponent(r.path), r.authorization])).toEqual([
      ['/subscribe/pt:ch', `Bearer ${platform.token}`],
    ]);
    expect(texts(await c.call(['PING']))).toEqual(['*2\r\n$4\r\npong\r\n$0\r\n\r\n']);
  });

  it('connections with different tokens never share an upstream call', async () => {
    const rw = await raw(p);
    const ro = await raw(p);
    await rw.call(['AUTH', platform.token]);
    await ro.call(['AUTH', platform.readonlyToken]);
    const from = fault.seen.length;
    // Both write in the same event-loop turn: one batch would be the natural thing to do.
    const replies = await Promise.all([
      rw.call(['SET', 'pt:mix', 'rw'], ['GET', 'pt:mix']),
      ro.call(['SET', 'pt:mix', 'ro'], ['GET', 'pt:k']),
    ]);
    expect(texts(replies[0])).toEqual(['+OK\r\n', '$2\r\nrw\r\n']);
    expect(texts(replies[1])[0]).toMatch(/^-NOPERM /);
    const calls = fault.seen.slice(from);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) {
      const body = call.body.toString();
      if (call.authorization === `Bearer ${platform.readonlyToken}`) expect(body).not.toContain('"rw"');
      else expect(body).not.toContain('"ro"');
    }
  });
});

describe('proxy password (--requirepass)', () => {
  it("NOAUTH before AUTH, Redis' texts for a wrong password, and redis-cli -a", async () => {
    const p = await proxy({ requirepass: 'proxy-pass-1' }, platform.url);
    const c = await raw(p);
    expect(texts(await c.call(['GET', 'x']))).toEqual([NOAUTH]);
    expect(texts(await c.call(['AUTH', 'wrong']))).toEqual([WRONGPASS]);
    expect(texts(await c.call(['AUTH', 'bob', 'proxy-pass-1']))).toEqual([WRONGPASS]);
    expect(texts(await c.call(['AUTH', 'a', 'b', 'c']))).toEqual(['-ERR syntax error\r\n']);
    expect(texts(await c.call(['AUTH', 'proxy-pass-1'], ['PING']))).toEqual(['+OK\r\n', '+PONG\r\n']);
    const cli = await run('redis-cli', ['-p', String(p.port), '--no-auth-warning', '-a', 'proxy-pass-1', 'PING']);
    expect(cli.stdout.trim()).toBe('PONG');
    const bad = await run('redis-cli', ['-p', String(p.port), '--no-auth-warning', '-a', 'nope', 'PING']);
    expect(bad.stdout + bad.stderr).toMatch(/WRONGPASS|NOAUTH/);
  });
});

describe('ACL users: AUTH <user> <pass> becomes a token through ACL RESTTOKEN', () => {
  it('the user gets its own permissions; a wrong user or password is WRONGPASS', async () => {
    const p = await proxy({ aclUsers: true });
    const c = await raw(p);
    expect(texts(await c.call(['GET', 'a:1']))).toEqual([NOAUTH]);
    expect(texts(await c.call(['AUTH', 'alice', 'wrong']))).toEqual([WRONGPASS]);
    expect(texts(await c.call(['AUTH', 'nobody', 'x']))).toEqual([WRONGPASS]);
    const [ok, set, get, del, other] = texts(
      await c.call(['AUTH', 'alice', 'alice-pass-1'], ['SET', 'a:1', 'one'], ['GET', 'a:1'], ['DEL', 'a:1'], ['GET', 'b:1']),
    );
    expect([ok, set, get]).toEqual(['+OK\r\n', '+OK\r\n', '$3\r\none\r\n']);
    expect(del).toMatch(/^-NOPERM .*'del'/);
    expect(other).toMatch(/^-NOPERM /);
    // Cached: a second login asks the upstream nothing.
    const before = fault.seen.length;
    const d = await raw(p);
    expect(texts(await d.call(['AUTH', 'alice', 'alice-pass-1']))).toEqual(['+OK\r\n']);
    expect(fault.seen.length).toBe(before);
  });

  it('a token the upstream revoked (401) is fetched again with ACL RESTTOKEN and the command is sent again once', async () => {
    const p = await proxy({ aclUsers: true });
    const c = await raw(p);
    expect(texts(await c.call(['AUTH', 'alice', 'alice-pass-1']))).toEqual(['+OK\r\n']);
    let revoked = false;
    fault.decide = (req) => {
      if (!revoked && req.body.includes('a:2')) {
        revoked = true;
        return { kind: 'answer', status: 401, body: '{"error":"Unauthorized"}' };
      }
      return { kind: 'forward' };
    };
    try {
      const from = fault.seen.length;
      expect(texts(await c.call(['SET', 'a:2', 'two']))).toEqual(['+OK\r\n']);
      const bodies = fault.seen.slice(from).map((r) => r.body.toString());
      expect(bodies.length).toBe(3); // the refused SET, ACL RESTTOKEN, the SET again
      expect(bodies[1]).toContain('RESTTOKEN');
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
  });

  it('--acl-users without an upstream token refuses to start, saying why', async () => {
    await expect(proxy({ aclUsers: true, upstreamToken: '' })).rejects.toThrow(/--acl-users needs --upstream-token/);
  });
});

describe('never an open relay: non-loopback binds need client authentication', () => {
  const silent = createLogger('silent');

  it('the proxy refuses 0.0.0.0 without authentication, with the fix in the error', async () => {
    await expect(proxy({ host: '0.0.0.0' })).rejects.toThrow(/--requirepass .*--allow-unauthenticated/);
  });

  it('starts with --requirepass, in pass-through mode, or with --allow-unauthenticated (and a warning)', async () => {
    expect((await proxy({ host: '0.0.0.0', requirepass: 'x1' })).port).toBeGreaterThan(0);
    expect((await proxy({ host: '0.0.0.0', upstreamToken: '' })).port).toBeGreaterThan(0);
    const warnings: string[] = [];
    const log = createLogger('warn');
    log.warn = ((msg: string) => void warnings.push(msg)) as typeof log.warn;
    const { startProxy } = await import('../../src/proxy/server.js');
    const p = await startProxy(
      {
        host: '0.0.0.0',
        port: 0,
        upstreamUrl: platform.url,
        upstreamToken: platform.token,
        upstreamTimeoutMs: 1000,
        upstreamConnections: 1,
        maxBatch: 10,
        maxBulkLength: 1024,
        allowUnauthenticated: true,
      },
      log,
    );
    cleanups.push(() => p.stop());
    expect(warnings.join('\n')).toMatch(/binds 0\.0\.0\.0 .*--allow-unauthenticated/);
  });

  it('the side ports follow the same rule', async () => {
    const options = { role: 'vector' as const, host: '0.0.0.0', port: 0, commands: [], upstreamInfo: () => [], portFlag: '--vector-port' };
    await expect(startSideport(options, silent)).rejects.toThrow(/the vector side port binds 0\.0\.0\.0.*--requirepass/);
    const s = await startSideport({ ...options, requirepass: 'pw' }, silent);
    cleanups.push(() => s.stop());
    const t = await startSideport({ ...options, allowUnauthenticated: true }, silent);
    cleanups.push(() => t.stop());
    expect(s.port).toBeGreaterThan(0);
  });
});
