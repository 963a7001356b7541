// 64-bit integers inside EXEC results survive the /multi-exec JSON exactly (RESP2 and RESP3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('EXEC with integers beyond 2^53', () => {
  for (const protocol of ['2', '3']) {
    it(`answers the same bytes as redis-server (RESP${protocol})`, async () => {
      const commands = [
        ['HELLO', protocol],
        ['DEL', 'big'],
        ['MULTI'],
        ['SET', 'big', '9223372036854775800'],
        ['INCRBY', 'big', '7'],
        ['DECRBY', 'big', '9223372036854775807'],
        ['INCRBY', 'big', '-9223372036854775807'],
        ['DECR', 'big'],
        ['EXEC'],
      ];
      const proxy = await RawClient.connect(stack.proxy.port);
      const oracle = await RawClient.connect(stack.oracle.endpoint.port);
      const viaProxy = (await proxy.call(...commands)).slice(1);
      const direct = (await oracle.call(...commands)).slice(1);
      expect(viaProxy.map(String)).toEqual(direct.map(String));
      expect(String(direct[direct.length - 1])).toContain(':9223372036854775807\r\n');
      proxy.close();
      oracle.close();
    });
  }
});
