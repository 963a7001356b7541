// The commands every table port lists (COMMAND, COMMAND DOCS, HELP): the handshake commands, which
// run the handlers every port shares (server/commands/, so their replies and errors are the proxy
// port's), and INFO, COMMAND and HELP, answered from the port's own table.
import os from 'node:os';
import { lower } from '../resp/args.js';
import { CommandError, help, helpLines, syntax, type Call, type PortCommand, type Reply } from './command-table.js';
import { writeCommandDocs, writeCommandInfo } from '../commands/introspection.js';
import { REDIS_VERSION, RESPGATE_VERSION } from '../version.js';

function info(c: Call): Reply {
  const cn = c.conn;
  const port = cn.port;
  const sections = c.args.slice(1).map(lower);
  const want = (s: string) =>
    sections.length === 0 || sections.some((x) => x === s || x === 'all' || x === 'everything' || x === 'default');
  const parts: string[] = [];
  if (want('server')) {
    parts.push(
      [
        '# Server',
        `redis_version:${REDIS_VERSION}`,
        `respgate_version:${RESPGATE_VERSION}`,
        `respgate_role:${port.role}-sideport`,
        'redis_mode:standalone',
        `os:${os.type()} ${os.release()} ${os.arch()}`,
        `process_id:${process.pid}`,
        `tcp_port:${cn.localPort}`,
        `uptime_in_seconds:${Math.floor((Date.now() - port.server.startedAt) / 1000)}`,
      ].join('\r\n'),
    );
  }
  if (want('clients')) parts.push(['# Clients', `connected_clients:${[...port.server.connections()].length}`].join('\r\n'));
  if (want('stats')) {
    const server = port.server;
    parts.push(
      [
        '# Stats',
        `total_connections_received:${server.acceptedConnections}`,
        `total_commands_processed:${server.stats.commands}`,
        `total_net_input_bytes:${server.traffic().input}`,
        `total_net_output_bytes:${server.traffic().output}`,
      ].join('\r\n'),
    );
  }
  if (want('persistence')) parts.push(['# Persistence', 'loading:0'].join('\r\n'));
  if (want('memory')) parts.push(['# Memory', 'maxmemory_policy:noeviction'].join('\r\n'));
  if (want('upstream')) parts.push(['# Upstream', ...port.upstreamInfo()].join('\r\n'));
  // Not in the default set, as in Redis: asked by name, or with `all` / `everything`.
  const asked = (x: string) => sections.some((y) => y === x || y === 'all' || y === 'everything');
  const stats = port.server.commandStats;
  if (asked('commandstats')) parts.push(['# Commandstats', ...stats.commandLines().map(([k, v]) => `${k}:${v}`)].join('\r\n'));
  if (asked('errorstats')) parts.push(['# Errorstats', ...stats.errorLines().map(([k, v]) => `${k}:${v}`)].join('\r\n'));
  const body = parts.length ? parts.join('\r\n\r\n') + '\r\n' : '';
  return (w) => (w.protocol === 3 ? w.verbatim(body) : w.bulk(body));
}

function command(c: Call): Reply {
  const { table } = c.conn.port;
  if (c.args.length === 1) {
    return (w) => {
      w.arrayHeader(table.all.length);
      for (const s of table.all) writeCommandInfo(w, table.data(s));
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
        for (const s of table.all) w.bulk(s.displayName ?? s.name);
      };
    case 'info': {
      const specs = names.length === 0 ? table.all : names.map((n) => table.get(n));
      return (w) => {
        w.arrayHeader(specs.length);
        for (const s of specs) {
          if (s) writeCommandInfo(w, table.data(s));
          else w.nullBulk();
        }
      };
    }
    case 'docs': {
      const specs = names.length === 0 ? table.all : names.map((n) => table.get(n)).filter((s): s is PortCommand => s !== undefined);
      return (w) => {
        w.mapHeader(specs.length);
        for (const s of specs) {
          w.bulk(s.displayName ?? s.name);
          writeCommandDocs(w, table.data(s));
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
  const { table, role } = c.conn.port;
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
  lines.push('Connection: AUTH, HELLO, PING, ECHO, SELECT 0, CLIENT, QUIT, RESET, INFO, COMMAND, SLOWLOG, HELP');
  return help(lines);
}

/** A handshake command as data: it runs the shared handler (server/commands/), so it has no `run`. */
const shared = (
  name: string,
  arity: number,
  summary: string,
  args: PortCommand['args'] = [],
  flags: string[] = [],
  group = 'connection',
): PortCommand => ({
  name,
  arity,
  summary,
  group,
  since: '1.0.0',
  flags: ['fast', ...flags],
  acl: ['@fast', `@${group}`],
  args,
});

const token = (name: string, args?: PortCommand['args']): NonNullable<PortCommand['args']>[number] =>
  args ? { name, type: 'block', token: name.toUpperCase(), arguments: args } : { name, type: 'pure-token', token: name.toUpperCase() };

/** The commands of every table port; the port's own follow them in its table. */
export function tablePortCommands(): PortCommand[] {
  return [
    shared('ping', -1, "Returns the server's liveliness response.", [{ name: 'message', type: 'string', optional: true }]),
    shared('echo', 2, 'Returns the given string.', [{ name: 'message', type: 'string' }]),
    shared(
      'auth',
      -2,
      'Authenticates the connection.',
      [
        { name: 'username', type: 'string', optional: true },
        { name: 'password', type: 'string' },
      ],
      ['noscript', 'loading', 'stale', 'no_auth'],
    ),
    shared(
      'hello',
      -1,
      'Handshakes with the server.',
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
    shared('select', 2, 'Changes the selected database (only 0 exists on a side port).', [{ name: 'index', type: 'integer' }]),
    shared('quit', -1, 'Closes the connection.', [], ['no_auth']),
    shared('reset', 1, 'Resets the connection.', [], ['no_auth']),
    shared('client', -2, "A container for client connection commands (on this port's own connections).", [
      {
        name: 'subcommand',
        type: 'oneof',
        arguments: [
          token('id'),
          token('getname'),
          { name: 'setname', type: 'string', token: 'SETNAME' },
          token('info'),
          { name: 'list', type: 'block', token: 'LIST', arguments: [{ name: 'filter', type: 'string', optional: true, multiple: true }] },
          { name: 'kill', type: 'block', token: 'KILL', arguments: [{ name: 'filter', type: 'string', multiple: true }] },
          { name: 'reply', type: 'string', token: 'REPLY' },
          { name: 'no-evict', type: 'string', token: 'NO-EVICT' },
          {
            name: 'setinfo',
            type: 'block',
            token: 'SETINFO',
            arguments: [
              { name: 'attr', type: 'string' },
              { name: 'value', type: 'string' },
            ],
          },
          { name: 'no-touch', type: 'string', token: 'NO-TOUCH' },
        ],
      },
    ]),
    shared(
      'slowlog',
      -2,
      "A container for this port's slow log commands.",
      [
        {
          name: 'subcommand',
          type: 'oneof',
          arguments: [{ name: 'get', type: 'integer', token: 'GET', optional: true }, token('len'), token('reset')],
        },
      ],
      ['admin', 'loading', 'stale'],
      'server',
    ),
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
