// The side ports' handlers in-process: each command looked up in the port's CommandTable and run through
// the TableConnection interface against a fake upstream client that records its calls; the replies
// are rendered with the connection's ReplyWriter. The ports' process tests (queue-port, vector-port)
// cover the same commands over sockets against the real platform.
import { describe, expect, it } from 'vitest';
import { CommandError, CommandTable, type PortCommand, type Reply, type TableConnection } from '../../src/server/command-table.js';
import { ReplyWriter } from '../../src/resp/reply-writer.js';
import type { Protocol } from '../../src/resp/protocol.js';
import { queueCommands } from '../../src/sideports/queue-commands.js';
import { vectorCommands } from '../../src/sideports/vector/commands.js';
import type { QueueClient } from '../../src/upstream/queue-client.js';
import type { IndexInfo, VectorClient } from '../../src/upstream/vector-client.js';

type Recorded = [method: string, ...args: unknown[]];

/** A client whose every method records its call and answers `answer(method)`. */
function fakeClient<C>(calls: Recorded[], answer: (method: string) => unknown): C {
  return new Proxy({} as object, {
    get: (_t, method: string) =>
      method === 'then' ? undefined : (...args: unknown[]) => (calls.push([method, ...args]), Promise.resolve(answer(method))),
  }) as C;
}

function render(reply: Reply, proto: Protocol = 2): string {
  if (Buffer.isBuffer(reply)) return reply.toString();
  const w = new ReplyWriter(proto);
  reply(w);
  return w.toBuffer().toString();
}

/** Runs one request as the port does: look the command up in the table, then call its handler. */
async function run(commands: PortCommand[], words: string[], proto: Protocol = 2): Promise<string> {
  const table = new CommandTable(commands);
  const spec = table.get(words.length > 1 && table.get(words[0])?.subcommands ? `${words[0]}|${words[1]}` : words[0]);
  if (!spec?.run) throw new Error(`no handler for ${words[0]}`);
  const conn = { port: { role: 'test', table } } as unknown as TableConnection;
  return render(await spec.run({ args: words.map((w) => Buffer.from(w)), conn }), proto);
}

describe('queue side port handlers', () => {
  const calls: Recorded[] = [];
  const client = fakeClient<QueueClient>(calls, (m) => (m === 'getKeys' ? { current: 'sig_a', next: 'sig_b' } : { messageId: 'msg_1' }));
  const commands = queueCommands(client);

  it('QPUBLISH turns its options into Upstash-* headers and answers the service JSON as a map', async () => {
    calls.length = 0;
    const reply = await run(commands, ['QPUBLISH', 'https://example.com/hook', 'hi', 'RETRIES', '3', 'METHOD', 'PUT', 'DELAY', '10s'], 3);
    expect(reply).toBe('%1\r\n$9\r\nmessageId\r\n$5\r\nmsg_1\r\n');
    expect(calls).toHaveLength(1);
    const [method, destination, message] = calls[0] as [string, string, { body: Buffer; headers: Record<string, string> }];
    expect([method, destination, message.body.toString()]).toEqual(['publish', 'https://example.com/hook', 'hi']);
    expect(message.headers).toEqual({ 'Upstash-Retries': '3', 'Upstash-Method': 'PUT', 'Upstash-Delay': '10s' });
  });

  it('QPUBLISH refuses a bad option value with a Redis-style error and calls nothing', async () => {
    calls.length = 0;
    await expect(run(commands, ['QPUBLISH', 'https://example.com/', 'x', 'DELAY', 'soon'])).rejects.toThrow(CommandError);
    await expect(run(commands, ['QPUBLISH', 'https://example.com/', 'x', 'DELAY', 'soon'])).rejects.toThrow(/^ERR /);
    expect(calls).toEqual([]);
  });

  it('QKEYS GET is a subcommand of the QKEYS container; RESP2 flattens the map', async () => {
    calls.length = 0;
    expect(await run(commands, ['QKEYS', 'GET'])).toBe('*4\r\n$7\r\ncurrent\r\n$5\r\nsig_a\r\n$4\r\nnext\r\n$5\r\nsig_b\r\n');
    expect(calls).toEqual([['getKeys']]);
  });
});

describe('vector side port handlers', () => {
  const info: IndexInfo = {
    vectorCount: 3,
    pendingVectorCount: 0,
    indexSize: 0,
    dimension: 4,
    similarityFunction: 'COSINE',
    namespaces: {
      '': { vectorCount: 0, pendingVectorCount: 0 },
      books: { vectorCount: 2, pendingVectorCount: 0 },
      bikes: { vectorCount: 1, pendingVectorCount: 0 },
    },
  };
  const calls: Recorded[] = [];
  const commands = vectorCommands([fakeClient<VectorClient>(calls, (m) => (m === 'info' ? info : {}))]);

  it('VCARD answers a namespace count from /info; a missing key is 0', async () => {
    expect(await run(commands, ['VCARD', 'books'])).toBe(':2\r\n');
    expect(await run(commands, ['VCARD', 'nope'])).toBe(':0\r\n');
  });

  it('KEYS lists namespaces with vectors only (the empty default namespace is no key)', async () => {
    const reply = await run(commands, ['KEYS', 'b*']);
    expect(reply.split('\r\n').filter((l) => !/^[*$]/.test(l) && l)).toEqual(expect.arrayContaining(['books', 'bikes']));
    expect(await run(commands, ['KEYS', '*'])).not.toContain('$0\r\n');
  });

  it('EXISTS counts a key named twice twice; TYPE is vectorset or none', async () => {
    expect(await run(commands, ['EXISTS', 'books', 'books', 'nope', ''])).toBe(':2\r\n');
    expect(await run(commands, ['TYPE', 'bikes'])).toBe('+vectorset\r\n');
    expect(await run(commands, ['TYPE', ''])).toBe('+none\r\n');
  });

  it('VDIM of a missing key is an error, as in Redis', async () => {
    await expect(run(commands, ['VDIM', 'nope'])).rejects.toThrow('ERR key does not exist');
    expect(await run(commands, ['VDIM', 'books'])).toBe(':4\r\n');
  });
});
