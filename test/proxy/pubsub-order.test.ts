// The order of message and pmessage (issue 22): PubsubOrder alone (in process, the arrival orders of
// two streams chosen by the test), then through the proxy against a direct redis-server: Redis' own
// suite's "Mix SUBSCRIBE and PSUBSCRIBE" and "NUMPATs returns the number of unique patterns" steps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PubsubOrder } from '../../src/proxy/pubsub-order.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

describe('PubsubOrder (in process)', () => {
  const frame = (text: string) => Buffer.from(text);
  function setup(subscribed: string[], holdMs = 50) {
    const out: string[] = [];
    const order = new PubsubOrder(
      (f) => out.push(f.toString()),
      (ch) => subscribed.includes(ch),
      holdMs,
    );
    const message = (ch: string, m: string) => order.message(ch, Buffer.from(m), frame(`message ${ch} ${m}`));
    const pmessage = (p: string, ch: string, m: string) => order.pmessage(p, ch, Buffer.from(m), frame(`pmessage ${p} ${ch} ${m}`));
    return { out, order, message, pmessage };
  }

  it('a pmessage that arrives first waits for the message of its channel', () => {
    const { out, message, pmessage } = setup(['a']);
    pmessage('a*', 'a', 'x');
    expect(out).toEqual([]);
    message('a', 'x');
    expect(out).toEqual(['message a x', 'pmessage a* a x']);
  });

  it('a pmessage after its message goes out at once; one of a channel not subscribed never waits', () => {
    const { out, message, pmessage } = setup(['a']);
    message('a', 'x');
    pmessage('a*', 'a', 'x');
    pmessage('a*', 'b', 'y');
    expect(out).toEqual(['message a x', 'pmessage a* a x', 'pmessage a* b y']);
  });

  it("a pattern's later pmessages wait behind its held one (its stream's order is kept); two patterns, repeated payloads", () => {
    const { out, message, pmessage } = setup(['a']);
    pmessage('a*', 'a', 'same');
    pmessage('a*', 'b', 'other channel');
    pmessage('*', 'a', 'same');
    pmessage('a*', 'a', 'same');
    expect(out).toEqual([]);
    message('a', 'same');
    expect(out).toEqual(['message a same', 'pmessage a* a same', 'pmessage a* b other channel', 'pmessage * a same']);
    message('a', 'same');
    expect(out.slice(4)).toEqual(['message a same', 'pmessage a* a same']);
  });

  it('a message that never comes releases its pmessage after the hold', async () => {
    const { out, pmessage, message } = setup(['a'], 30);
    pmessage('a*', 'a', 'missed');
    await new Promise((r) => setTimeout(r, 60));
    expect(out).toEqual(['pmessage a* a missed']);
    message('a', 'next');
    pmessage('a*', 'a', 'next');
    expect(out.slice(1)).toEqual(['message a next', 'pmessage a* a next']);
  });

  it('leaving the pattern or the channel writes what was held; flushAll writes everything', () => {
    const { out, order, pmessage } = setup(['a', 'b']);
    pmessage('a*', 'a', '1');
    pmessage('b*', 'b', '2');
    pmessage('c*', 'b', '3');
    order.flushPattern('a*');
    expect(out).toEqual(['pmessage a* a 1']);
    order.flushChannel('b');
    expect(out.slice(1).sort()).toEqual(['pmessage b* b 2', 'pmessage c* b 3']);
    pmessage('a*', 'a', '4');
    order.flushAll();
    expect(out.at(-1)).toBe('pmessage a* a 4');
  });
});

describe('through the proxy, against redis-server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const subscribeCount = (args: string[]) => (/subscribe$/i.test(args[0]) ? Math.max(1, args.length - 1) : 1);
  async function send(c: RawClient, ...commands: string[][]): Promise<string[]> {
    c.write(encodeCommands(commands));
    return (await c.replies(commands.reduce((n, cmd) => n + subscribeCount(cmd), 0))).map((b) => b.toString('latin1'));
  }

  it('a client subscribed to a channel and to a matching pattern reads message, then pmessage, for each PUBLISH (20 rounds)', async () => {
    const frames: Record<string, string[]> = { oracle: [], proxy: [] };
    for (const side of ['oracle', 'proxy'] as const) {
      const port = side === 'oracle' ? stack.oracle.endpoint.port : stack.proxy.port;
      const [sub, pub] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      frames[side].push(...(await send(sub, ['SUBSCRIBE', 'foo.bar'], ['PSUBSCRIBE', 'foo.*'])));
      for (let i = 0; i < 20; i++) {
        frames[side].push(...(await send(pub, ['PUBLISH', 'foo.bar', `hello ${i}`])));
        frames[side].push(...(await sub.replies(2)).map((b) => b.toString('latin1')));
      }
      sub.close();
      pub.close();
    }
    expect(frames.proxy).toEqual(frames.oracle);
  });

  it('PUBSUB NUMPAT counts unique patterns across clients, right after other clients left theirs (Redis suite steps, 5 rounds)', async () => {
    const results: Record<string, string[]> = { oracle: [], proxy: [] };
    for (const side of ['oracle', 'proxy'] as const) {
      const port = side === 'oracle' ? stack.oracle.endpoint.port : stack.proxy.port;
      const r = await RawClient.connect(port);
      for (let round = 0; round < 5; round++) {
        // "PUBLISH/PSUBSCRIBE after PUNSUBSCRIBE without arguments", then "NUMPATs returns the number of unique patterns".
        const before = await RawClient.connect(port);
        await send(before, ['PSUBSCRIBE', 'chan1.*', 'chan2.*', 'chan3.*']);
        before.write(encodeCommands([['PUNSUBSCRIBE']]));
        await before.replies(3);
        results[side].push(...(await send(r, ['PUBLISH', 'chan1.hi', 'hello'])));
        before.close();
        const [rd1, rd2] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
        await send(rd1, ['PSUBSCRIBE', 'foo*']);
        await send(rd2, ['PSUBSCRIBE', 'foo*']);
        await send(rd1, ['PSUBSCRIBE', 'bar*']);
        await send(rd2, ['PSUBSCRIBE', 'baz*']);
        results[side].push(...(await send(r, ['PUBSUB', 'NUMPAT'])));
        // A client that leaves by closing its connection, its patterns still subscribed.
        rd1.close();
        rd2.close();
        await new Promise((resolve) => rd2.socket.once('close', resolve));
        // Redis drops a closed client's patterns in the event-loop turn that reads its FIN; the proxy
        // does so when it sees the close, and the upstream's subscriber count (PUBLISH's answer) follows
        // when the proxy's event streams have closed. On a loaded machine that can trail the next
        // command by a few ms, so both counts are read once they have settled (at once on Redis).
        await until(async () => (await send(r, ['PUBSUB', 'NUMPAT']))[0] === ':0\r\n', `${side}: NUMPAT back to 0`, 5_000);
        await until(async () => (await send(r, ['PUBLISH', 'foo.1', 'x']))[0] === ':0\r\n', `${side}: no subscriber left`, 5_000);
        results[side].push(...(await send(r, ['PUBSUB', 'NUMPAT'], ['PUBLISH', 'foo.1', 'x'])));
      }
      r.close();
    }
    expect(results.proxy).toEqual(results.oracle);
  });
});
