// TLS: the proxy's TLS port (redis-server's tls-* flags) with redis-cli --tls and ioredis `tls:`,
// client certificates required / not asked, and an HTTPS upstream signed by a private CA
// (--upstream-ca-file). Certificates are made by openssl for this run.
import { execFile } from 'node:child_process';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';

const run = promisify(execFile);
let platform: RunningPlatform;
let certs: TestCerts;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  certs = makeTestCerts();
  platform = await startTestPlatform();
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await platform?.stop();
  certs?.remove();
});

async function tlsProxy(authClients: 'yes' | 'no' | 'optional'): Promise<RunningProxy> {
  const p = await startTestProxy(platform, { tls: { port: 0, cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, authClients } });
  cleanups.push(() => p.stop());
  return p;
}

function ioredisTls(port: number, withClientCert: boolean): IORedis {
  const c = new IORedis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    tls: { ca: certs.ca, servername: 'localhost', ...(withClientCert ? { cert: certs.clientCert, key: certs.clientKey } : {}) },
  });
  cleanups.push(() => void c.disconnect());
  return c;
}

describe('the TLS port', () => {
  it('client certificates required (--tls-auth-clients yes): redis-cli --tls and ioredis with a certificate work, without one they are refused', async () => {
    const p = await tlsProxy('yes');
    expect(p.tlsPort).toBeGreaterThan(0);
    const io = ioredisTls(p.tlsPort!, true);
    await io.connect();
    expect(await io.set('tls:k', 'secure')).toBe('OK');
    expect(await io.get('tls:k')).toBe('secure');
    const cli = await run('redis-cli', [
      '--tls',
      '--cacert',
      certs.caFile,
      '--cert',
      certs.clientCertFile,
      '--key',
      certs.clientKeyFile,
      '-h',
      '127.0.0.1',
      '-p',
      String(p.tlsPort),
      'GET',
      'tls:k',
    ]);
    expect(cli.stdout.trim()).toBe('secure');
    const noCert = await run('redis-cli', ['--tls', '--cacert', certs.caFile, '-h', '127.0.0.1', '-p', String(p.tlsPort), 'PING']).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(noCert.stdout + noCert.stderr).not.toMatch(/PONG/);
    const anon = ioredisTls(p.tlsPort!, false);
    anon.on('error', () => undefined); // the refusal is what this asserts
    await expect(anon.connect().then(() => anon.ping())).rejects.toThrow();
    // The plain port keeps working next to it.
    const plain = await RawClient.connect(p.port);
    cleanups.push(() => plain.close());
    expect((await plain.call(['GET', 'tls:k']))[0].toString()).toBe('$6\r\nsecure\r\n');
  });

  it('--tls-auth-clients no: any TLS client is served; plain text on the TLS port gets nothing', async () => {
    const p = await tlsProxy('no');
    const io = ioredisTls(p.tlsPort!, false);
    await io.connect();
    expect(await io.ping()).toBe('PONG');
    const cli = await run('redis-cli', ['--tls', '--cacert', certs.caFile, '-h', '127.0.0.1', '-p', String(p.tlsPort), 'PING']);
    expect(cli.stdout.trim()).toBe('PONG');
    const plain = await RawClient.connect(p.tlsPort!);
    plain.write('PING\r\n');
    const got = await plain.untilClosed();
    expect(got.toString('latin1')).not.toContain('PONG');
  });
});

describe('an HTTPS upstream with a private CA (--upstream-ca-file)', () => {
  let url: string;
  beforeAll(async () => {
    // An HTTPS front of the platform, its certificate signed by the test CA.
    const server = https.createServer({ cert: certs.serverCert, key: certs.serverKey }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
        void fetch(platform.url + req.url, {
          method: req.method,
          headers,
          body: req.method === 'GET' ? undefined : new Uint8Array(Buffer.concat(chunks)),
        }).then(async (a) => {
          res.writeHead(a.status, { 'content-type': a.headers.get('content-type') ?? '' });
          res.end(Buffer.from(await a.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  it('with the CA the commands go through; without it they fail with a certificate error', async () => {
    const trusting = await startTestProxy({ url, token: platform.token }, { upstreamCa: certs.ca });
    cleanups.push(() => trusting.stop());
    const c = await RawClient.connect(trusting.port);
    cleanups.push(() => c.close());
    expect((await c.call(['SET', 'https:k', 'v'], ['GET', 'https:k'])).map(String)).toEqual(['+OK\r\n', '$1\r\nv\r\n']);
    const untrusting = await startTestProxy({ url, token: platform.token }, {});
    cleanups.push(() => untrusting.stop());
    const d = await RawClient.connect(untrusting.port);
    cleanups.push(() => d.close());
    const [reply] = (await d.call(['GET', 'https:k'])).map(String);
    expect(reply).toMatch(/^-ERR upstream unavailable: .*(certificate|self.signed|issuer)/i);
    expect(reply).not.toContain(platform.token);
  });
});
