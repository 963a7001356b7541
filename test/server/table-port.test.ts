// A table port on its own (src/server/table-port.ts), with a small command table of its own and no
// platform: the core's guarantees as a side port's handlers see them. Replies come in request order
// whatever order the handlers finish in; requests run one after another; consecutive group commands
// run as one group; a reply is encoded in the protocol in force when its request was read; CLIENT
// REPLY, AUTH and backpressure work as on the proxy port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { CommandError, type PortCommand } from '../../src/server/command-table.js';
import { startTablePort, type RunningTablePort } from '../../src/server/table-port.js';
import { resolvePortLimits } from '../../src/config.js';
import { RawClient } from '../helpers/stack.js';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const str = (b: Buffer[]) => b.map((x) => x.toString('latin1'));

/** What the handlers saw, in the order they ran. */
const ran: string[] = [];
const groups: number[] = [];

const COMMANDS: PortCommand[] = [
  {
    // SLOW <ms> <text>: answers <text> after <ms>; records when it starts and ends.
    name: 'slow',
    arity: 3,
    summary: 'Answers after a delay.',
    group: 'test',
    flags: [],
    acl: [],
    run: async ({ args }) => {
      const text = args[2].toString();
      ran.push(`start ${text}`);
      await sleep(Number(args[1]));
      ran.push(`end ${text}`);
      return (w) => w.bulk(text);
    },
  },
  {
    name: 'pair',
    arity: 1,
    summary: 'A map reply (RESP3 map, RESP2 flat array).',
    group: 'test',
    flags: ['fast'],
    acl: [],
    run: () => (w) => w.mapHeader(1).bulk('a').integer(1),
  },
  {
    name: 'add',
    arity: 2,
    summary: 'A group command: consecutive ADDs run together.',
    group: 'test',
    flags: ['write'],
    acl: [],
    runGroup: async (calls) => {
      groups.push(calls.length);
      await sleep(5);
      return calls.map(({ args }) =>
        args[1].toString() === 'bad' ? new CommandError('ERR bad value') : (w) => w.integer(Number(args[1].toString())),
      );
    },
  },
  {
    name: 'boom',
    arity: 1,
    summary: 'A handler that fails with a plain error.',
    group: 'test',
    flags: [],
    acl: [],
    run: () => {
      throw new Error('kaput');
    },
  },
];

let open: RunningTablePort;
let locked: RunningTablePort;
let small: RunningTablePort;

function start(requirepass?: string, limits: Partial<Parameters<typeof resolvePortLimits>[0]> = {}): Promise<RunningTablePort> {
  return startTablePort(
    {
      role: 'test',
      host: '127.0.0.1',
      port: 0,
      requirepass,
      limits: resolvePortLimits(limits),
      commands: COMMANDS,
      upstreamInfo: () => ['upstream_url:none'],
      errorText: () => undefined,
      busyText: (p) => `port ${p} is busy`,
    },
    log,
  );
}

beforeAll(async () => {
  open = await start();
  locked = await start('pw');
  small = await start(undefined, { maxPendingReplies: 4 });
});
afterAll(() => {
  for (const p of [open, locked, small]) p?.stop();
});

describe('a table port', () => {
  it('runs requests one after another and answers in request order, shared commands included', async () => {
    ran.length = 0;
    const c = await RawClient.connect(open.port);
    const replies = await c.call(['SLOW', '40', 'one'], ['PING'], ['SLOW', '1', 'two'], ['ECHO', 'e']);
    expect(str(replies)).toEqual(['$3\r\none\r\n', '+PONG\r\n', '$3\r\ntwo\r\n', '$1\r\ne\r\n']);
    expect(ran).toEqual(['start one', 'end one', 'start two', 'end two']);
    c.close();
  });

  it('runs consecutive group commands as one group; an error answers its own request only', async () => {
    groups.length = 0;
    const c = await RawClient.connect(open.port);
    // A handshake command (PING) runs at once and does not end the group; another table command does.
    const replies = await c.call(
      ['SLOW', '20', 'x'],
      ['ADD', '1'],
      ['ADD', 'bad'],
      ['PING'],
      ['ADD', '3'],
      ['SLOW', '1', 'y'],
      ['ADD', '4'],
    );
    expect(str(replies)).toEqual(['$1\r\nx\r\n', ':1\r\n', '-ERR bad value\r\n', '+PONG\r\n', ':3\r\n', '$1\r\ny\r\n', ':4\r\n']);
    expect(groups).toEqual([3, 1]);
    c.close();
  });

  it('encodes a reply in the protocol in force when its request was read (HELLO 3 after a slow command)', async () => {
    const c = await RawClient.connect(open.port);
    const [slowPair, hello, pair] = await c.call(['SLOW', '30', 'p'], ['HELLO', '3'], ['PAIR']);
    expect(slowPair.toString()).toBe('$1\r\np\r\n');
    expect(hello.toString()).toMatch(/^%7\r\n/);
    expect(pair.toString()).toBe('%1\r\n$1\r\na\r\n:1\r\n');
    const [resetReply, pair2] = await c.call(['RESET'], ['PAIR']);
    expect(resetReply.toString()).toBe('+RESET\r\n');
    expect(pair2.toString()).toBe('*2\r\n$1\r\na\r\n:1\r\n');
    c.close();
  });

  it('answers unknown commands, arity and handler failures with Redis-style errors and keeps serving', async () => {
    const c = await RawClient.connect(open.port);
    expect(str(await c.call(['NOPE', 'a'], ['SLOW', '1'], ['BOOM'], ['PING']))).toEqual([
      "-ERR unknown command 'NOPE', with args beginning with: 'a' \r\n",
      "-ERR wrong number of arguments for 'slow' command\r\n",
      '-ERR internal error in the test side port: kaput\r\n',
      '+PONG\r\n',
    ]);
    c.close();
  });

  it('CLIENT REPLY OFF silences the replies of later commands, slow ones included, until ON', async () => {
    const c = await RawClient.connect(open.port);
    c.write(
      Buffer.from(
        '*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n' +
          '*3\r\n$4\r\nSLOW\r\n$2\r\n20\r\n$6\r\nsilent\r\n' +
          '*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$2\r\nON\r\n' +
          '*2\r\n$4\r\nECHO\r\n$5\r\nheard\r\n',
      ),
    );
    expect(str(await c.replies(2))).toEqual(['+OK\r\n', '$5\r\nheard\r\n']);
    c.close();
  });

  it('with a password: NOAUTH before AUTH, pipelined commands after AUTH run authenticated', async () => {
    const c = await RawClient.connect(locked.port);
    expect(str(await c.call(['SLOW', '1', 'a'], ['AUTH', 'pw'], ['SLOW', '1', 'b'], ['CLIENT', 'GETNAME']))).toEqual([
      '-NOAUTH Authentication required.\r\n',
      '+OK\r\n',
      '$1\r\nb\r\n',
      '$-1\r\n',
    ]);
    c.close();
  });

  it('backpressure: past maxPendingReplies owed it stops reading, and every reply still arrives in order', async () => {
    const c = await RawClient.connect(small.port);
    const n = 40;
    const replies = await c.call(...Array.from({ length: n }, (_, i) => ['SLOW', '1', `r${i}`]));
    expect(str(replies)).toEqual(Array.from({ length: n }, (_, i) => `$${`r${i}`.length}\r\nr${i}\r\n`));
    c.close();
  });

  it('CLIENT LIST and INFO show this port only', async () => {
    const a = await RawClient.connect(locked.port);
    await a.call(['AUTH', 'pw']);
    const [list] = await a.call(['CLIENT', 'LIST']);
    expect(list.toString().match(/^id=/gm)).toHaveLength(1);
    const [info] = await a.call(['INFO', 'server']);
    expect(info.toString()).toContain('respgate_role:test-sideport');
    a.close();
  });
});
