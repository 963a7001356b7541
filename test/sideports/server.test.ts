// The RESP server shared by both side ports: handshakes, AUTH/NOAUTH, Redis' texts for unknown
// commands and wrong arity, COMMAND INFO/DOCS (redis-cli hints), HELP, INFO, CLIENT, reply order.
import { Redis as IORedis } from 'ioredis';
import { createClient, RESP_TYPES } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { queuePort, raw, rawText, redisCli, vectorPort } from './harness.js';

let platform: RunningPlatform;
let open: RunningSideport;
let locked: RunningSideport;

beforeAll(async () => {
  platform = await startTestPlatform();
  open = await queuePort({ url: `${platform.url}/queue`, token: platform.token });
  locked = await vectorPort({ url: `${platform.url}/vector/dense`, token: platform.token, requirepass: 's3cret' });
});
afterAll(async () => {
  await open?.stop();
  await locked?.stop();
  await platform?.stop();
});

describe('handshake and connection commands', () => {
  it('answers PING, ECHO, SELECT 0 and HELLO 2/3 with the bytes Redis sends', async () => {
    const [pong, hi, echo, sel0, sel1, hello3, ping3, hello2] = await rawText(open.port, [
      ['PING'],
      ['PING', 'hi'],
      ['ECHO', 'x y'],
      ['SELECT', '0'],
      ['SELECT', '1'],
      ['HELLO', '3'],
      ['PING', 'z'],
      ['HELLO', '2'],
    ]);
    expect(pong).toBe('+PONG\r\n');
    expect(hi).toBe('$2\r\nhi\r\n');
    expect(echo).toBe('$3\r\nx y\r\n');
    expect(sel0).toBe('+OK\r\n');
    expect(sel1).toBe('-ERR DB index is out of range\r\n');
    expect(hello3).toMatch(
      /^%7\r\n\$6\r\nserver\r\n\$5\r\nredis\r\n\$7\r\nversion\r\n\$6\r\n7\.0\.15\r\n\$5\r\nproto\r\n:3\r\n\$2\r\nid\r\n:\d+\r\n/,
    );
    expect(ping3).toBe('$1\r\nz\r\n');
    expect(hello2).toMatch(/^\*14\r\n\$6\r\nserver\r\n/);
  });

  it('refuses bad HELLO versions and options like Redis', async () => {
    const replies = await rawText(open.port, [
      ['HELLO', '4'],
      ['HELLO', 'x'],
      ['HELLO', '3', 'BOGUS'],
    ]);
    expect(replies).toEqual([
      '-NOPROTO unsupported protocol version\r\n',
      '-ERR Protocol version is not an integer or out of range\r\n',
      "-ERR Syntax error in HELLO option 'BOGUS'\r\n",
    ]);
  });

  it('gives Redis 7 texts for an unknown command, a wrong arity and an unknown subcommand', async () => {
    const replies = await rawText(open.port, [['NOPE', 'a', 'b'], ['ECHO'], ['QGROUP', 'BOGUS'], ['QGROUP', 'GET'], ['CLIENT', 'NOPE']]);
    expect(replies).toEqual([
      "-ERR unknown command 'NOPE', with args beginning with: 'a' 'b' \r\n",
      "-ERR wrong number of arguments for 'echo' command\r\n",
      "-ERR unknown subcommand 'BOGUS'. Try QGROUP HELP.\r\n",
      "-ERR wrong number of arguments for 'qgroup|get' command\r\n",
      // CLIENT is the proxy port's (server/commands/client.ts), checked against Redis 7.0's table.
      "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n",
    ]);
  });

  it('keeps CLIENT SETNAME/GETNAME/ID per connection, and answers SETINFO as the proxy port does', async () => {
    const [set, get, id, info, bad, list] = await rawText(open.port, [
      ['CLIENT', 'SETNAME', 'worker-1'],
      ['CLIENT', 'GETNAME'],
      ['CLIENT', 'ID'],
      ['CLIENT', 'SETINFO', 'LIB-NAME', 'mylib'],
      ['CLIENT', 'SETNAME', 'a b'],
      ['CLIENT', 'LIST'],
    ]);
    expect(set).toBe('+OK\r\n');
    expect(get).toBe('$8\r\nworker-1\r\n');
    expect(id).toMatch(/^:\d+\r\n$/);
    // Redis 7.2's SETINFO, answered by the CLIENT handler every port shares (server/commands/client.ts).
    expect(info).toBe('+OK\r\n');
    expect(bad).toBe('-ERR Client names cannot contain spaces, newlines or special characters.\r\n');
    // CLIENT LIST of the port's own connections, with the proxy port's fields.
    expect(list).toMatch(
      /id=\d+ addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ fd=\d+ name=worker-1 age=\d+ idle=\d+ flags=N db=0 .* cmd=client\|list user=default redir=-1 resp=2\n/,
    );
    const [fresh] = await rawText(open.port, [['CLIENT', 'GETNAME']]);
    expect(fresh).toBe('$-1\r\n');
  });

  it('RESET returns to RESP2 and QUIT answers +OK then closes after earlier replies', async () => {
    const replies = await rawText(open.port, [['HELLO', '3'], ['RESET'], ['CLIENT', 'GETNAME'], ['PING'], ['QUIT']]);
    expect(replies.slice(1)).toEqual(['+RESET\r\n', '$-1\r\n', '+PONG\r\n', '+OK\r\n']);
  });

  it('counts its own commands: INFO commandstats/errorstats and SLOWLOG, as the proxy port does', async () => {
    await rawText(open.port, [['PING'], ['QGROUP', 'LIST'], ['NOPE']]);
    const text = await redisCli(open.port, ['INFO', 'commandstats']);
    expect(text).toMatch(/cmdstat_ping:calls=\d+,usec=\d+,usec_per_call=[\d.]+,rejected_calls=0,failed_calls=0/);
    expect(text).toMatch(/cmdstat_qgroup\|list:calls=\d+/);
    expect(await redisCli(open.port, ['INFO', 'errorstats'])).toMatch(/errorstat_ERR:count=\d+/);
    expect(await redisCli(open.port, ['INFO'])).not.toContain('cmdstat_');
    const [len, reset] = await rawText(open.port, [
      ['SLOWLOG', 'LEN'],
      ['SLOWLOG', 'RESET'],
    ]);
    expect(len).toMatch(/^:\d+\r\n$/);
    expect(reset).toBe('+OK\r\n');
  });

  it('INFO has a server section with redis_version and the role, and no token', async () => {
    const text = await redisCli(open.port, ['INFO', 'server']);
    expect(text).toContain('redis_version:7.0.15');
    expect(text).toContain('respgate_role:queue-sideport');
    const all = await redisCli(open.port, ['INFO']);
    expect(all).toContain('loading:0');
    expect(all).toContain('maxmemory_policy:noeviction');
    expect(all).toContain(`upstream_url:${platform.url}/queue`);
    expect(all).not.toContain(platform.token);
  });

  it('a client that ends its side after writing still gets every reply, then the connection closes', async () => {
    const net = await import('node:net');
    const s = net.connect(open.port, '127.0.0.1');
    const got = await new Promise<string>((resolve) => {
      let out = '';
      s.on('data', (d) => (out += d.toString()));
      s.on('close', () => resolve(out));
      s.end('PING\r\nQQUEUE GET nothing-here\r\nECHO last\r\n');
    });
    expect(got).toMatch(/^\+PONG\r\n-ERR queue service error \(HTTP 404\): [^\r]*\r\n\$4\r\nlast\r\n$/);
  });

  it('answers a protocol error with Redis text and closes', async () => {
    const net = await import('node:net');
    const s = net.connect(open.port, '127.0.0.1');
    const got = await new Promise<string>((resolve) => {
      let out = '';
      s.on('data', (d) => (out += d.toString()));
      s.on('close', () => resolve(out));
      s.write('*1\r\n$x\r\n');
    });
    expect(got).toBe('-ERR Protocol error: invalid bulk length\r\n');
  });
});

describe('AUTH with --requirepass', () => {
  it('answers NOAUTH before AUTH, WRONGPASS for a bad password, then serves commands', async () => {
    const replies = await rawText(locked.port, [
      ['VCARD', 'x'],
      ['AUTH', 'nope'],
      ['AUTH', 'bob', 's3cret'],
      ['PING'],
      ['AUTH', 's3cret'],
      ['PING'],
    ]);
    expect(replies).toEqual([
      '-NOAUTH Authentication required.\r\n',
      '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
      '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
      '-NOAUTH Authentication required.\r\n',
      '+OK\r\n',
      '+PONG\r\n',
    ]);
  });

  it('HELLO needs AUTH when not authenticated, and HELLO 3 AUTH default <pass> works', async () => {
    const [noauth, hello] = await rawText(locked.port, [
      ['HELLO', '3'],
      ['HELLO', '3', 'AUTH', 'default', 's3cret'],
    ]);
    expect(noauth).toMatch(/^-NOAUTH HELLO must be called with the client already authenticated/);
    expect(hello).toMatch(/^%7\r\n/);
  });

  it('a long command pipelined right after AUTH is read with the authenticated limits, as Redis does', async () => {
    const values = Array.from({ length: 20 }, (_, i) => String(i));
    const [ok, reply] = await rawText(locked.port, [
      ['AUTH', 's3cret'],
      ['VADD', 'k', 'VALUES', '20', ...values, 'e'],
    ]);
    expect(ok).toBe('+OK\r\n');
    // The whole command was read and run: a new key of 20 dimensions, which no index of the port has.
    expect(reply).toMatch(/^-ERR no vector index of dimension 20 for the new key/);
  });

  it('AUTH without a configured password answers like Redis', async () => {
    const [r] = await rawText(open.port, [['AUTH', 'x']]);
    expect(r).toBe(
      '-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n',
    );
  });

  it('ioredis and node-redis connect with a password', async () => {
    const io = new IORedis({ port: locked.port, password: 's3cret', lazyConnect: true });
    await io.connect();
    expect(await io.ping()).toBe('PONG');
    io.disconnect();
    const nr = createClient({ socket: { port: locked.port }, password: 's3cret', RESP: 3 });
    await nr.connect();
    expect(await nr.ping()).toBe('PONG');
    await nr.quit();
    const wrong = createClient({ socket: { port: locked.port, reconnectStrategy: false }, password: 'bad' });
    wrong.on('error', () => {});
    await expect(wrong.connect()).rejects.toThrow(/WRONGPASS/);
  });
});

describe('discovery: COMMAND, COMMAND DOCS, HELP', () => {
  it('COMMAND COUNT/LIST/INFO describe the side port commands', async () => {
    const io = new IORedis({ port: open.port });
    const count = (await io.call('COMMAND', 'COUNT')) as number;
    const list = (await io.call('COMMAND', 'LIST')) as string[];
    expect(list).toEqual(expect.arrayContaining(['qpublish', 'qgroup', 'qdlq', 'account', 'ping', 'hello']));
    expect(count).toBe(list.length);
    const [info, missing] = (await io.call('COMMAND', 'INFO', 'qpublish', 'nope')) as unknown[][];
    expect(info.slice(0, 2)).toEqual(['qpublish', -3]);
    expect(missing).toBeNull();
    io.disconnect();
  });

  it('COMMAND DOCS gives summary, group and arguments (RESP2 flat, RESP3 map)', async () => {
    const io = new IORedis({ port: locked.port, password: 's3cret' });
    const docs = (await io.call('COMMAND', 'DOCS', 'vadd')) as unknown[];
    expect(docs[0]).toBe('VADD'); // a module's command: Redis 8 prints it as registered
    const fields = docs[1] as unknown[];
    expect(fields[fields.indexOf('group') + 1]).toBe('vector_set');
    expect(JSON.stringify(fields[fields.indexOf('arguments') + 1])).toContain('SETATTR');
    io.disconnect();
    const nr = createClient({ socket: { port: locked.port }, password: 's3cret', RESP: 3 });
    await nr.connect();
    const m = (await nr.withTypeMapping({ [RESP_TYPES.MAP]: Map }).sendCommand(['COMMAND', 'DOCS', 'vsim'])) as Map<
      string,
      Map<string, unknown>
    >;
    expect(m.get('VSIM')!.get('summary')).toMatch(/similar/);
    await nr.quit();
  });

  it('redis-cli shows the docs through its own help (built from COMMAND DOCS)', async () => {
    // eslint-disable-next-line no-control-regex -- strips the terminal's colour codes
    const out = (await redisCli(locked.port, ['help', 'VSIM'], ['-a', 's3cret', '--no-auth-warning'])).replace(/\x1b\[[0-9;]*m/g, '');
    // redis-cli answers `help` itself; its text for a command comes from the server's COMMAND DOCS.
    expect(out).toContain('VSIM key');
    expect(out).toContain('WITHSCORES');
  });

  it('HELP lists the commands, HELP <cmd> and <CMD> HELP explain one, container HELP lists subcommands', async () => {
    const io = new IORedis({ port: open.port });
    const all = (await io.call('HELP')) as string[];
    expect(all.join('\n')).toContain('QPUBLISH destination body');
    expect(all.join('\n')).toContain('QDLQ LIST');
    const one = (await io.call('HELP', 'qpublish')) as string[];
    expect(one[0]).toMatch(/^QPUBLISH destination body .*\[RETRIES retries\]/);
    expect(await io.call('QPUBLISH', 'HELP')).toEqual(one);
    const group = (await io.call('QGROUP', 'HELP')) as string[];
    expect(group[0]).toBe('QGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:');
    expect(group).toContain('ADD group url [url ...]');
    await expect(io.call('HELP', 'nope')).rejects.toThrow(/unknown command 'nope'/);
    io.disconnect();
  });
});

describe('metrics', () => {
  it('/metrics shows the connections and requests of each side port', async () => {
    const { metricsText } = await import('../../src/metrics.js');
    const io = new IORedis({ port: open.port });
    await io.ping();
    await io.ping();
    const { body } = await metricsText();
    expect(body).toMatch(/^respgate_queue_sideport_connections [1-9]\d*$/m);
    expect(Number(/^respgate_queue_sideport_commands_total (\d+)$/m.exec(body)![1])).toBeGreaterThanOrEqual(2);
    expect(body).toMatch(/^respgate_vector_sideport_connections \d+$/m);
    io.disconnect();
  });
});

describe('ordering', () => {
  it('answers pipelined requests in order even when an upstream call is slower than a local one', async () => {
    const cmds: string[][] = [];
    for (let i = 0; i < 50; i++) cmds.push(i % 2 ? ['ECHO', String(i)] : ['QQUEUE', 'GET', `missing-${i}`]);
    const replies = await raw(open.port, cmds);
    replies.forEach((r, i) => {
      if (i % 2) expect(r.toString()).toBe(`$${String(i).length}\r\n${i}\r\n`);
      else expect(r.toString()).toMatch(/^-ERR queue service error \(HTTP 404\)/);
    });
  });
});
