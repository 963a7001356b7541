// Test certificates made with Debian's openssl: a CA, a server certificate for 127.0.0.1/localhost
// and a client certificate, both signed by the CA. Written to a fresh temporary directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

export interface TestCerts {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  ca: Buffer;
  serverCert: Buffer;
  serverKey: Buffer;
  clientCert: Buffer;
  clientKey: Buffer;
  remove(): void;
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(path.join(tmpdir(), 'respgate-tls-'));
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=respgate test CA',
  );
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  for (const who of ['server', 'client']) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      f(`${who}.key`),
      '-out',
      f(`${who}.csr`),
      '-subj',
      `/CN=${who === 'server' ? 'localhost' : 'respgate test client'}`,
    );
    ssl(
      'x509',
      '-req',
      '-in',
      f(`${who}.csr`),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${who}.crt`),
      '-days',
      '2',
      ...(who === 'server' ? ['-extfile', f('server.ext')] : []),
    );
  }
  const read = (name: string) => readFileSync(f(name));
  return {
    dir,
    caFile: f('ca.crt'),
    serverCertFile: f('server.crt'),
    serverKeyFile: f('server.key'),
    clientCertFile: f('client.crt'),
    clientKeyFile: f('client.key'),
    ca: read('ca.crt'),
    serverCert: read('server.crt'),
    serverKey: read('server.key'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A TLS server on a free loopback port with these certificates, a client connected to it, and the server's end. */
export async function tlsLoopback(certs: TestCerts): Promise<{ client: tls.TLSSocket; socket: tls.TLSSocket; close(): void }> {
  const server = tls.createServer({ cert: certs.serverCert, key: certs.serverKey });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<tls.TLSSocket>((resolve) => server.once('secureConnection', resolve));
  const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', ca: certs.ca });
  const socket = await accepted;
  return {
    client,
    socket,
    close: () => {
      client.destroy();
      socket.destroy();
      server.close();
    },
  };
}
