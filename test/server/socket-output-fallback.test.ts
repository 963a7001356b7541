// Where SocketOutput keeps socket.write: a TLS socket (its handle is a TLSWrap, which encrypts what it is
// given, not a libuv stream to write plain bytes on), and a process with pending deprecations on, where
// process.binding would warn (and --throw-deprecation turn the warning into a crash). Not a unit test: it
// makes certificates with openssl and starts a node process.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocketOutput } from '../../src/server/socket-output.js';
import { makeTestCerts, tlsLoopback, type TestCerts } from '../helpers/certs.js';

describe('SocketOutput on a TLS socket', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  it('writes with socket.write, and the client reads the reply', async () => {
    const { client, socket, close } = await tlsLoopback(certs);
    try {
      let writes = 0;
      const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
      socket.write = ((...a: unknown[]) => {
        writes++;
        return write(...a);
      }) as typeof socket.write;
      const output = new SocketOutput(socket, { outputDrained: () => undefined });
      const got = new Promise<string>((resolve) => client.once('data', (d: Buffer) => resolve(d.toString())));
      output.write(Buffer.from('+PONG\r\n'));
      expect(writes).toBe(1);
      expect(await got).toBe('+PONG\r\n');
    } finally {
      close();
    }
  });
});

describe('SocketOutput with pending deprecations', () => {
  it('does not touch process.binding: no DEP0111, even with --throw-deprecation; writes go through socket.write', async () => {
    const code = `
      import net from 'node:net';
      import { SocketOutput } from './src/server/socket-output.ts';
      const server = net.createServer((socket) => {
        let writes = 0;
        const write = socket.write.bind(socket);
        socket.write = (...a) => (writes++, write(...a));
        new SocketOutput(socket, { outputDrained() {} }).write(Buffer.from('+OK\\r\\n'));
        console.log(JSON.stringify({ writes }));
        socket.end();
        server.close();
      });
      server.listen(0, '127.0.0.1', () => {
        const c = net.connect(server.address().port, '127.0.0.1');
        c.resume();
        c.on('end', () => c.destroy());
      });
    `;
    const args = ['--pending-deprecation', '--throw-deprecation', '--import', 'tsx', '--input-type=module', '-e', code];
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args);
    expect(stderr).not.toMatch(/DEP0111|DeprecationWarning/);
    expect(JSON.parse(stdout.trim())).toEqual({ writes: 1 });
  });
});
