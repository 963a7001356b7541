// Commands the proxy answers itself: the connection's own state (AUTH, HELLO, SELECT, CLIENT, RESET,
// QUIT) and the introspection clients rely on during their handshake (INFO, COMMAND, CONFIG GET),
// with Redis 7.0.15's replies and error texts. A handler returns what the command does; it never
// writes to the connection itself.
import type { CommandSpec } from '../../commands/table.js';
import { errorReply } from '../../server/replies.js';
import type { LocalResult } from '../../server/commands/handler.js';
import { SHARED_COMMANDS } from '../../server/commands/index.js';
import { command, config, info, module } from './introspection.js';
import { wait } from './wait.js';
import type { ProxyHandler, ProxyLocalContext } from '../context.js';

export type { ProxyLocalContext, LocalResult };

const handlers: Record<string, ProxyHandler> = { ...SHARED_COMMANDS, info, command, config, module, wait };

export function runLocalCommand(ctx: ProxyLocalContext, spec: CommandSpec, args: Buffer[]): LocalResult {
  const handler = handlers[spec.container ?? spec.name];
  if (!handler) return errorReply(`ERR command '${spec.name}' is not supported by respgate`);
  return handler(ctx, args);
}
