// Keyspace notifications through the proxy (issues 22 and 24): CONFIG SET/GET notify-keyspace-events go to
// the upstream (the service documents them over REST), and the events arrive over the pub/sub streams.
// Each step runs against a direct redis-server and through the proxy; the reply bytes are compared.
// The steps follow Redis' own suite (tests/unit/pubsub.tcl, "Keyspace notifications: …").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

describe('keyspace notifications through the proxy, against redis-server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    if (!stack) return;
    // Leave the shared upstream as it was.
    const r = await RawClient.connect(stack.proxy.port);
    await r.call(['CONFIG', 'SET', 'notify-keyspace-events', '']);
    r.close();
    await stack.stop();
  });

  const text = (b: Buffer[]) => b.map((x) => x.toString('latin1'));
  const ports = () => ({ oracle: stack.oracle.endpoint.port, proxy: stack.proxy.port });

  /** Runs `steps` on both sides; returns each side's transcript (replies of `r`, then the events `rd` read). */
  async function onBoth(
    flags: string,
    writes: string[][],
    events: number,
    protocol: 2 | 3 = 2,
  ): Promise<Record<'oracle' | 'proxy', string[]>> {
    const out = { oracle: [] as string[], proxy: [] as string[] };
    for (const side of ['oracle', 'proxy'] as const) {
      const port = ports()[side];
      const [r, rd] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      await r.call(['DEL', 'foo', 'bar', 'mylist', 'myhash']);
      out[side].push(...text(await r.call(['CONFIG', 'SET', 'notify-keyspace-events', flags])));
      if (protocol === 3) await rd.call(['HELLO', '3']);
      out[side].push(...text(await rd.call(['PSUBSCRIBE', '*'])));
      out[side].push(...text(await r.call(...writes)));
      out[side].push(...text(await rd.replies(events)));
      rd.close();
      r.close();
    }
    return out;
  }

  it('CONFIG SET then CONFIG GET answer as Redis (the flags normalized by the upstream)', async () => {
    const out = { oracle: [] as string[], proxy: [] as string[] };
    for (const side of ['oracle', 'proxy'] as const) {
      const r = await RawClient.connect(ports()[side]);
      for (const flags of ['gKE', '$lshzxeKE', 'KA', 'EA', '']) {
        out[side].push(...text(await r.call(['CONFIG', 'SET', 'notify-keyspace-events', flags])));
        out[side].push(...text(await r.call(['CONFIG', 'GET', 'notify-keyspace-events'])));
        out[side].push(...text(await r.call(['CONFIG', 'GET', 'NOTIFY-keyspace-EVENTS'])));
      }
      // A bad flag is refused by the upstream with Redis' text.
      out[side].push(...text(await r.call(['CONFIG', 'SET', 'notify-keyspace-events', 'KQ'])));
      r.close();
    }
    expect(out.proxy).toEqual(out.oracle);
    expect(out.proxy).toContain('*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nAK\r\n');
  });

  it('a pattern of CONFIG GET that matches it shows the upstream value beside the proxy-owned ones', async () => {
    const r = await RawClient.connect(stack.proxy.port);
    await r.call(['CONFIG', 'SET', 'notify-keyspace-events', 'Kh']);
    const [reply] = text(await r.call(['CONFIG', 'GET', 'notify-*']));
    expect(reply).toBe('*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nhK\r\n');
    const [both] = text(await r.call(['CONFIG', 'GET', 'notify-keyspace-events', 'maxclients']));
    expect(both).toMatch(/^\*4\r\n\$22\r\nnotify-keyspace-events\r\n\$2\r\nhK\r\n\$10\r\nmaxclients\r\n/);
    await r.call(['CONFIG', 'SET', 'notify-keyspace-events', '']);
    r.close();
  });

  it('keyspace and keyevent events of SET (KEA)', async () => {
    const out = await onBoth('KEA', [['SET', 'foo', 'bar']], 2);
    expect(out.proxy).toEqual(out.oracle);
    expect(out.proxy.at(-2)).toBe('*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyspace@0__:foo\r\n$3\r\nset\r\n');
  });

  it('masked events: only list commands (KEl), and generic ones (KEg)', async () => {
    const lists = await onBoth(
      'KEl',
      [
        ['SET', 'foo', 'bar'],
        ['LPUSH', 'mylist', 'a'],
        ['RPUSH', 'mylist', 'a'],
        ['RPOP', 'mylist'],
      ],
      6,
    );
    expect(lists.proxy).toEqual(lists.oracle);
    const generic = await onBoth(
      'KEg',
      [
        ['SET', 'foo', 'bar'],
        ['EXPIRE', 'foo', '100'],
        ['DEL', 'foo'],
      ],
      4,
    );
    expect(generic.proxy).toEqual(generic.oracle);
  });

  it('new-key events (En) and hash events in RESP3 (Kh)', async () => {
    const fresh = await onBoth(
      'En',
      [
        ['SET', 'foo', 'bar'],
        ['SET', 'foo', 'baz'],
        ['SET', 'bar', 'bar'],
      ],
      2,
    );
    expect(fresh.proxy).toEqual(fresh.oracle);
    const hashes = await onBoth(
      'Kh',
      [
        ['HSET', 'myhash', 'f', 'v'],
        ['HINCRBY', 'myhash', 'n', '1'],
        ['HDEL', 'myhash', 'f', 'n'],
      ],
      3,
      3,
    );
    expect(hashes.proxy).toEqual(hashes.oracle);
  });

  it('expired events (Ex) arrive when the key expires', async () => {
    const out = await onBoth('Ex', [['PSETEX', 'foo', '100', '1']], 1);
    expect(out.proxy).toEqual(out.oracle);
    expect(out.proxy.at(-1)).toBe('*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$22\r\n__keyevent@0__:expired\r\n$3\r\nfoo\r\n');
  });

  it('events reach a subscriber of one channel (SUBSCRIBE __keyspace@0__:foo)', async () => {
    const out = { oracle: [] as string[], proxy: [] as string[] };
    for (const side of ['oracle', 'proxy'] as const) {
      const [r, rd] = await Promise.all([RawClient.connect(ports()[side]), RawClient.connect(ports()[side])]);
      await r.call(['DEL', 'foo', 'other']);
      out[side].push(...text(await r.call(['CONFIG', 'SET', 'notify-keyspace-events', 'K$'])));
      out[side].push(...text(await rd.call(['SUBSCRIBE', '__keyspace@0__:foo'])));
      out[side].push(...text(await r.call(['SET', 'foo', '1'], ['APPEND', 'foo', '2'], ['SET', 'other', '3'])));
      out[side].push(...text(await rd.replies(2)));
      rd.close();
      r.close();
    }
    expect(out.proxy).toEqual(out.oracle);
  });
});
