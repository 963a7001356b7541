// Commands the proxy answers itself: the connection's own state (AUTH, HELLO, SELECT, CLIENT,
// RESET, QUIT) and introspection clients rely on during their handshake (INFO, COMMAND,
// CONFIG GET), with Redis 7.0.15's replies and error texts.
import { timingSafeEqual } from 'node:crypto';
import { commandDocsReply, commandInfoReply } from '../commands/introspection.js';
import { allCommands, allCommandsAndSubcommands, type CommandSpec } from '../commands/table.js';
import type { ReplyWriter } from '../resp/reply-writer.js';
import { buildInfo } from './info.js';
import { errorReply, OK, reply } from './replies.js';
import type { Session, SessionOptions, SessionRegistry } from './session.js';

export interface LocalContext {
  session: Session;
  registry: SessionRegistry;
  options: SessionOptions;
}

type Handler = (ctx: LocalContext, args: Buffer[]) => Buffer | undefined;

const PONG = Buffer.from('+PONG\r\n');
const RESET = Buffer.from('+RESET\r\n');
const WRONGPASS = errorReply('WRONGPASS invalid username-password pair or user is disabled.');
const SYNTAX = errorReply('ERR syntax error');
const NOT_INTEGER = errorReply('ERR value is not an integer or out of range');

const lower = (b: Buffer) => b.toString('latin1').toLowerCase();

const handlers: Record<string, Handler> = {
  ping: ({ session }, args) => {
    if (args.length > 2) return errorReply("ERR wrong number of arguments for 'ping' command");
    return args.length === 2 ? reply(session.protocol, (w) => w.bulk(args[1])) : PONG;
  },
  echo: ({ session }, args) => reply(session.protocol, (w) => w.bulk(args[1])),
  quit: ({ session }) => {
    session.streams.reset(); // no message or MONITOR line after the +OK
    session.answerNow(OK);
    session.closeAfterReplies();
    return undefined;
  },
  reset: ({ session, options }) => {
    session.discardTransaction();
    session.streams.reset();
    session.protocol = 2;
    session.name = '';
    session.setAuthenticated(options.requirepass === undefined);
    return RESET;
  },
  select: (_ctx, args) => {
    // server.c selectCommand: getIntFromObjectOrReply (string2ll, then the C int range).
    const id = parseLongLong(args[1]);
    if (id === undefined) return NOT_INTEGER;
    if (id < -2147483648n || id > 2147483647n) return errorReply('ERR value is out of range, value must between -2147483648 and 2147483647');
    return id === 0n ? OK : errorReply('ERR DB index is out of range');
  },
  auth: ({ session, options }, args) => {
    if (args.length > 3) return SYNTAX;
    if (options.requirepass === undefined) {
      if (args.length === 2) {
        return errorReply('ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?');
      }
      // AUTH default <anything> succeeds for a default user without a password, as in Redis.
      return args[1].toString() === 'default' ? OK : WRONGPASS;
    }
    const user = args.length === 3 ? args[1].toString() : 'default';
    const password = args[args.length - 1];
    if (user !== 'default' || !samePassword(password, options.requirepass)) {
      session.setAuthenticated(false);
      return WRONGPASS;
    }
    session.setAuthenticated(true);
    return OK;
  },
  hello: hello,
  client: client,
  info: ({ session, registry }, args) => {
    const sections = args.slice(1).map(lower);
    const wantsKeyspace = sections.length === 0 || sections.some((s) => ['keyspace', 'all', 'everything', 'default'].includes(s));
    // The protocol of the connection when the command ran (a HELLO after it must not change its reply).
    const protocol = session.protocol;
    const render = (keyspaceLine: string | undefined) =>
      reply(protocol, (w) => {
        const text = buildInfo(sections, { registry, session, keyspaceLine });
        if (protocol === 3) w.verbatim(text);
        else w.bulk(text);
      });
    if (!wantsKeyspace) return render(undefined);
    // The key count comes from the upstream, in this connection's order of commands.
    session.forward([Buffer.from('INFO'), Buffer.from('keyspace')], (upstream) => render(keyspaceFrom(upstream)));
    return undefined;
  },
  command: (ctx, args) => commandCommand(ctx, args),
  config: ({ session }, args) => (lower(args[1]) === 'help' ? helpReply(session, CONFIG_HELP) : configGet(session, args.slice(2))),
  module: ({ session }, args) => {
    const sub = lower(args[1]);
    if (sub === 'list') return reply(session.protocol, (w) => w.arrayHeader(0));
    if (sub === 'help') return helpReply(session, MODULE_HELP);
    return errorReply(`ERR command 'module|${sub}' is not supported by respgate: modules cannot be loaded into the upstream service`);
  },
};

export function runLocalCommand(ctx: LocalContext, spec: CommandSpec, args: Buffer[]): Buffer | undefined {
  const handler = handlers[spec.container ?? spec.name];
  if (!handler) return errorReply(`ERR command '${spec.name}' is not supported by respgate`);
  return handler(ctx, args);
}

/**
 * Redis' string2ll (util.c): an optional '-', then digits with no leading zero (except "0" itself),
 * nothing else (no '+', no spaces), within the signed 64-bit range. undefined when not such a number.
 */
function parseLongLong(arg: Buffer): bigint | undefined {
  const text = arg.toString('latin1');
  if (!/^(0|-?[1-9][0-9]{0,19})$/.test(text)) return undefined;
  const n = BigInt(text);
  return n < -9223372036854775808n || n > 9223372036854775807n ? undefined : n;
}

/** addReplySubcommandSyntaxError (server.c): a known subcommand called with the wrong arguments. */
function subcommandSyntaxError(args: Buffer[]): Buffer {
  const sub = args[1].subarray(0, 128).toString('latin1');
  return errorReply(`ERR unknown subcommand or wrong number of arguments for '${sub}'. Try ${args[0].toString('latin1').toUpperCase()} HELP.`);
}

/** addReplyHelp (server.c): the help text as an array of status replies, one per line. */
function helpReply(session: Session, lines: readonly string[]): Buffer {
  return reply(session.protocol, (w) => {
    w.arrayHeader(lines.length);
    for (const line of lines) w.simple(line);
  });
}

// The HELP texts of Redis 7.0.15, line for line (taken from redis-server 7.0.15's replies).
const COMMAND_HELP = [
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
  '    Prints this help.',
];

const CLIENT_HELP = [
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

const CONFIG_HELP = [
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

const MODULE_HELP = [
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

function samePassword(given: Buffer, expected: string): boolean {
  const e = Buffer.from(expected);
  return given.length === e.length && timingSafeEqual(given, e);
}

function hello(ctx: LocalContext, args: Buffer[]): Buffer | undefined {
  const { session, options } = ctx;
  let protocol = session.protocol;
  if (args.length >= 2) {
    const text = args[1].toString('latin1');
    if (!/^-?\d+$/.test(text)) return errorReply('ERR Protocol version is not an integer or out of range');
    const ver = Number(text);
    if (ver < 2 || ver > 3) return errorReply('NOPROTO unsupported protocol version');
    protocol = ver as 2 | 3;
  }
  let auth: [Buffer, Buffer] | undefined;
  let setname: Buffer | undefined;
  for (let i = 2; i < args.length; i++) {
    const opt = lower(args[i]);
    const more = args.length - i - 1;
    if (opt === 'auth' && more >= 2) {
      auth = [args[i + 1], args[i + 2]];
      i += 2;
    } else if (opt === 'setname' && more >= 1) {
      setname = args[i + 1];
      i += 1;
    } else {
      return errorReply(`ERR Syntax error in HELLO option '${args[i].toString()}'`);
    }
  }
  if (auth) {
    const ok = auth[0].toString() === 'default' && (options.requirepass === undefined || samePassword(auth[1], options.requirepass));
    if (!ok) return WRONGPASS;
    session.setAuthenticated(true);
  }
  if (!session.authenticated) {
    return errorReply('NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time');
  }
  if (setname !== undefined) {
    if (!validClientName(setname)) return errorReply('ERR Client names cannot contain spaces, newlines or special characters.');
    session.name = setname.toString();
  }
  session.protocol = protocol;
  return reply(protocol, (w) => {
    w.mapHeader(7);
    w.bulk('server').bulk('redis');
    w.bulk('version').bulk('7.0.15');
    w.bulk('proto').integer(protocol);
    w.bulk('id').integer(session.id);
    w.bulk('mode').bulk('standalone');
    w.bulk('role').bulk('master');
    w.bulk('modules').arrayHeader(0);
  });
}

function validClientName(name: Buffer): boolean {
  for (const c of name) if (c < 0x21 || c > 0x7e) return false;
  return true;
}

function client(ctx: LocalContext, args: Buffer[]): Buffer | undefined {
  const { session, registry } = ctx;
  const sub = lower(args[1]);
  switch (sub) {
    case 'id':
      return reply(session.protocol, (w) => w.integer(session.id));
    case 'setname':
      if (!validClientName(args[2])) return errorReply('ERR Client names cannot contain spaces, newlines or special characters.');
      session.name = args[2].toString();
      return OK;
    case 'getname':
      return reply(session.protocol, (w) => w.bulk(session.name === '' ? null : session.name));
    case 'info':
      return reply(session.protocol, (w) => text(w, session.protocol, clientLine(session, session.executing ? 'exec' : 'client|info')));
    case 'list': {
      const sessions = [...registry.sessions()];
      if (args.length > 2) {
        const opt = lower(args[2]);
        if (opt === 'type' && args.length === 4) {
          const type = lower(args[3]);
          if (!['normal', 'master', 'replica', 'slave', 'pubsub'].includes(type)) return errorReply(`ERR Unknown client type '${args[3].toString()}'`);
          // networking.c getClientType: a MONITOR client counts as normal, a subscriber as pubsub.
          const keep = type === 'pubsub' ? (x: Session) => x.streams.subscriptionCount > 0 : type === 'normal' ? (x: Session) => x.streams.subscriptionCount === 0 : () => false;
          sessions.splice(0, sessions.length, ...sessions.filter(keep));
        } else if (opt === 'id' && args.length >= 4) {
          // networking.c: every id must parse (string2ll); the matching clients follow the arguments' order.
          const ids: bigint[] = [];
          for (const a of args.slice(3)) {
            const id = parseLongLong(a);
            if (id === undefined) return errorReply('ERR Invalid client ID');
            ids.push(id);
          }
          const byId = new Map(sessions.map((s) => [BigInt(s.id), s]));
          sessions.splice(0, sessions.length, ...ids.flatMap((id) => byId.get(id) ?? []));
        } else {
          return SYNTAX;
        }
      }
      const lines = sessions.map((s) => clientLine(s, s === session ? (session.executing ? 'exec' : 'client|list') : s.lastCommand)).join('');
      return reply(session.protocol, (w) => text(w, session.protocol, lines));
    }
    case 'no-evict':
      if (!['on', 'off'].includes(lower(args[2]))) return SYNTAX;
      return OK;
    case 'getredir':
      return reply(session.protocol, (w) => w.integer(-1));
    case 'trackinginfo':
      // Tracking is never on through the proxy (CLIENT TRACKING is refused).
      return reply(session.protocol, (w) => {
        w.mapHeader(3);
        w.bulk('flags').setHeader(1).bulk('off');
        w.bulk('redirect').integer(-1);
        w.bulk('prefixes').arrayHeader(0);
      });
    case 'unpause':
      // No client is ever paused by this proxy, so there is nothing to resume.
      return OK;
    case 'unblock': {
      // networking.c: argc 3 or 4; the reason is checked before the id. A connection of this proxy
      // blocked in an emulated blocking command ends it with the timeout reply or an UNBLOCKED error.
      if (args.length !== 3 && args.length !== 4) return subcommandSyntaxError(args);
      if (args.length === 4 && !['timeout', 'error'].includes(lower(args[3]))) return errorReply('ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR');
      const id = parseLongLong(args[2]);
      if (id === undefined) return NOT_INTEGER;
      const reason = args.length === 4 && lower(args[3]) === 'error' ? 'error' : 'timeout';
      const target = [...registry.sessions()].find((s) => BigInt(s.id) === id);
      const unblocked = target !== undefined && target.unblock(reason);
      return reply(session.protocol, (w) => w.integer(unblocked ? 1 : 0));
    }
    case 'help':
      return helpReply(session, CLIENT_HELP);
    default:
      return errorReply(`ERR command 'client|${sub}' is not supported by respgate: it would act on upstream connections the proxy does not expose`);
  }
}

/** Bulk in RESP2; verbatim text in RESP3, as Redis 7.0 answers CLIENT INFO/LIST and INFO. */
function text(w: ReplyWriter, protocol: 2 | 3, s: string): void {
  if (protocol === 3) w.verbatim(s);
  else w.bulk(s);
}

/** One CLIENT LIST line in Redis 7.0's field order. */
function clientLine(s: Session, cmd: string): string {
  const now = Date.now();
  return (
    `id=${s.id} addr=${s.address} laddr=${s.localAddress} fd=${(s.socket as unknown as { _handle?: { fd?: number } })._handle?.fd ?? -1} ` +
    `name=${s.name} age=${Math.floor((now - s.createdAt) / 1000)} idle=${Math.floor((now - s.lastCommandAt) / 1000)} flags=${clientFlags(s)} db=0 ` +
    `sub=${s.streams.channelCount} psub=${s.streams.patternCount} ssub=0 multi=${s.queuedCommands} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 ` +
    `events=r cmd=${cmd} user=default redir=-1 resp=${s.protocol}\n`
  );
}

/** CLIENT LIST flags in Redis 7.0's order (networking.c catClientInfoString): O monitor, P pubsub, x multi. */
function clientFlags(s: Session): string {
  let flags = '';
  if (s.streams.monitoring) flags += 'O';
  if (s.streams.subscriptionCount > 0) flags += 'P';
  if (s.queuedCommands >= 0) flags += 'x';
  return flags || 'N';
}

/** The keys clients read at start-up (redis-benchmark: save, appendonly; BullMQ: maxmemory-policy). */
const CONFIG_VALUES: Record<string, string> = {
  save: '',
  appendonly: 'no',
  'maxmemory-policy': 'noeviction',
  maxmemory: '0',
  databases: '1',
  timeout: '0',
  maxclients: '10000',
  'proto-max-bulk-len': '536870912',
  'notify-keyspace-events': '',
  'cluster-enabled': 'no',
  'lua-time-limit': '5000',
  'busy-reply-threshold': '5000',
};

/**
 * config.c configGetCommand: a name without glob characters is looked up directly and answered under
 * the name as given; a pattern matches parameter names case-insensitively. Each parameter appears once.
 * (Redis emits the matches in hash-table order, which differs between servers; here, in match order.)
 */
function configGet(session: Session, patterns: Buffer[]): Buffer {
  const matched = new Map<string, [Buffer | string, string]>();
  for (const p of patterns) {
    const text = p.toString('latin1');
    if (!/[[*?]/.test(text)) {
      const name = text.toLowerCase();
      if (!matched.has(name) && Object.hasOwn(CONFIG_VALUES, name)) matched.set(name, [p, CONFIG_VALUES[name]]);
      continue;
    }
    const re = globToRegExp(text, true);
    for (const [k, v] of Object.entries(CONFIG_VALUES)) if (!matched.has(k) && re.test(k)) matched.set(k, [k, v]);
  }
  return reply(session.protocol, (w) => {
    w.mapHeader(matched.size);
    for (const [k, v] of matched.values()) w.bulk(k).bulk(v);
  });
}

/** Redis' glob (util.c stringmatchlen): `*`, `?`, `[...]` classes with `^` and ranges, `\\` escapes. */
function globToRegExp(glob: string, nocase = false): RegExp {
  const lit = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\\/-]/g, '\\$&');
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') re += '[\\s\\S]*';
    else if (ch === '?') re += '[\\s\\S]';
    else if (ch === '\\' && i + 1 < glob.length) re += lit(glob[++i]);
    else if (ch === '[') {
      let j = i + 1;
      let negate = false;
      if (glob[j] === '^') {
        negate = true;
        j++;
      }
      let cls = '';
      while (j < glob.length && glob[j] !== ']') {
        if (glob[j] === '\\' && j + 1 < glob.length) {
          cls += lit(glob[j + 1]);
          j += 2;
        } else if (glob[j + 1] === '-' && j + 2 < glob.length && glob[j + 2] !== ']') {
          const [a, b] = [glob[j], glob[j + 2]].sort();
          cls += `${lit(a)}-${lit(b)}`;
          j += 3;
        } else {
          cls += lit(glob[j]);
          j++;
        }
      }
      // An empty class matches nothing (or, negated, any character), as in stringmatchlen.
      re += cls === '' ? (negate ? '[\\s\\S]' : '(?!)') : `[${negate ? '^' : ''}${cls}]`;
      i = j; // at the closing ']' (or the end of an unterminated class)
    } else re += lit(ch);
  }
  return new RegExp(`^${re}$`, nocase ? 'i' : '');
}

function commandCommand({ session }: LocalContext, args: Buffer[]): Buffer {
  const proto = session.protocol;
  if (args.length === 1) return commandInfoReply(undefined, proto);
  const sub = lower(args[1]);
  switch (sub) {
    case 'count':
      return reply(proto, (w) => w.integer(allCommands().length));
    case 'info':
      return commandInfoReply(args.slice(2), proto);
    case 'docs':
      return commandDocsReply(args.slice(2), proto);
    case 'list':
      return commandList(session, args.slice(2));
    case 'help':
      return helpReply(session, COMMAND_HELP);
    default:
      return errorReply(`ERR command 'command|${sub}' is not supported by respgate`);
  }
}

/** COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern] */
function commandList(session: Session, filter: Buffer[]): Buffer {
  let specs = allCommandsAndSubcommands();
  if (filter.length > 0) {
    if (filter.length !== 3 || lower(filter[0]) !== 'filterby') return SYNTAX;
    const kind = lower(filter[1]);
    const value = filter[2].toString();
    if (kind === 'module') specs = [];
    else if (kind === 'aclcat') specs = specs.filter((s) => s.aclCategories.has(`@${value.toLowerCase()}`));
    else if (kind === 'pattern') {
      const re = globToRegExp(value, true);
      specs = specs.filter((s) => re.test(s.name));
    } else return SYNTAX;
  }
  return reply(session.protocol, (w) => {
    w.arrayHeader(specs.length);
    for (const s of specs) w.bulk(s.name);
  });
}

/** The `db0:…` line of the upstream's INFO keyspace answer, if it has one. */
function keyspaceFrom(upstream: Buffer): string | undefined {
  if (upstream[0] !== 0x24) return undefined;
  const m = /^db0:[^\r\n]*/m.exec(upstream.toString('latin1'));
  return m ? m[0] : undefined;
}
