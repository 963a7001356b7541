// CLIENT PAUSE and UNPAUSE for the proxy's own clients (issue 22), against a direct redis-server: the
// argument errors, ALL (every command waits, in order), WRITE (reads go on, writes wait until CLIENT
// UNPAUSE or the timeout), and MULTI/EXEC under WRITE.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, replayOnBoth, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const sides = () =>
  [
    ['oracle', stack.oracle.endpoint.port],
    ['proxy', stack.proxy.port],
  ] as const;
const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));

/** Sends `commands` on `c` as one write; resolves with the replies and the ms until the last one came. */
async function timed(c: RawClient, commands: string[][]): Promise<{ replies: string[]; ms: number }> {
  const start = Date.now();
  c.write(encodeCommands(commands));
  const replies = text(await c.replies(commands.length));
  return { replies, ms: Date.now() - start };
}

describe('CLIENT PAUSE', () => {
  it('argument errors and replies, byte for byte with redis-server', async () => {
    const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
    const [o, p] = await replayOnBoth(
      { oracle, proxy },
      [
        ['CLIENT', 'PAUSE', 'x'],
        ['CLIENT', 'PAUSE', '-1'],
        ['CLIENT', 'PAUSE', '10', 'BOGUS'],
        ['CLIENT', 'PAUSE', '10', 'ALL', 'extra'],
        ['CLIENT', 'PAUSE'],
        ['CLIENT', 'UNPAUSE', 'x'],
        ['CLIENT', 'PAUSE', '99999999999999999999'],
        ['CLIENT', 'PAUSE', '0', 'write'],
        ['CLIENT', 'UNPAUSE'],
        ['CLIENT', 'UNPAUSE'],
      ],
      false,
    );
    expect(text(p)).toEqual(text(o));
    oracle.close();
    proxy.close();
  });

  it('ALL: every command of every client waits until the timeout, then runs in order (the pausing client too)', async () => {
    const results: Record<string, { replies: string[]; ms: number }[]> = {};
    for (const [name, port] of sides()) {
      const [a, b] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      expect(text(await a.call(['CLIENT', 'PAUSE', '500', 'ALL']))).toEqual(['+OK\r\n']);
      results[name] = await Promise.all([
        timed(b, [['SET', 'pause:k', 'v'], ['GET', 'pause:k'], ['PING']]),
        timed(a, [['ECHO', 'me too']]),
      ]);
      a.close();
      b.close();
    }
    for (const name of ['oracle', 'proxy']) {
      for (const r of results[name]) expect(r.ms, name).toBeGreaterThanOrEqual(350);
    }
    expect(results.proxy.map((r) => r.replies)).toEqual(results.oracle.map((r) => r.replies));
  });

  it('WRITE: reads go on at once, writes (and an EXEC with writes) wait until CLIENT UNPAUSE', async () => {
    const results: Record<string, string[]> = {};
    for (const [name, port] of sides()) {
      const [a, b, c] = await Promise.all([RawClient.connect(port), RawClient.connect(port), RawClient.connect(port)]);
      await c.call(['MULTI'], ['INCR', 'pause:n']); // queued before the pause
      expect(text(await a.call(['CLIENT', 'PAUSE', '20000', 'WRITE']))).toEqual(['+OK\r\n']);
      const read = await timed(b, [['GET', 'pause:k'], ['PING']]);
      expect(read.ms, name).toBeLessThan(1000);
      const write = timed(b, [
        ['SET', 'pause:k', 'w'],
        ['GET', 'pause:k'],
      ]);
      const exec = timed(c, [['EXEC']]);
      await new Promise((r) => setTimeout(r, 300));
      const before = Date.now();
      expect(text(await a.call(['GET', 'pause:k']))).toEqual(read.replies.slice(0, 1)); // reads of the pausing client too
      expect(text(await a.call(['CLIENT', 'UNPAUSE']))).toEqual(['+OK\r\n']);
      const [w, e] = await Promise.all([write, exec]);
      expect(w.ms, name).toBeGreaterThanOrEqual(250);
      expect(e.ms, name).toBeGreaterThanOrEqual(250);
      expect(Date.now() - before, name).toBeLessThan(2000);
      results[name] = [...read.replies, ...w.replies, ...e.replies];
      for (const x of [a, b, c]) x.close();
    }
    expect(results.proxy).toEqual(results.oracle);
  });
});
