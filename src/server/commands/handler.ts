// What a command the proxy answers itself receives and returns. Types only.
import type { Connection, ServerState } from '../context.js';

export interface LocalContext {
  conn: Connection;
  server: ServerState;
}

/**
 * The reply; or an upstream command whose reply `transform` turns into the answer (INFO's keyspace
 * line); or a reply after which the connection closes (QUIT); or a reply that needs the upstream
 * first (AUTH of a pass-through token or an ACL user): the connection runs nothing else until it comes.
 */
export type LocalResult =
  | Buffer
  | { kind: 'defer'; run: () => Promise<Buffer> }
  | { kind: 'forward'; args: Buffer[]; transform: (reply: Buffer) => Buffer }
  | { kind: 'close'; reply: Buffer };

export type Handler = (ctx: LocalContext, args: Buffer[]) => LocalResult;
