// Event streams (SUBSCRIBE, PSUBSCRIBE, MONITOR) carry the connection's own credential in
// pass-through mode (each client AUTHs with its own REST token) and with --acl-users (AUTH user pass
// → ACL RESTTOKEN): real platform, real proxy, real clients (ioredis, redis-cli). The fault server
// stands between proxy and platform where a test must see which token each stream carries, or play
// an upstream that revoked a token once.
import { spawn } from 'node:child_process';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { trackChild } from '../helpers/cleanup.js';
import { command, startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';
import { startFaultServer, type FaultServer } from '../proxy/faults-server.js';

const WRONGPASS = '-WRONGPASS invalid username-password pair or user is disabled.\r\n';
const NOAUTH = '-NOAUTH Authentication required.\r\n';

let platform: RunningPlatform;
let fault: FaultServer;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await fault?.stop();
  await platform?.stop();
});

async function proxy(overrides: Parameters<typeof startTestProxy>[1], upstreamUrl = platform.url): Promise<RunningProxy> {
  const p = await startTestProxy({ url: upstreamUrl, token: platform.token }, overrides);
  cleanups.push(() => p.stop());
  return p;
}

async function raw(p: RunningProxy): Promise<RawClient> {
  const c = await RawClient.connect(p.port);
  cleanups.push(() => c.close());
  return c;
}

function io(p: RunningProxy, auth: { username?: string; password: string }): IORedis {
  const c = new IORedis({ port: p.port, host: '127.0.0.1', ...auth, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  cleanups.push(() => void c.disconnect());
  return c;
}

/** An ACL user of the platform's data store (made through the REST API with the Standard token). */
async function aclUser(user: string, password: string, rules: string[]): Promise<void> {
  expect((await command(platform, ['ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, ...rules])).json).toEqual({ result: 'OK' });
}

/** The REST token of an ACL user, as the upstream gives it (the same user and password give the same token). */
async function restToken(user: string, password: string): Promise<string> {
  const { json } = await command(platform, ['ACL', 'RESTTOKEN', user, password]);
  expect(typeof json.result).toBe('string');
  return json.result as string;
}

/** Resolves with the arguments of the first message `client` gets on `channel` (or pattern). */
function nextMessage(client: IORedis, event: 'message' | 'pmessage'): Promise<string[]> {
  return new Promise((resolve) => client.once(event, (...args: string[]) => resolve(args)));
}

const texts = (rs: Buffer[]) => rs.map((r) => r.toString('latin1'));
/** The requests the fault server saw since `from` for the event stream of `path` (e.g. `/subscribe/b:news`). */
const streamRequests = (from: number, path: string) => fault.seen.slice(from).filter((r) => decodeURIComponent(r.path) === path);

describe('pass-through: the streams carry the token the client gave with AUTH', () => {
  let p: RunningProxy;
  beforeAll(async () => {
    p = await proxy({ upstreamToken: '' });
  });

  it('ioredis subscribes with its own token: SUBSCRIBE and PSUBSCRIBE get what another connection PUBLISHes', async () => {
    const sub = io(p, { password: platform.token });
    const pub = io(p, { password: platform.token });
    expect(await sub.subscribe('pt:news')).toBe(1);
    expect(await sub.psubscribe('pt:feed:*')).toBe(2);
    const message = nextMessage(sub, 'message');
    expect(await pub.publish('pt:news', 'hello')).toBe(1);
    expect(await message).toEqual(['pt:news', 'hello']);
    const pmessage = nextMessage(sub, 'pmessage');
    expect(await pub.publish('pt:feed:1', 'first')).toBe(1);
    expect(await pmessage).toEqual(['pt:feed:*', 'pt:feed:1', 'first']);
  });

  it('redis-cli -a <token> SUBSCRIBE gets a message published by ioredis', async () => {
    const cli = trackChild(
      spawn('redis-cli', ['-p', String(p.port), '--no-auth-warning', '-a', platform.token, 'SUBSCRIBE', 'pt:cli'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cli.stderr.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('pt:cli\n1\n'), 'the subscription confirmed to redis-cli');
    const pub = io(p, { password: platform.token });
    expect(await pub.publish('pt:cli', 'from ioredis')).toBe(1);
    await until(() => out.includes('message\npt:cli\nfrom ioredis\n'), 'the message shown by redis-cli');
    cli.kill();
  });

  it('MONITOR with the token shows the commands another connection runs', async () => {
    const client = io(p, { password: platform.token });
    const monitor = await client.monitor();
    cleanups.push(() => void monitor.disconnect());
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
    const other = io(p, { password: platform.token });
    await other.set('pt:monitored', 'v');
    await until(() => seen.some((a) => a.join(' ').toLowerCase() === 'set pt:monitored v'), 'the SET shown by MONITOR');
  });

  it('the Read Only token subscribes and gets messages; its PUBLISH and MONITOR are NOPERM', async () => {
    const ro = await raw(p);
    expect(texts(await ro.call(['AUTH', platform.readonlyToken], ['SUBSCRIBE', 'pt:ro']))).toEqual([
      '+OK\r\n',
      '*3\r\n$9\r\nsubscribe\r\n$5\r\npt:ro\r\n:1\r\n',
    ]);
    const rw = io(p, { password: platform.token });
    expect(await rw.publish('pt:ro', 'to readers')).toBe(1);
    expect(texts(await ro.replies(1))).toEqual(['*3\r\n$7\r\nmessage\r\n$5\r\npt:ro\r\n$10\r\nto readers\r\n']);
    const other = await raw(p);
    const [ok, publish, monitor] = texts(await other.call(['AUTH', platform.readonlyToken], ['PUBLISH', 'pt:ro', 'x'], ['MONITOR']));
    expect(ok).toBe('+OK\r\n');
    expect(publish).toMatch(/^-NOPERM .*'publish'/);
    expect(monitor).toMatch(/^-NOPERM .*'monitor'/);
    expect(texts(await other.call(['PING']))).toEqual(['+PONG\r\n']);
  });

  it('a wrong token never reaches a stream: WRONGPASS, then SUBSCRIBE is NOAUTH', async () => {
    const c = await raw(p);
    expect(texts(await c.call(['AUTH', 'not-a-token'], ['SUBSCRIBE', 'pt:x'], ['MONITOR']))).toEqual([WRONGPASS, NOAUTH, NOAUTH]);
  });

  it('a token revoked upstream closes its connections, subscribed or subscribing, as Redis does for a deleted user; AUTH with it is then WRONGPASS', async () => {
    await aclUser('carol', 'carol-pass', ['~*', '&*', '+@all']);
    const token = await restToken('carol', 'carol-pass');
    const subscribed = await raw(p);
    expect(texts(await subscribed.call(['AUTH', token], ['SUBSCRIBE', 'pt:rev']))[1]).toBe(
      '*3\r\n$9\r\nsubscribe\r\n$6\r\npt:rev\r\n:1\r\n',
    );
    const later = await raw(p);
    expect(texts(await later.call(['AUTH', token]))).toEqual(['+OK\r\n']);
    const plain = await raw(p);
    expect(texts(await plain.call(['AUTH', token]))).toEqual(['+OK\r\n']);
    expect((await command(platform, ['ACL', 'DELUSER', 'carol'])).json).toEqual({ result: 1 });
    // The subscribed connection: its stream ends, the upstream refuses it again (401), the proxy closes.
    expect((await subscribed.untilClosed(8000)).toString('latin1')).not.toContain('-ERR');
    // The other one subscribes after the revocation: closed too, not an error reply.
    later.write('*2\r\n$9\r\nSUBSCRIBE\r\n$6\r\npt:rev\r\n');
    expect((await later.untilClosed(8000)).toString('latin1')).toBe('');
    // A plain command with the revoked token: an error that says what happened and what to do.
    expect(texts(await plain.call(['GET', 'pt:rev']))).toEqual([
      '-ERR upstream authentication failed (HTTP 401): the token this connection authenticated with is no longer accepted (revoked or rotated); AUTH again with a valid one\r\n',
    ]);
    // The 401 dropped the cached verdict: the token is asked upstream again, and refused.
    const again = await raw(p);
    expect(texts(await again.call(['AUTH', token]))).toEqual([WRONGPASS]);
  });
});

describe('pass-through through the fault server: whose token each stream carries', () => {
  it('each connection’s stream carries its own token; two tokens on one channel are two streams', async () => {
    const p = await proxy({ upstreamToken: '' }, fault.url);
    const from = fault.seen.length;
    const rw = await raw(p);
    const ro = await raw(p);
    expect(texts(await rw.call(['AUTH', platform.token], ['SUBSCRIBE', 'pt:both']))[1]).toMatch(/^\*3\r\n\$9\r\nsubscribe/);
    expect(texts(await ro.call(['AUTH', platform.readonlyToken], ['SUBSCRIBE', 'pt:both']))[1]).toMatch(/^\*3\r\n\$9\r\nsubscribe/);
    const streams = streamRequests(from, '/subscribe/pt:both');
    expect(streams.map((r) => r.authorization).sort()).toEqual([`Bearer ${platform.readonlyToken}`, `Bearer ${platform.token}`].sort());
    const pub = await raw(p);
    expect(texts(await pub.call(['AUTH', platform.token], ['PUBLISH', 'pt:both', 'to both']))).toEqual(['+OK\r\n', ':2\r\n']);
    const frame = '*3\r\n$7\r\nmessage\r\n$7\r\npt:both\r\n$7\r\nto both\r\n';
    expect(texts(await rw.replies(1))).toEqual([frame]);
    expect(texts(await ro.replies(1))).toEqual([frame]);
  });

  it('a RESP3 connection that AUTHs again keeps its stream with the old token and opens new ones with the new token', async () => {
    const p = await proxy({ upstreamToken: '' }, fault.url);
    const from = fault.seen.length;
    const c = await raw(p);
    const [hello, first] = texts(await c.call(['HELLO', '3', 'AUTH', 'default', platform.token], ['SUBSCRIBE', 'pt:first']));
    expect(hello).toMatch(/^%7\r\n/);
    expect(first).toBe('>3\r\n$9\r\nsubscribe\r\n$8\r\npt:first\r\n:1\r\n');
    expect(texts(await c.call(['AUTH', platform.readonlyToken], ['SUBSCRIBE', 'pt:second']))).toEqual([
      '+OK\r\n',
      '>3\r\n$9\r\nsubscribe\r\n$9\r\npt:second\r\n:2\r\n',
    ]);
    expect(streamRequests(from, '/subscribe/pt:first').map((r) => r.authorization)).toEqual([`Bearer ${platform.token}`]);
    expect(streamRequests(from, '/subscribe/pt:second').map((r) => r.authorization)).toEqual([`Bearer ${platform.readonlyToken}`]);
    const pub = io(p, { password: platform.token });
    expect(await pub.publish('pt:first', 'one')).toBe(1);
    expect(texts(await c.replies(1))).toEqual(['>3\r\n$7\r\nmessage\r\n$8\r\npt:first\r\n$3\r\none\r\n']);
  });
});

describe('ACL users: the streams carry the token of the user the client authenticated as', () => {
  let p: RunningProxy;
  let bobToken: string;
  beforeAll(async () => {
    await aclUser('bob', 'bob-pass', ['~b:*', '&b:*', '&b:news*', '+subscribe', '+psubscribe', '+publish', '+ping', '+set', '+get']);
    bobToken = await restToken('bob', 'bob-pass');
    p = await proxy({ aclUsers: true }, fault.url);
  });

  it("ioredis as bob: SUBSCRIBE and PSUBSCRIBE on bob's channels get PUBLISH from another connection; the stream carries bob's token", async () => {
    const from = fault.seen.length;
    const sub = io(p, { username: 'bob', password: 'bob-pass' });
    const pub = io(p, { username: 'bob', password: 'bob-pass' });
    expect(await sub.subscribe('b:news')).toBe(1);
    expect(await sub.psubscribe('b:news*')).toBe(2);
    expect(streamRequests(from, '/subscribe/b:news').map((r) => r.authorization)).toEqual([`Bearer ${bobToken}`]);
    expect(streamRequests(from, '/psubscribe/b:news*').map((r) => r.authorization)).toEqual([`Bearer ${bobToken}`]);
    const both = Promise.all([nextMessage(sub, 'message'), nextMessage(sub, 'pmessage')]);
    expect(await pub.publish('b:news', 'for bob')).toBe(2);
    expect(await both).toEqual([
      ['b:news', 'for bob'],
      ['b:news*', 'b:news', 'for bob'],
    ]);
  });

  it('redis-cli --user bob --pass … PSUBSCRIBE gets a message published by ioredis as bob', async () => {
    const cli = trackChild(
      spawn('redis-cli', ['-p', String(p.port), '--no-auth-warning', '--user', 'bob', '--pass', 'bob-pass', 'PSUBSCRIBE', 'b:news*'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cli.stderr.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('psubscribe\nb:news*\n1\n'), 'the subscription confirmed to redis-cli');
    const pub = io(p, { username: 'bob', password: 'bob-pass' });
    expect(await pub.publish('b:news:cli', 'to the cli')).toBeGreaterThanOrEqual(1);
    await until(() => out.includes('pmessage\nb:news*\nb:news:cli\nto the cli\n'), 'the message shown by redis-cli');
    cli.kill();
  });

  it("bob's own permissions apply to streams: another channel and MONITOR are Redis' NOPERM; the connection goes on", async () => {
    const c = await raw(p);
    // Pipelined, as Redis reads them: the refused SUBSCRIBE leaves the connection out of subscribe
    // mode, so MONITOR and PING run as commands (not "only (P|S)SUBSCRIBE … allowed in this context").
    const [ok, other, monitor, ping] = texts(await c.call(['AUTH', 'bob', 'bob-pass'], ['SUBSCRIBE', 'x:secret'], ['MONITOR'], ['PING']));
    expect(ok).toBe('+OK\r\n');
    expect(other).toMatch(/^-NOPERM .*channel/);
    expect(monitor).toMatch(/^-NOPERM .*'monitor'/);
    expect(ping).toBe('+PONG\r\n');
  });

  it('a user token the upstream revoked (401) is fetched again with ACL RESTTOKEN and the stream opened again', async () => {
    let refused = false;
    fault.decide = (req) => {
      if (!refused && decodeURIComponent(req.path) === '/subscribe/b:again') {
        refused = true;
        return { kind: 'answer', status: 401, body: '{"error":"Unauthorized"}' };
      }
      return { kind: 'forward' };
    };
    try {
      const from = fault.seen.length;
      const c = await raw(p);
      expect(texts(await c.call(['AUTH', 'bob', 'bob-pass'], ['SUBSCRIBE', 'b:again']))).toEqual([
        '+OK\r\n',
        '*3\r\n$9\r\nsubscribe\r\n$7\r\nb:again\r\n:1\r\n',
      ]);
      // The refused stream, ACL RESTTOKEN for a fresh token, the stream again with it.
      expect(streamRequests(from, '/subscribe/b:again').map((r) => r.authorization)).toEqual([`Bearer ${bobToken}`, `Bearer ${bobToken}`]);
      expect(fault.seen.slice(from).filter((r) => r.body.includes('RESTTOKEN'))).toHaveLength(1);
      const pub = await raw(p);
      expect(texts(await pub.call(['AUTH', 'bob', 'bob-pass'], ['PUBLISH', 'b:again', 'back']))).toEqual(['+OK\r\n', ':1\r\n']);
      expect(texts(await c.replies(1))).toEqual(['*3\r\n$7\r\nmessage\r\n$7\r\nb:again\r\n$4\r\nback\r\n']);
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
  });

  it("a subscriber whose channel permission is removed is disconnected, as Redis does; bob's other connections go on", async () => {
    await aclUser('dave', 'dave-pass', ['~d:*', '&d:*', '+subscribe', '+ping']);
    const c = await raw(p);
    expect(texts(await c.call(['AUTH', 'dave', 'dave-pass'], ['SUBSCRIBE', 'd:news']))[1]).toBe(
      '*3\r\n$9\r\nsubscribe\r\n$6\r\nd:news\r\n:1\r\n',
    );
    const bystander = await raw(p);
    expect(texts(await bystander.call(['AUTH', 'bob', 'bob-pass']))).toEqual(['+OK\r\n']);
    expect((await command(platform, ['ACL', 'SETUSER', 'dave', 'resetchannels'])).json).toEqual({ result: 'OK' });
    expect((await c.untilClosed(8000)).toString('latin1')).not.toContain('-ERR');
    expect(texts(await bystander.call(['PING']))).toEqual(['+PONG\r\n']);
  });
});
