// CLIENT and its subcommands, on this proxy's own connections (never the upstream's).
import { lower, parseLongLong } from '../../resp/args.js';
import type { Connection } from '../context.js';
import { errorReply, INVALID_CLIENT_NAME, NOT_INTEGER, OK, reply, SYNTAX, textReply } from '../replies.js';
import { clientLine } from './client-list.js';
import { validClientName } from './connection.js';
import { CLIENT_HELP, helpReply, subcommandSyntaxError } from './help.js';
import type { Handler } from './handler.js';

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
      let target: Connection | undefined;
      for (const c of server.connections()) if (BigInt(c.id) === id) target = c;
      const unblocked = target !== undefined && target.unblock(reason);
      return reply(conn.protocol, (w) => w.integer(unblocked ? 1 : 0));
    }
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
      return errorReply(`ERR command 'client|${sub}' is not supported by respgate: it would act on upstream connections the proxy does not expose`);
  }
};

/** CLIENT LIST [TYPE type | ID id …]: the connections listed, or the error reply. */
function clientList(all: Connection[], args: Buffer[]): Connection[] | Buffer {
  if (args.length <= 2) return all;
  const opt = lower(args[2]);
  if (opt === 'type' && args.length === 4) {
    const type = lower(args[3]);
    if (!['normal', 'master', 'replica', 'slave', 'pubsub'].includes(type)) return errorReply(`ERR Unknown client type '${args[3].toString()}'`);
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
