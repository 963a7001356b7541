// The commands every RESP port answers alike, with Redis 7.0.15's replies and error texts: the
// connection's own state (PING, ECHO, QUIT, RESET, SELECT, AUTH, HELLO), CLIENT on the port's own
// connections, and the port's SLOWLOG. The proxy adds its own (proxy/local/); a table port adds
// INFO, COMMAND and HELP from its table (server/table-commands.ts).
import { client } from './client.js';
import { auth, echo, hello, ping, quit, reset, select } from './connection.js';
import type { Handler } from './handler.js';
import { slowlog } from './slowlog.js';

export const SHARED_COMMANDS: Readonly<Record<string, Handler>> = { ping, echo, quit, reset, select, auth, hello, client, slowlog };
