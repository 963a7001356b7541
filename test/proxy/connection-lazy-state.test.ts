// A connection's rarely used state (subscriptions, CLIENT REPLY's silenced positions, the waiters of
// another database) is made only when first needed (issue 25: 2 000 idle connections). These tests
// use each piece first on a fresh connection, compared with redis-server, and check that connections
// still close and leave CLIENT LIST with the socket listeners every connection shares.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, replayOnBoth, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({}, { databases: 2 });
});
afterAll(async () => {
  await stack?.stop();
});

async function bothSides(): Promise<{ oracle: RawClient; proxy: RawClient }> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
  return { oracle, proxy };
}

const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));

describe('state made on first use', () => {
  it('a connection that never subscribed answers the UNSUBSCRIBE forms, then subscribes, as redis-server does', async () => {
    const side = await bothSides();
    const commands = [
      ['UNSUBSCRIBE'],
      ['PUNSUBSCRIBE'],
      ['SUNSUBSCRIBE'],
      ['UNSUBSCRIBE', 'x', 'y'],
      ['PUNSUBSCRIBE', 'p*'],
      ['SUNSUBSCRIBE', 's'],
    ];
    // One reply each, two for the two channels of the fourth.
    const [o, p] = await burstOnBoth(side, commands, 7);
    expect(text(p)).toEqual(text(o));
    expect(text(p)[0]).toBe('*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n');
    const [[oSub], [pSub]] = await Promise.all([side.oracle.call(['SUBSCRIBE', 'lazy:ch']), side.proxy.call(['SUBSCRIBE', 'lazy:ch'])]);
    expect(pSub.toString()).toBe(oSub.toString());
    const publisher = await RawClient.connect(stack.proxy.port);
    await publisher.call(['PUBLISH', 'lazy:ch', 'hello']);
    const [message] = await side.proxy.replies(1);
    expect(message.toString()).toBe('*3\r\n$7\r\nmessage\r\n$7\r\nlazy:ch\r\n$5\r\nhello\r\n');
    for (const c of [side.oracle, side.proxy, publisher]) c.close();
  });

  it('CLIENT LIST shows no subscription for a connection that never subscribed, as redis-server does', async () => {
    const side = await bothSides();
    const [o, p] = await replayOnBoth(side, [['PING'], ['CLIENT', 'INFO']], true);
    expect(p[1].toString()).toMatch(/ sub=0 psub=0 ssub=0 /);
    expect(o[1].toString()).toMatch(/ sub=0 psub=0 ssub=0 /);
    expect(/flags=(\S+)/.exec(p[1].toString())?.[1]).toBe(/flags=(\S+)/.exec(o[1].toString())?.[1]);
    for (const c of [side.oracle, side.proxy]) c.close();
  });

  it('CLIENT REPLY SKIP and OFF silence replies on a fresh connection as redis-server does', async () => {
    const side = await bothSides();
    const commands = [
      ['SET', 'lazy:k', '1'],
      ['CLIENT', 'REPLY', 'SKIP'],
      ['INCR', 'lazy:k'],
      ['GET', 'lazy:k'],
      ['CLIENT', 'REPLY', 'OFF'],
      ['INCR', 'lazy:k'],
      ['CLIENT', 'REPLY', 'ON'],
      ['GET', 'lazy:k'],
    ];
    // SKIP silences itself and the INCR after it, OFF itself and what follows until ON: four replies.
    const [o, p] = await burstOnBoth(side, commands, 4);
    expect(text(p)).toEqual(text(o));
    expect(text(p)).toEqual(['+OK\r\n', '$1\r\n2\r\n', '+OK\r\n', '$1\r\n3\r\n']);
    for (const c of [side.oracle, side.proxy]) c.close();
  });

  it('a command of another database waits for the pending ones of the first (INFO keyspace after them)', async () => {
    const proxy = await RawClient.connect(stack.proxy.port);
    const replies = await proxy.call(
      ['SELECT', '1'],
      ['SET', 'lazy:db1', 'x'],
      ['SELECT', '0'],
      ['SET', 'lazy:db0', 'y'],
      ['INFO', 'keyspace'],
      ['SELECT', '1'],
      ['GET', 'lazy:db1'],
    );
    expect(text(replies.slice(0, 4))).toEqual(['+OK\r\n', '+OK\r\n', '+OK\r\n', '+OK\r\n']);
    expect(replies[4].toString()).toMatch(/db0:keys=\d+/);
    expect(replies[4].toString()).toMatch(/db1:keys=\d+/);
    expect(text(replies.slice(5))).toEqual(['+OK\r\n', '$1\r\nx\r\n']);
    proxy.close();
  });
});

describe('the socket listeners every connection shares', () => {
  it('each of many connections answers, and the closed ones leave CLIENT LIST', async () => {
    const clients = await Promise.all(Array.from({ length: 40 }, () => RawClient.connect(stack.proxy.port)));
    const pongs = await Promise.all(clients.map((c, i) => c.call(['ECHO', `c${i}`])));
    expect(pongs.map((r) => r[0].toString())).toEqual(clients.map((_, i) => `$${String(i).length + 1}\r\nc${i}\r\n`));
    // Half of them end their side after one more command: the reply still comes, then the proxy closes.
    const ended = clients.slice(0, 20);
    for (const c of ended) c.socket.end(Buffer.from('*1\r\n$4\r\nPING\r\n'));
    const lastReplies = await Promise.all(ended.map((c) => c.untilClosed()));
    expect(lastReplies.every((b) => b.toString().endsWith('+PONG\r\n'))).toBe(true);
    for (const c of clients.slice(20, 30)) c.close();
    const observer = await RawClient.connect(stack.proxy.port);
    let names: string[] = [];
    for (let i = 0; i < 100; i++) {
      const [list] = await observer.call(['CLIENT', 'LIST']);
      names = list
        .toString()
        .split('\n')
        .filter((l) => l.includes('cmd=echo'));
      if (names.length === 10) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(names).toHaveLength(10);
    for (const c of [...clients.slice(30), observer]) c.close();
  });
});

/** Sends `commands` to both sides as one write and reads `n` replies from each. */
function burstOnBoth(side: { oracle: RawClient; proxy: RawClient }, commands: string[][], n: number): Promise<[Buffer[], Buffer[]]> {
  const bytes = encodeCommands(commands);
  side.oracle.write(bytes);
  side.proxy.write(bytes);
  return Promise.all([side.oracle.replies(n), side.proxy.replies(n)]);
}
