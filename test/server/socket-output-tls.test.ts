// SocketOutput leaves a TLS socket to socket.write: its handle is a TLSWrap, which encrypts what it is
// given, not a libuv stream to write plain bytes on (not a unit test: it makes certificates with openssl).
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocketOutput } from '../../src/server/socket-output.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';

describe('SocketOutput on a TLS socket', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  it('writes with socket.write, and the client reads the reply', async () => {
    const server = tls.createServer({ cert: certs.serverCert, key: certs.serverKey });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<tls.TLSSocket>((resolve) => server.once('secureConnection', resolve));
    const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', ca: certs.ca });
    const socket = await accepted;
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
      client.destroy();
      socket.destroy();
      server.close();
    }
  });
});
