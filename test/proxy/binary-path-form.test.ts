// Binary arguments that are not the last one travel percent-encoded in the URL: large ones too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('large binary arguments in the path form', () => {
  it('a 100 KB binary hash field and key round-trip like on redis-server', async () => {
    const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7 + 255) % 256));
    const key = Buffer.concat([Buffer.from([0xff, 0xfe]), bytes.subarray(0, 20_000)]);
    const commands = [
      ['HSET', key, bytes, Buffer.from('v')],
      ['HGET', key, bytes],
      ['HSTRLEN', key, bytes],
      ['STRLEN', key],
      ['DEL', key],
    ];
    const proxy = await RawClient.connect(stack.proxy.port);
    const oracle = await RawClient.connect(stack.oracle.endpoint.port);
    const viaProxy = await proxy.call(...commands);
    const direct = await oracle.call(...commands);
    expect(viaProxy.map((b) => b.toString('latin1'))).toEqual(direct.map((b) => b.toString('latin1')));
    expect(direct[0].toString()).toBe(':1\r\n');
    proxy.close();
    oracle.close();
  });
});
