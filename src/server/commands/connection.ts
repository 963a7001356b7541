// The connection's own state: PING, ECHO, QUIT, RESET, SELECT, AUTH, HELLO.
import { lower, parseLongLong } from '../../resp/args.js';
import type { Protocol } from '../../resp/protocol.js';
import { REDIS_VERSION } from '../../version.js';
import { errorReply, INVALID_CLIENT_NAME, NOT_INTEGER, OK, PONG, reply, RESET, SYNTAX, WRONGPASS } from '../replies.js';
import type { Connection, ServerState } from '../context.js';
import type { Handler } from './handler.js';

export const ping: Handler = ({ conn }, args) => {
  if (args.length > 2) return errorReply("ERR wrong number of arguments for 'ping' command");
  return args.length === 2 ? reply(conn.protocol, (w) => w.bulk(args[1])) : PONG;
};

export const echo: Handler = ({ conn }, args) => reply(conn.protocol, (w) => w.bulk(args[1]));

export const quit: Handler = ({ conn }) => {
  conn.pushes.reset(); // no message or MONITOR line after the +OK
  return { kind: 'close', reply: OK };
};

export const reset: Handler = ({ conn, server }) => {
  conn.discardTransaction();
  conn.pushes.reset();
  conn.protocol = 2;
  conn.db = 0; // clearClientConnectionState: selectDb(c, 0)
  conn.name = '';
  conn.setAuthenticated(!server.auth.required);
  conn.credential = undefined;
  return RESET;
};

export const select: Handler = ({ conn, server }, args) => {
  // server.c selectCommand: getIntFromObjectOrReply (string2ll, then the C int range).
  const id = parseLongLong(args[1]);
  if (id === undefined) return NOT_INTEGER;
  if (id < -2147483648n || id > 2147483647n) return errorReply('ERR value is out of range, value must between -2147483648 and 2147483647');
  const index = Number(id);
  if (!(server.databases ? server.databases.has(index) : index === 0)) return errorReply('ERR DB index is out of range');
  conn.db = index;
  return OK;
};

export const auth: Handler = ({ conn, server }, args) => {
  if (args.length > 3) return SYNTAX;
  if (!server.auth.required) {
    if (args.length === 2) {
      return errorReply(
        'ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?',
      );
    }
    // AUTH default <anything> succeeds for a default user without a password, as in Redis.
    return args[1].toString() === 'default' ? OK : WRONGPASS;
  }
  const user = args.length === 3 ? args[1].toString() : 'default';
  return {
    kind: 'defer',
    run: () => login(conn, server, user, args[args.length - 1]).then((error) => (error === undefined ? OK : errorReply(error))),
  };
};

/** Authenticates the connection (or leaves it unauthenticated, as Redis does after a failed AUTH); the error text or undefined. */
async function login(conn: Connection, server: ServerState, user: string, password: Buffer): Promise<string | undefined> {
  const outcome = await server.auth.authenticate(user, password);
  if (!outcome.ok) {
    if (outcome.error.startsWith('WRONGPASS')) {
      conn.setAuthenticated(false);
      conn.credential = undefined;
    }
    return outcome.error;
  }
  conn.credential = outcome.credential;
  conn.setAuthenticated(true);
  return undefined;
}

export const hello: Handler = ({ conn, server }, args) => {
  let protocol = conn.protocol;
  if (args.length >= 2) {
    const text = args[1].toString('latin1');
    if (!/^-?\d+$/.test(text)) return errorReply('ERR Protocol version is not an integer or out of range');
    const ver = Number(text);
    if (ver < 2 || ver > 3) return errorReply('NOPROTO unsupported protocol version');
    protocol = ver as Protocol;
  }
  let credentials: [Buffer, Buffer] | undefined;
  let setname: Buffer | undefined;
  for (let i = 2; i < args.length; i++) {
    const opt = lower(args[i]);
    const more = args.length - i - 1;
    if (opt === 'auth' && more >= 2) {
      credentials = [args[i + 1], args[i + 2]];
      i += 2;
    } else if (opt === 'setname' && more >= 1) {
      setname = args[i + 1];
      i += 1;
    } else {
      return errorReply(`ERR Syntax error in HELLO option '${args[i].toString()}'`);
    }
  }
  const finish = (): Buffer => helloReply(conn, protocol, setname);
  if (credentials) {
    if (!server.auth.required) {
      if (credentials[0].toString() !== 'default') return WRONGPASS;
      conn.setAuthenticated(true);
      return finish();
    }
    const [user, password] = credentials;
    return {
      kind: 'defer',
      run: () => login(conn, server, user.toString(), password).then((error) => (error === undefined ? finish() : errorReply(error))),
    };
  }
  return finish();
};

function helloReply(conn: Connection, protocol: Protocol, setname: Buffer | undefined): Buffer {
  if (!conn.authenticated) {
    return errorReply(
      'NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time',
    );
  }
  if (setname !== undefined) {
    if (!validClientName(setname)) return INVALID_CLIENT_NAME;
    conn.name = setname.toString();
  }
  conn.protocol = protocol;
  return reply(protocol, (w) => {
    w.mapHeader(7);
    w.bulk('server').bulk('redis');
    w.bulk('version').bulk(REDIS_VERSION);
    w.bulk('proto').integer(protocol);
    w.bulk('id').integer(conn.id);
    w.bulk('mode').bulk('standalone');
    w.bulk('role').bulk('master');
    w.bulk('modules').arrayHeader(0);
  });
}

/** CLIENT SETNAME and HELLO SETNAME: printable ASCII, no spaces. */
export function validClientName(name: Buffer): boolean {
  for (const c of name) if (c < 0x21 || c > 0x7e) return false;
  return true;
}
