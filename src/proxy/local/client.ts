// CLIENT and its subcommands, on this proxy's own connections (never the upstream's).
import { lower, parseLongLong } from '../../resp/args.js';
import type { Connection } from '../context.js';
import { errorReply, INVALID_CLIENT_NAME, NOT_INTEGER, OK, reply, SYNTAX, textReply } from '../replies.js';
import { clientLine } from './client-list.js';
import { validClientName } from './connection.js';
import { CLIENT_HELP, helpReply, subcommandSyntaxError } from './help.js';
import type { Handler, LocalResult } from './handler.js';

export const client: Handler = ({ conn, server }, args) => {
  const sub = lower(args[1]);
  switch (sub) {
    case 'id':
      return reply(conn.protocol, (w) => w.integer(conn.id));
    case 'setname':
      if (!validClientName(args[2])) return INVALID_CLIENT_NAME;
      conn.name = args[2].toString();
      return OK;
    case 'getname':
      return reply(conn.protocol, (w) => w.bulk(conn.name === '' ? null : conn.name));
    case 'info':
      return textReply(conn.protocol, clientLine(conn));
    case 'list': {
      const listed = clientList([...server.connections()], args);
      if (Buffer.isBuffer(listed)) return listed;
      return textReply(conn.protocol, listed.map(clientLine).join(''));
    }
    case 'setinfo': {
      // networking.c clientSetinfoCommand (Redis 7.2): lib-name or lib-ver, printable without spaces.
      const attr = lower(args[2]);
      if (attr !== 'lib-name' && attr !== 'lib-ver') return errorReply(`ERR Unrecognized option '${args[2].toString()}'`);
      if (args[3].some((b) => b < 0x21 || b > 0x7e))
        return errorReply(`ERR ${attr} cannot contain spaces, newlines or special characters.`);
      if (attr === 'lib-name') conn.libName = args[3].toString();
      else conn.libVersion = args[3].toString();
      return OK;
    }
    case 'no-touch': // Redis 7.2: only the LRU/LFU clock of keys, which the proxy's clients never see
    case 'no-evict':
      if (!['on', 'off'].includes(lower(args[2]))) return SYNTAX;
      return OK;
    case 'getredir':
      return reply(conn.protocol, (w) => w.integer(-1));
    case 'trackinginfo':
      // Tracking is never on through the proxy (CLIENT TRACKING is refused).
      return reply(conn.protocol, (w) => {
        w.mapHeader(3);
        w.bulk('flags').setHeader(1).bulk('off');
        w.bulk('redirect').integer(-1);
        w.bulk('prefixes').arrayHeader(0);
      });
    case 'pause':
      return server.pause.start(args);
    case 'unpause':
      return server.pause.stop();
    case 'unblock': {
      // networking.c: argc 3 or 4; the reason is checked before the id. A connection of this proxy
      // blocked in an emulated blocking command ends it with the timeout reply or an UNBLOCKED error.
      if (args.length !== 3 && args.length !== 4) return subcommandSyntaxError(args);
      if (args.length === 4 && !['timeout', 'error'].includes(lower(args[3])))
        return errorReply('ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR');
      const id = parseLongLong(args[2]);
      if (id === undefined) return NOT_INTEGER;
      const reason = args.length === 4 && lower(args[3]) === 'error' ? 'error' : 'timeout';
      let target: Connection | undefined;
      for (const c of server.connections()) if (BigInt(c.id) === id) target = c;
      const unblocked = target !== undefined && target.unblock(reason);
      return reply(conn.protocol, (w) => w.integer(unblocked ? 1 : 0));
    }
    case 'kill':
      return kill(conn, [...server.connections()], args);
    case 'reply': {
      // networking.c: ON answers +OK; OFF and SKIP answer nothing (dispatch.ts silences the replies).
      const mode = lower(args[2]);
      if (args.length !== 3 || !['on', 'off', 'skip'].includes(mode)) return SYNTAX;
      conn.replyMode = mode === 'skip' ? 'skip-next' : mode === 'off' ? 'off' : 'on';
      return OK;
    }
    case 'help':
      return helpReply(conn.protocol, CLIENT_HELP);
    default:
      // The command table routes every other subcommand elsewhere (refusals carry their own reason).
      return errorReply(`ERR command 'client|${sub}' is not supported by respgate`);
  }
};

/**
 * CLIENT KILL on this proxy's own connections (networking.c clientKillCommand): the old form
 * `ip:port` answers OK or "No such client"; the filter form (ID, TYPE, USER, ADDR, LADDR, SKIPME)
 * answers how many it closed. The caller's own connection closes after this reply.
 */
function kill(conn: Connection, all: Connection[], args: Buffer[]): LocalResult {
  if (args.length === 3) {
    const addr = args[2].toString();
    const target = all.find((c) => c.address === addr);
    if (!target) return errorReply('ERR No such client');
    return closeMatching(conn, [target], OK);
  }
  if (args.length % 2 !== 0) return SYNTAX;
  let skipMe = true;
  const tests: Array<(c: Connection) => boolean> = [];
  for (let i = 2; i < args.length; i += 2) {
    const option = lower(args[i]);
    const value = args[i + 1];
    switch (option) {
      case 'id': {
        const id = parseLongLong(value);
        if (id === undefined || id <= 0n) return errorReply('ERR client-id should be greater than 0');
        tests.push((c) => BigInt(c.id) === id);
        break;
      }
      case 'type': {
        const type = lower(value);
        if (!['normal', 'master', 'slave', 'replica', 'pubsub'].includes(type))
          return errorReply(`ERR Unknown client type '${value.toString()}'`);
        tests.push((c) => clientType(c) === (type === 'slave' ? 'replica' : type));
        break;
      }
      case 'user':
        // The proxy's only user is `default` (AUTH with --requirepass).
        if (value.toString() !== 'default') return errorReply(`ERR No such user '${value.toString()}'`);
        tests.push((c) => c.authenticated);
        break;
      case 'addr':
        tests.push((c) => c.address === value.toString());
        break;
      case 'laddr':
        tests.push((c) => c.localAddress === value.toString());
        break;
      case 'skipme': {
        const v = lower(value);
        if (v !== 'yes' && v !== 'no') return SYNTAX;
        skipMe = v === 'yes';
        break;
      }
      default:
        return SYNTAX;
    }
  }
  const matched = all.filter((c) => (!skipMe || c !== conn) && tests.every((t) => t(c)));
  return closeMatching(
    conn,
    matched,
    reply(conn.protocol, (w) => w.integer(matched.length)),
  );
}

/** Redis' client types as CLIENT LIST shows them: MONITOR connections are replicas to Redis. */
function clientType(c: Connection): 'normal' | 'replica' | 'pubsub' {
  if (c.pushes.monitoring) return 'replica';
  if (c.pushes.subscriptionCount > 0) return 'pubsub';
  return 'normal';
}

function closeMatching(conn: Connection, targets: Connection[], answer: Buffer): LocalResult {
  let self = false;
  for (const t of targets) {
    if (t === conn) self = true;
    else t.destroy();
  }
  return self ? { kind: 'close', reply: answer } : answer;
}

/** CLIENT LIST [TYPE type | ID id …]: the connections listed, or the error reply. */
function clientList(all: Connection[], args: Buffer[]): Connection[] | Buffer {
  if (args.length <= 2) return all;
  const opt = lower(args[2]);
  if (opt === 'type' && args.length === 4) {
    const type = lower(args[3]);
    if (!['normal', 'master', 'replica', 'slave', 'pubsub'].includes(type))
      return errorReply(`ERR Unknown client type '${args[3].toString()}'`);
    // networking.c getClientType: a MONITOR client counts as normal, a subscriber as pubsub.
    if (type === 'pubsub') return all.filter((c) => c.pushes.subscriptionCount > 0);
    if (type === 'normal') return all.filter((c) => c.pushes.subscriptionCount === 0);
    return [];
  }
  if (opt === 'id' && args.length >= 4) {
    // networking.c: every id must parse (string2ll); the matching clients follow the arguments' order.
    const ids: bigint[] = [];
    for (const a of args.slice(3)) {
      const id = parseLongLong(a);
      if (id === undefined) return errorReply('ERR Invalid client ID');
      ids.push(id);
    }
    const byId = new Map(all.map((c) => [BigInt(c.id), c]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }
  return SYNTAX;
}
