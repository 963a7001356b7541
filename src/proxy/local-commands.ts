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
    session.answerNow(OK);
    session.closeAfterReplies();
    return undefined;
  },
  reset: ({ session, options }) => {
    session.protocol = 2;
    session.name = '';
    session.setAuthenticated(options.requirepass === undefined);
    return RESET;
  },
  select: (_ctx, args) => {
    const text = args[1].toString('latin1');
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return NOT_INTEGER;
    return Number(text) === 0 ? OK : errorReply('ERR DB index is out of range');
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
    const render = (keyspaceLine: string | undefined) =>
      reply(session.protocol, (w) => {
        const text = buildInfo(sections, { registry, session, keyspaceLine });
        if (session.protocol === 3) w.verbatim(text);
        else w.bulk(text);
      });
    if (!wantsKeyspace) return render(undefined);
    // The key count comes from the upstream, in this connection's order of commands.
    session.forward([Buffer.from('INFO'), Buffer.from('keyspace')], (upstream) => render(keyspaceFrom(upstream)));
    return undefined;
  },
  command: (ctx, args) => commandCommand(ctx, args),
  config: ({ session }, args) => configGet(session, args.slice(2)),
  module: ({ session }, args) => {
    const sub = lower(args[1]);
    if (sub === 'list') return reply(session.protocol, (w) => w.arrayHeader(0));
    return errorReply(`ERR command 'module|${sub}' is not supported by respgate: modules cannot be loaded into the upstream service`);
  },
};

export function runLocalCommand(ctx: LocalContext, spec: CommandSpec, args: Buffer[]): Buffer | undefined {
  const handler = handlers[spec.container ?? spec.name];
  if (!handler) return errorReply(`ERR command '${spec.name}' is not supported by respgate`);
  return handler(ctx, args);
}

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
    // RESP3 replies need per-command conversion that is not available in this version.
    if (ver === 3) return errorReply('NOPROTO unsupported protocol version');
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
      return reply(session.protocol, (w) => text(w, session.protocol, clientLine(session, 'client|info')));
    case 'list': {
      const sessions = [...registry.sessions()];
      if (args.length > 2) {
        const opt = lower(args[2]);
        if (opt === 'type' && args.length === 4) {
          const type = lower(args[3]);
          if (!['normal', 'master', 'replica', 'slave', 'pubsub'].includes(type)) return errorReply(`ERR Unknown client type '${args[3].toString()}'`);
          if (type !== 'normal') sessions.length = 0;
        } else if (opt === 'id' && args.length >= 4) {
          const ids = new Set<number>();
          for (const a of args.slice(3)) {
            const t = a.toString('latin1');
            if (!/^\d+$/.test(t) || Number(t) < 1) return errorReply('ERR Invalid client ID');
            ids.add(Number(t));
          }
          sessions.splice(0, sessions.length, ...sessions.filter((s) => ids.has(s.id)));
        } else {
          return SYNTAX;
        }
      }
      const lines = sessions.map((s) => clientLine(s, s === session ? 'client|list' : s.lastCommand)).join('');
      return reply(session.protocol, (w) => text(w, session.protocol, lines));
    }
    case 'no-evict':
      if (!['on', 'off'].includes(lower(args[2]))) return SYNTAX;
      return OK;
    case 'getredir':
      return reply(session.protocol, (w) => w.integer(-1));
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
    `name=${s.name} age=${Math.floor((now - s.createdAt) / 1000)} idle=${Math.floor((now - s.lastCommandAt) / 1000)} flags=N db=0 ` +
    `sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 ` +
    `events=r cmd=${cmd} user=default redir=-1 resp=${s.protocol}\n`
  );
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

function configGet(session: Session, patterns: Buffer[]): Buffer {
  const matched = new Map<string, string>();
  for (const p of patterns) {
    const re = globToRegExp(p.toString().toLowerCase());
    for (const [k, v] of Object.entries(CONFIG_VALUES)) if (re.test(k)) matched.set(k, v);
  }
  return reply(session.protocol, (w) => {
    w.mapHeader(matched.size);
    for (const [k, v] of matched) w.bulk(k).bulk(v);
  });
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (const ch of glob) {
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
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
      const re = globToRegExp(value.toLowerCase());
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
