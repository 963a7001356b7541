// Commands both side ports answer themselves, with Redis 7.0's replies and error texts: the
// handshake of mainstream clients (HELLO, AUTH, SELECT 0, CLIENT SETNAME/SETINFO/ID, INFO, COMMAND)
// and discovery (COMMAND DOCS for redis-cli hints, HELP).
import { timingSafeEqual } from 'node:crypto';
import os from 'node:os';
import { CommandError, integerArg, SYNTAX_ERROR } from './args.js';
import { help, helpLines, syntax, writeCommandDocs, writeCommandInfo, type Call, type CommandSpec, type Reply } from './command-spec.js';
import type { Connection } from './connection.js';

const OK = Buffer.from('+OK\r\n');
const WRONGPASS = 'WRONGPASS invalid username-password pair or user is disabled.';
const VERSION = '0.1.0';

const lower = (b: Buffer) => b.toString('latin1').toLowerCase();

function samePassword(given: Buffer, expected: string): boolean {
  const e = Buffer.from(expected);
  return given.length === e.length && timingSafeEqual(given, e);
}

function validClientName(name: Buffer): boolean {
  for (const c of name) if (c < 0x21 || c > 0x7e) return false;
  return true;
}

const conn = (c: Call): Connection => c.conn;

function ping(c: Call): Reply {
  if (c.args.length === 2) return (w) => w.bulk(c.args[1]);
  return Buffer.from('+PONG\r\n');
}

function auth(c: Call): Reply {
  const { args } = c;
  const pass = conn(c).ctx.requirepass;
  if (args.length > 3) throw new CommandError(SYNTAX_ERROR);
  if (pass === undefined) {
    if (args.length === 2)
      throw new CommandError(
        'ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?',
      );
    if (args[1].toString() === 'default') return OK;
    throw new CommandError(WRONGPASS);
  }
  const user = args.length === 3 ? args[1].toString() : 'default';
  if (user !== 'default' || !samePassword(args[args.length - 1], pass)) {
    conn(c).setAuthenticated(false);
    throw new CommandError(WRONGPASS);
  }
  conn(c).setAuthenticated(true);
  return OK;
}

function hello(c: Call): Reply {
  const { args } = c;
  const cn = conn(c);
  let protocol = cn.protocol;
  if (args.length >= 2) {
    const t = args[1].toString('latin1');
    if (!/^-?\d+$/.test(t)) throw new CommandError('ERR Protocol version is not an integer or out of range');
    const v = Number(t);
    if (v < 2 || v > 3) throw new CommandError('NOPROTO unsupported protocol version');
    protocol = v as 2 | 3;
  }
  let authPair: [Buffer, Buffer] | undefined;
  let setname: Buffer | undefined;
  for (let i = 2; i < args.length; i++) {
    const opt = lower(args[i]);
    const more = args.length - i - 1;
    if (opt === 'auth' && more >= 2) {
      authPair = [args[i + 1], args[i + 2]];
      i += 2;
    } else if (opt === 'setname' && more >= 1) {
      setname = args[++i];
    } else {
      throw new CommandError(`ERR Syntax error in HELLO option '${args[i].toString()}'`);
    }
  }
  const pass = cn.ctx.requirepass;
  if (authPair) {
    if (authPair[0].toString() !== 'default' || (pass !== undefined && !samePassword(authPair[1], pass))) throw new CommandError(WRONGPASS);
    cn.setAuthenticated(true);
  }
  if (!cn.authenticated) {
    throw new CommandError(
      'NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time',
    );
  }
  if (setname !== undefined) {
    if (!validClientName(setname)) throw new CommandError('ERR Client names cannot contain spaces, newlines or special characters.');
    cn.name = setname.toString();
  }
  cn.protocol = protocol;
  return (w) => {
    w.mapHeader(7);
    w.bulk('server').bulk('redis');
    w.bulk('version').bulk('7.0.15');
    w.bulk('proto').integer(protocol);
    w.bulk('id').integer(cn.id);
    w.bulk('mode').bulk('standalone');
    w.bulk('role').bulk('master');
    w.bulk('modules').arrayHeader(0);
  };
}

function select(c: Call): Reply {
  const id = integerArg(c.args[1]);
  if (id !== 0) throw new CommandError('ERR DB index is out of range');
  return OK;
}

function client(c: Call): Reply {
  const cn = conn(c);
  const sub = lower(c.args[1]);
  const n = c.args.length;
  const subErr = () =>
    new CommandError(`ERR unknown subcommand or wrong number of arguments for '${c.args[1].toString().slice(0, 128)}'. Try CLIENT HELP.`);
  switch (sub) {
    case 'id':
      if (n !== 2) throw subErr();
      return (w) => w.integer(cn.id);
    case 'setname':
      if (n !== 3) throw subErr();
      if (!validClientName(c.args[2])) throw new CommandError('ERR Client names cannot contain spaces, newlines or special characters.');
      cn.name = c.args[2].toString();
      return OK;
    case 'getname':
      if (n !== 2) throw subErr();
      return (w) => w.bulk(cn.name === '' ? null : cn.name);
    case 'setinfo': {
      if (n !== 4) throw subErr();
      const attr = lower(c.args[2]);
      if (attr !== 'lib-name' && attr !== 'lib-ver') throw new CommandError(`ERR Unrecognized option '${c.args[2].toString()}'`);
      if (c.args[3].some((b) => b < 0x21 || b > 0x7e))
        throw new CommandError(`ERR ${attr} cannot contain spaces, newlines or special characters.`);
      if (attr === 'lib-name') cn.libName = c.args[3].toString();
      else cn.libVersion = c.args[3].toString();
      return OK;
    }
    case 'info':
      if (n !== 2) throw subErr();
      return (w) => {
        const line = `id=${cn.id} addr=${cn.socket.remoteAddress}:${cn.socket.remotePort} laddr=${cn.socket.localAddress}:${cn.socket.localPort} name=${cn.name} db=0 resp=${cn.protocol} lib-name=${cn.libName} lib-ver=${cn.libVersion}\n`;
        if (w.protocol === 3) w.verbatim(line);
        else w.bulk(line);
      };
    case 'help':
      return help([
        'CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
        'GETNAME',
        '    Return the name of the current connection.',
        'ID',
        '    Return the ID of the current connection.',
        'INFO',
        '    Return information about the current client connection.',
        'SETINFO <option> <value>',
        '    Set client meta attr. Options are:',
        '    * LIB-NAME: the client lib name.',
        '    * LIB-VER: the client lib version.',
        'SETNAME <name>',
        '    Assign the name <name> to the current connection.',
        'HELP',
        '    Print this help.',
      ]);
    default:
      throw subErr();
  }
}

function info(c: Call): Reply {
  const cn = conn(c);
  const ctx = cn.ctx;
  const sections = c.args.slice(1).map(lower);
  const want = (s: string) =>
    sections.length === 0 || sections.some((x) => x === s || x === 'all' || x === 'everything' || x === 'default');
  const parts: string[] = [];
  if (want('server')) {
    parts.push(
      [
        '# Server',
        'redis_version:7.0.15',
        `respgate_version:${VERSION}`,
        `respgate_role:${ctx.role}-sideport`,
        'redis_mode:standalone',
        `os:${os.type()} ${os.release()} ${os.arch()}`,
        `process_id:${process.pid}`,
        `tcp_port:${(cn.socket.address() as { port?: number }).port ?? 0}`,
        `uptime_in_seconds:${Math.floor((Date.now() - ctx.startedAt) / 1000)}`,
      ].join('\r\n'),
    );
  }
  if (want('clients')) parts.push(['# Clients', `connected_clients:${ctx.connections()}`].join('\r\n'));
  if (want('persistence')) parts.push(['# Persistence', 'loading:0'].join('\r\n'));
  if (want('memory')) parts.push(['# Memory', 'maxmemory_policy:noeviction'].join('\r\n'));
  if (want('upstream')) parts.push(['# Upstream', ...ctx.upstreamInfo()].join('\r\n'));
  const body = parts.length ? parts.join('\r\n\r\n') + '\r\n' : '';
  return (w) => (w.protocol === 3 ? w.verbatim(body) : w.bulk(body));
}

function command(c: Call): Reply {
  const { table } = conn(c).ctx;
  if (c.args.length === 1) {
    return (w) => {
      w.arrayHeader(table.all.length);
      for (const s of table.all) writeCommandInfo(w, s);
    };
  }
  const sub = lower(c.args[1]);
  const names = c.args.slice(2);
  switch (sub) {
    case 'count':
      if (c.args.length !== 2) break;
      return (w) => w.integer(table.all.length);
    case 'list':
      if (c.args.length !== 2) break;
      return (w) => {
        w.arrayHeader(table.all.length);
        for (const s of table.all) w.bulk(s.name);
      };
    case 'info': {
      const specs = names.length === 0 ? table.all : names.map((n) => table.get(n));
      return (w) => {
        w.arrayHeader(specs.length);
        for (const s of specs) {
          if (s) writeCommandInfo(w, s);
          else w.nullBulk();
        }
      };
    }
    case 'docs': {
      const specs = names.length === 0 ? table.all : names.map((n) => table.get(n)).filter((s): s is CommandSpec => s !== undefined);
      return (w) => {
        w.mapHeader(specs.length);
        for (const s of specs) {
          w.bulk(s.name);
          writeCommandDocs(w, s);
        }
      };
    }
    case 'help':
      if (c.args.length !== 2) break;
      return help([
        'COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
        '(no subcommand)',
        '    Return details about all commands of this side port.',
        'COUNT',
        '    Return the total number of commands of this side port.',
        'LIST',
        '    Return a list of all commands of this side port.',
        'INFO [<command-name> ...]',
        '    Return details about multiple commands.',
        'DOCS [<command-name> ...]',
        '    Return documentation details about multiple commands.',
        'HELP',
        '    Print this help.',
      ]);
    default:
      break;
  }
  throw new CommandError(
    `ERR unknown subcommand or wrong number of arguments for '${c.args[1].toString().slice(0, 128)}'. Try COMMAND HELP.`,
  );
}

/** `HELP` lists every command with its syntax; `HELP <command>` explains one. */
function helpCommand(c: Call): Reply {
  const { table, role } = conn(c).ctx;
  if (c.args.length === 2) {
    const spec = table.get(c.args[1]);
    if (!spec)
      throw new CommandError(`ERR unknown command '${c.args[1].toString().slice(0, 128)}': HELP lists the commands of this side port`);
    return help(helpLines(spec));
  }
  const lines = [`respgate ${role} side port. Commands (HELP <command> or <COMMAND> HELP for details; COMMAND DOCS for all):`];
  for (const s of table.all) {
    if (s.group === 'connection' || s.group === 'server') continue;
    if (s.subcommands) for (const sub of s.subcommands) lines.push(syntax(sub));
    else lines.push(syntax(s));
  }
  lines.push('Connection: AUTH, HELLO, PING, ECHO, SELECT 0, CLIENT, QUIT, RESET, INFO, COMMAND, HELP');
  return help(lines);
}

function reset(c: Call): Reply {
  const cn = conn(c);
  cn.protocol = 2;
  cn.name = '';
  cn.setAuthenticated(cn.ctx.requirepass === undefined);
  return Buffer.from('+RESET\r\n');
}

function quit(c: Call): Reply {
  conn(c).closeAfterReplies();
  return OK;
}

const connection = (
  name: string,
  arity: number,
  summary: string,
  run: CommandSpec['run'],
  args: CommandSpec['args'] = [],
  flags: string[] = [],
): CommandSpec => ({
  name,
  arity,
  summary,
  group: 'connection',
  since: '1.0.0',
  flags: ['fast', ...flags],
  acl: ['@fast', '@connection'],
  args,
  run,
});

export function commonCommands(): CommandSpec[] {
  return [
    connection('ping', -1, "Returns the server's liveliness response.", ping, [{ name: 'message', type: 'string', optional: true }]),
    connection('echo', 2, 'Returns the given string.', (c) => (w) => w.bulk(c.args[1]), [{ name: 'message', type: 'string' }]),
    connection(
      'auth',
      -2,
      'Authenticates the connection.',
      auth,
      [
        { name: 'username', type: 'string', optional: true },
        { name: 'password', type: 'string' },
      ],
      ['noscript', 'loading', 'stale', 'no_auth'],
    ),
    connection(
      'hello',
      -1,
      'Handshakes with the server.',
      hello,
      [
        {
          name: 'arguments',
          type: 'block',
          optional: true,
          arguments: [
            { name: 'protover', type: 'integer' },
            {
              name: 'username-password',
              type: 'block',
              token: 'AUTH',
              optional: true,
              arguments: [
                { name: 'username', type: 'string' },
                { name: 'password', type: 'string' },
              ],
            },
            { name: 'clientname', type: 'string', token: 'SETNAME', optional: true },
          ],
        },
      ],
      ['noscript', 'loading', 'stale', 'no_auth'],
    ),
    connection('select', 2, 'Changes the selected database (only 0 exists on a side port).', select, [{ name: 'index', type: 'integer' }]),
    connection('quit', -1, 'Closes the connection.', quit, [], ['no_auth']),
    connection('reset', 1, 'Resets the connection.', reset, [], ['no_auth']),
    connection('client', -2, 'A container for client connection commands.', client, [
      {
        name: 'subcommand',
        type: 'oneof',
        arguments: [
          { name: 'id', type: 'pure-token', token: 'ID' },
          { name: 'getname', type: 'pure-token', token: 'GETNAME' },
          { name: 'setname', type: 'string', token: 'SETNAME' },
          { name: 'info', type: 'pure-token', token: 'INFO' },
          {
            name: 'setinfo',
            type: 'block',
            token: 'SETINFO',
            arguments: [
              {
                name: 'attr',
                type: 'oneof',
                arguments: [
                  { name: 'libname', type: 'string', token: 'LIB-NAME' },
                  { name: 'libver', type: 'string', token: 'LIB-VER' },
                ],
              },
            ],
          },
        ],
      },
    ]),
    {
      name: 'info',
      arity: -1,
      summary: 'Returns information and statistics about the side port.',
      group: 'server',
      since: '1.0.0',
      flags: ['loading', 'stale'],
      acl: ['@slow', '@dangerous'],
      args: [{ name: 'section', type: 'string', optional: true, multiple: true }],
      run: info,
    },
    {
      name: 'command',
      arity: -1,
      summary: 'Returns detailed information about the commands of this side port.',
      group: 'server',
      since: '2.8.13',
      flags: ['loading', 'stale'],
      acl: ['@slow', '@connection'],
      args: [
        {
          name: 'subcommand',
          type: 'oneof',
          optional: true,
          arguments: [
            { name: 'count', type: 'pure-token', token: 'COUNT' },
            { name: 'list', type: 'pure-token', token: 'LIST' },
            { name: 'info', type: 'string', token: 'INFO', multiple: true },
            { name: 'docs', type: 'string', token: 'DOCS', multiple: true },
          ],
        },
      ],
      run: command,
    },
    {
      name: 'help',
      arity: -1,
      summary: 'Lists the commands of this side port, or explains one.',
      group: 'server',
      flags: ['loading', 'stale', 'fast'],
      acl: ['@fast'],
      args: [{ name: 'command', type: 'string', optional: true }],
      run: helpCommand,
    },
  ];
}
