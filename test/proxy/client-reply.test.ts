// CLIENT REPLY ON|OFF|SKIP answered by the proxy (dispatch.ts, reply-queue.ts) like redis-server:
// the same pipelines on both sides give the same bytes; messages of subscriptions still arrive
// while replies are off (Redis' pubsub unit checks it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
const clients: RawClient[] = [];
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await stack?.stop();
});

/** Sends `commands` in one write, then reads `expected` replies (plus a PING marking the end). */
async function pipeline(port: number, commands: string[][], expected: number): Promise<string[]> {
  const c = await RawClient.connect(port);
  clients.push(c);
  c.write(encodeCommands([...commands, ['PING', 'end']].map((a) => a.map((s) => Buffer.from(s)))));
  const replies = (await c.replies(expected + 1)).map((r) => r.toString('latin1'));
  expect(replies.at(-1)).toBe('$3\r\nend\r\n');
  return replies.slice(0, -1);
}

describe('CLIENT REPLY', () => {
  const cases: [string, string[][], number][] = [
    [
      'OFF silences every reply until ON (its +OK is written)',
      [
        ['CLIENT', 'REPLY', 'OFF'],
        ['SET', 'cr:a', '1'],
        ['GET', 'cr:a'],
        ['INCR', 'cr:a'],
        ['CLIENT', 'REPLY', 'ON'],
        ['GET', 'cr:a'],
      ],
      2,
    ],
    [
      'SKIP silences itself and the next command only',
      [
        ['CLIENT', 'REPLY', 'SKIP'],
        ['SET', 'cr:b', '1'],
        ['GET', 'cr:b'],
      ],
      1,
    ],
    [
      'ON after SKIP answers +OK and unsets SKIP',
      [
        ['CLIENT', 'REPLY', 'SKIP'],
        ['CLIENT', 'REPLY', 'ON'],
        ['ECHO', 'x'],
      ],
      2,
    ],
    [
      'errors are silenced too; a bad mode is a syntax error',
      [['CLIENT', 'REPLY', 'OFF'], ['NOSUCH'], ['LPUSH'], ['CLIENT', 'REPLY', 'ON'], ['CLIENT', 'REPLY', 'MAYBE'], ['CLIENT', 'REPLY']],
      3,
    ],
    [
      'forwarded replies arriving later are silenced in place',
      [
        ['CLIENT', 'REPLY', 'SKIP'],
        ['RPUSH', 'cr:l', 'a', 'b'],
        ['CLIENT', 'REPLY', 'OFF'],
        ['LPOP', 'cr:l'],
        ['CLIENT', 'REPLY', 'ON'],
        ['LRANGE', 'cr:l', '0', '-1'],
      ],
      2,
    ],
  ];
  for (const [name, commands, expected] of cases) {
    it(name, async () => {
      const proxy = await pipeline(stack.proxy.port, commands, expected);
      const oracle = await pipeline(stack.oracle.endpoint.port, commands, expected);
      expect(proxy).toEqual(oracle);
    });
  }

  it('messages still arrive while replies are off (RESP3, where CLIENT REPLY runs while subscribed)', async () => {
    const sub = await RawClient.connect(stack.proxy.port);
    clients.push(sub);
    const pub = await RawClient.connect(stack.proxy.port);
    clients.push(pub);
    await sub.call(['HELLO', '3']);
    sub.write(
      encodeCommands(
        [
          ['CLIENT', 'REPLY', 'OFF'],
          ['SUBSCRIBE', 'cr:chan'],
        ].map((a) => a.map((s) => Buffer.from(s))),
      ),
    );
    // The confirmation is a push frame: written even with replies off, as Redis 7.0 does.
    expect((await sub.replies(1))[0].toString()).toBe('>3\r\n$9\r\nsubscribe\r\n$7\r\ncr:chan\r\n:1\r\n');
    await pub.call(['CLIENT', 'ID']); // a round trip: the CLIENT REPLY OFF above was read by now
    expect((await pub.call(['PUBLISH', 'cr:chan', 'hello']))[0].toString()).toBe(':1\r\n');
    expect((await sub.replies(1))[0].toString()).toBe('>3\r\n$7\r\nmessage\r\n$7\r\ncr:chan\r\n$5\r\nhello\r\n');
    // And a command's reply is not written: the next thing read is the next message.
    sub.write(encodeCommands([[Buffer.from('PING')]]));
    await pub.call(['PUBLISH', 'cr:chan', 'again']);
    expect((await sub.replies(1))[0].toString()).toBe('>3\r\n$7\r\nmessage\r\n$7\r\ncr:chan\r\n$5\r\nagain\r\n');
  });
});
