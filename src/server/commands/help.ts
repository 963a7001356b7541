// The HELP texts of Redis 7.0.15, line for line (taken from redis-server 7.0.15's replies), and the
// two replies built from them (server.c addReplyHelp, addReplySubcommandSyntaxError).
import type { Protocol } from '../../resp/protocol.js';
import { errorReply, reply } from '../replies.js';

/** addReplyHelp (server.c): the help text as an array of status replies, one per line. */
export function helpReply(protocol: Protocol, lines: readonly string[]): Buffer {
  return reply(protocol, (w) => {
    w.arrayHeader(lines.length);
    for (const line of lines) w.simple(line);
  });
}

/** addReplySubcommandSyntaxError (server.c): a known subcommand called with the wrong arguments. */
export function subcommandSyntaxError(args: Buffer[]): Buffer {
  const sub = args[1].subarray(0, 128).toString('latin1');
  return errorReply(
    `ERR unknown subcommand or wrong number of arguments for '${sub}'. Try ${args[0].toString('latin1').toUpperCase()} HELP.`,
  );
}

export const COMMAND_HELP: readonly string[] = [
  'COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  '(no subcommand)',
  '    Return details about all Redis commands.',
  'COUNT',
  '    Return the total number of commands in this Redis server.',
  'LIST',
  '    Return a list of all commands in this Redis server.',
  'INFO [<command-name> ...]',
  '    Return details about multiple Redis commands.',
  '    If no command names are given, documentation details for all',
  '    commands are returned.',
  'DOCS [<command-name> ...]',
  '    Return documentation details about multiple Redis commands.',
  '    If no command names are given, documentation details for all',
  '    commands are returned.',
  'GETKEYS <full-command>',
  '    Return the keys from a full Redis command.',
  'GETKEYSANDFLAGS <full-command>',
  '    Return the keys and the access flags from a full Redis command.',
  'HELP',
  // Redis 8's addReplyHelp says "Print"; COMMAND answers as Redis 8.8 (test/commands/redis8-fixtures.test.ts).
  '    Print this help.',
];

export const CLIENT_HELP: readonly string[] = [
  'CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'CACHING (YES|NO)',
  '    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.',
  'GETREDIR',
  '    Return the client ID we are redirecting to when tracking is enabled.',
  'GETNAME',
  '    Return the name of the current connection.',
  'ID',
  '    Return the ID of the current connection.',
  'INFO',
  '    Return information about the current client connection.',
  'KILL <ip:port>',
  '    Kill connection made from <ip:port>.',
  'KILL <option> <value> [<option> <value> [...]]',
  '    Kill connections. Options are:',
  '    * ADDR (<ip:port>|<unixsocket>:0)',
  '      Kill connections made from the specified address',
  '    * LADDR (<ip:port>|<unixsocket>:0)',
  '      Kill connections made to specified local address',
  '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
  '      Kill connections by type.',
  '    * USER <username>',
  '      Kill connections authenticated by <username>.',
  '    * SKIPME (YES|NO)',
  '      Skip killing current connection (default: yes).',
  'LIST [options ...]',
  '    Return information about client connections. Options:',
  '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
  '      Return clients of specified type.',
  'UNPAUSE',
  '    Stop the current client pause, resuming traffic.',
  'PAUSE <timeout> [WRITE|ALL]',
  '    Suspend all, or just write, clients for <timeout> milliseconds.',
  'REPLY (ON|OFF|SKIP)',
  '    Control the replies sent to the current connection.',
  'SETNAME <name>',
  '    Assign the name <name> to the current connection.',
  'UNBLOCK <clientid> [TIMEOUT|ERROR]',
  '    Unblock the specified blocked client.',
  'TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]',
  '         [OPTIN] [OPTOUT] [NOLOOP]',
  '    Control server assisted client side caching.',
  'TRACKINGINFO',
  '    Report tracking status for the current connection.',
  'NO-EVICT (ON|OFF)',
  '    Protect current client connection from eviction.',
  'HELP',
  '    Prints this help.',
];

export const CONFIG_HELP: readonly string[] = [
  'CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'GET <pattern>',
  '    Return parameters matching the glob-like <pattern> and their values.',
  'SET <directive> <value>',
  '    Set the configuration <directive> to <value>.',
  'RESETSTAT',
  '    Reset statistics reported by the INFO command.',
  'REWRITE',
  '    Rewrite the configuration file.',
  'HELP',
  '    Prints this help.',
];

export const MODULE_HELP: readonly string[] = [
  'MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'LIST',
  '    Return a list of loaded modules.',
  'LOAD <path> [<arg> ...]',
  '    Load a module library from <path>, passing to it any optional arguments.',
  'LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]',
  '    Load a module library from <path>, while passing it module configurations and optional arguments.',
  'UNLOAD <name>',
  '    Unload a module.',
  'HELP',
  '    Prints this help.',
];
