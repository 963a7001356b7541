// CLIENT LIST / INFO fields that follow pub/sub and MONITOR state, compared with redis-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** The fields of one CLIENT LIST line that do not depend on addresses, ids or timing. */
function stateFields(line: string): Record<string, string> {
  const fields = Object.fromEntries(
    line
      .trim()
      .split(' ')
      .map((kv) => kv.split('=') as [string, string]),
  );
  return { flags: fields.flags, sub: fields.sub, psub: fields.psub, multi: fields.multi, cmd: fields.cmd };
}

async function clientLists(port: number): Promise<{ all: string[]; pubsub: string[]; normal: string[] }> {
  const sub = await RawClient.connect(port);
  await sub.call(['SUBSCRIBE', 'a', 'b'].map(String));
  await sub.replies(1); // the second subscribe confirmation
  await sub.call(['PSUBSCRIBE', 'p*']);
  const mon = await RawClient.connect(port);
  await mon.call(['MONITOR']);
  const q = await RawClient.connect(port);
  const [all, pubsub, normal] = await q.call(
    ['CLIENT', 'LIST'],
    ['CLIENT', 'LIST', 'TYPE', 'pubsub'],
    ['CLIENT', 'LIST', 'TYPE', 'normal'],
  );
  const lines = (b: Buffer) =>
    b
      .toString()
      .split('\r\n')[1]
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.stringify(stateFields(l)))
      .sort();
  for (const c of [sub, mon, q]) c.close();
  return { all: lines(all), pubsub: lines(pubsub), normal: lines(normal) };
}

describe('CLIENT LIST with subscribers and a monitor', () => {
  it('shows flags P and O, sub/psub counts, and TYPE filters as redis-server does', async () => {
    const oracle = await clientLists(stack.oracle.endpoint.port);
    const proxy = await clientLists(stack.proxy.port);
    expect(proxy).toEqual(oracle);
    expect(oracle.pubsub).toEqual([JSON.stringify({ flags: 'P', sub: '2', psub: '1', multi: '-1', cmd: 'psubscribe' })]);
  });
});
