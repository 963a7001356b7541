// Every RESP port is the same server (src/server/): the proxy port and both side ports pass the same
// security and limit checks, with the same bytes. Each case runs against the three ports, started on
// the real local platform: a wrong password, maxclients + 1, an oversized bulk header, the idle
// timeout, the handshake's error texts, TLS with redis-cli --tls, the SIGTERM drain, and the fuzzer's
// frames (no crash, no hang, well-formed replies).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TlsListenerConfig } from '../../src/config.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { anyFrame, exchangeAll } from '../helpers/fuzz-frames.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';
import { queuePort, vectorPort } from '../sideports/harness.js';

const run = promisify(execFile);

/** What the cases set on a port: the proxy's ProxyConfig names, which a side port takes as its limits. */
interface PortSettings {
  requirepass?: string;
  maxClients?: number;
  idleTimeoutSec?: number;
  maxBulkLength?: number;
  shutdownGraceMs?: number;
  tls?: TlsListenerConfig;
}

interface StartedPort {
  port: number;
  tlsPort: number | undefined;
  connections(): number;
  stop(): Promise<void>;
  shutdown(): Promise<void>;
}

let platform: RunningPlatform;
let certs: TestCerts;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  certs = makeTestCerts();
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await platform?.stop();
  certs?.remove();
});

const PORTS: Array<[string, (s: PortSettings) => Promise<StartedPort>]> = [
  ['proxy', (s) => startTestProxy(platform, s)],
  [
    'vector',
    ({ requirepass, tls, ...limits }) =>
      vectorPort({ url: `${platform.url}/vector/dense`, token: platform.token, requirepass, tls, limits }),
  ],
  [
    'queue',
    ({ requirepass, tls, ...limits }) => queuePort({ url: `${platform.url}/queue`, token: platform.token, requirepass, tls, limits }),
  ],
];

async function start(kind: (s: PortSettings) => Promise<StartedPort>, settings: PortSettings = {}): Promise<StartedPort> {
  const p = await kind(settings);
  cleanups.push(() => p.stop());
  return p;
}
async function raw(port: number): Promise<RawClient> {
  const c = await RawClient.connect(port);
  cleanups.push(() => c.close());
  return c;
}
const str = (b: Buffer[]) => b.map((x) => x.toString('latin1'));

function countReplies(bytes: Buffer): number {
  let n = 0;
  for (let at = scanReply(bytes, 0); at > 0; at = scanReply(bytes, at)) n++;
  return n;
}

describe.each(PORTS)('the %s port', (_name, kind) => {
  it('refuses commands before AUTH and a wrong password with Redis texts; the right one opens it', async () => {
    const p = await start(kind, { requirepass: 's3cret' });
    const c = await raw(p.port);
    expect(str(await c.call(['PING'], ['AUTH', 'wrong'], ['AUTH', 'nobody', 's3cret'], ['HELLO', '3', 'AUTH', 'default', 'nope']))).toEqual(
      [
        '-NOAUTH Authentication required.\r\n',
        '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
        '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
        '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
      ],
    );
    expect(str(await c.call(['AUTH', 's3cret'], ['PING']))).toEqual(['+OK\r\n', '+PONG\r\n']);
  });

  it("maxclients + 1: the extra client gets Redis' error and is closed; a place that frees up is taken again", async () => {
    const p = await start(kind, { maxClients: 2 });
    const a = await raw(p.port);
    const b = await raw(p.port);
    expect(str(await a.call(['PING']))).toEqual(['+PONG\r\n']);
    expect(str(await b.call(['PING']))).toEqual(['+PONG\r\n']);
    const extra = await raw(p.port);
    expect((await extra.untilClosed()).toString()).toBe('-ERR max number of clients reached\r\n');
    a.close();
    await until(() => p.connections() === 1, 'the closed client to be gone');
    expect(str(await (await raw(p.port)).call(['PING']))).toEqual(['+PONG\r\n']);
  });

  it('an oversized bulk header is a protocol error, then the connection closes', async () => {
    const p = await start(kind, { maxBulkLength: 1024 });
    const c = await raw(p.port);
    c.write('*2\r\n$4\r\nECHO\r\n$1025\r\n');
    expect((await c.untilClosed()).toString()).toBe('-ERR Protocol error: invalid bulk length\r\n');
    const ok = await raw(p.port);
    expect(str(await ok.call(['ECHO', 'x'.repeat(1024)]))).toEqual([`$1024\r\n${'x'.repeat(1024)}\r\n`]);
  });

  it('the idle timeout closes an idle client; an active one stays', async () => {
    const p = await start(kind, { idleTimeoutSec: 1 });
    const idle = await raw(p.port);
    const active = await raw(p.port);
    const started = Date.now();
    await idle.call(['PING']);
    let closed = false;
    const idleClosed = idle.untilClosed(5000).then(() => (closed = true));
    while (!closed) {
      expect(str(await active.call(['PING']))).toEqual(['+PONG\r\n']);
      await Promise.race([idleClosed, new Promise((r) => setTimeout(r, 300))]);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(str(await active.call(['PING']))).toEqual(['+PONG\r\n']);
  });

  it("answers the handshake's mistakes with the proxy port's texts (Redis 7.0's)", async () => {
    const p = await start(kind);
    const c = await raw(p.port);
    expect(
      str(await c.call(['PING', 'a', 'b'], ['CLIENT', 'NO-EVICT', 'maybe'], ['CLIENT', 'NOPE'], ['HELLO', '4'], ['SELECT', '1'], ['ECHO'])),
    ).toEqual([
      "-ERR wrong number of arguments for 'ping' command\r\n",
      '-ERR syntax error\r\n',
      "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n",
      '-NOPROTO unsupported protocol version\r\n',
      '-ERR DB index is out of range\r\n',
      "-ERR wrong number of arguments for 'echo' command\r\n",
    ]);
  });

  it('redis-cli --tls works on its TLS port (no client certificate asked)', async () => {
    const p = await start(kind, { tls: { port: 0, cert: certs.serverCert, key: certs.serverKey, authClients: 'no' } });
    expect(p.tlsPort).toBeGreaterThan(0);
    const cli = await run('redis-cli', ['--tls', '--cacert', certs.caFile, '-h', '127.0.0.1', '-p', String(p.tlsPort), 'ECHO', 'over-tls']);
    expect(cli.stdout.trim()).toBe('over-tls');
    // Plain text on the TLS port gets nothing: the handshake fails and the port keeps serving.
    const plain = await exchangeAll(p.tlsPort!, encodeCommands([['PING']]), 2000);
    expect(plain.data.toString('latin1')).not.toContain('PONG');
    const again = await run('redis-cli', ['--tls', '--cacert', certs.caFile, '-h', '127.0.0.1', '-p', String(p.tlsPort), 'PING']);
    expect(again.stdout.trim()).toBe('PONG');
  });

  it('fuzzed frames: every connection ends with well-formed replies, none hangs, and the port keeps serving', async () => {
    const p = await start(kind);
    await fc.assert(
      fc.asyncProperty(fc.array(anyFrame, { minLength: 1, maxLength: 6 }), async (list) => {
        const got = await exchangeAll(p.port, Buffer.concat(list));
        expect(got.closed).toBe(true);
        let at = 0;
        while (at < got.data.length) {
          const next = scanReply(got.data, at);
          expect(next, got.data.toString('latin1')).toBeGreaterThan(at);
          at = next;
        }
      }),
      { numRuns: 60 },
    );
    const alive = await exchangeAll(p.port, encodeCommands([['PING']]));
    expect(alive.data.toString()).toBe('+PONG\r\n');
  }, 60_000);
});

describe.each(PORTS.slice(1))('SIGTERM on the %s side port', (name, kind) => {
  it('stops accepting, writes every reply it owes, then closes the connection', async () => {
    const p = await kind({ shutdownGraceMs: 10_000 });
    cleanups.push(() => p.stop());
    const c = await raw(p.port);
    // Each command is an upstream call, run one after another: most are still owed at the SIGTERM.
    const n = 200;
    const command = name === 'vector' ? ['VCARD', 'drain-ns'] : ['QGROUP', 'LIST'];
    c.write(encodeCommands(Array.from({ length: n }, () => command)));
    await until(() => c.peek().length > 0, 'the first reply');
    const shutdown = p.shutdown();
    const answeredBefore = countReplies(Buffer.from(c.peek(), 'latin1'));
    expect(answeredBefore).toBeLessThan(n);
    const replies = await c.replies(n);
    expect(replies).toHaveLength(n);
    expect(new Set(str(replies)).size).toBe(1);
    expect(replies[0].toString('latin1')).not.toMatch(/^-/);
    await c.untilClosed();
    await shutdown;
    await expect(RawClient.connect(p.port)).rejects.toThrow();
  });
});
