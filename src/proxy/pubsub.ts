// Pub/sub and MONITOR of one connection. (This version answers them with a clear error; the
// upstream event streams are not wired yet.)
import type { CommandSpec } from '../commands/table.js';
import { errorReply } from './replies.js';
import type { Session } from './session.js';

export interface StreamState {
  /** Channels + patterns this connection is subscribed to (RESP2 subscribe mode when > 0). */
  readonly subscriptionCount: number;
  /** SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBE forms and MONITOR: answers through the session. */
  handle(spec: CommandSpec, args: Buffer[]): void;
  /** PING while subscribed in RESP2: `*2 $4 pong $<n> <arg>`. */
  subscribedPing(args: Buffer[]): Buffer;
  /** RESET, QUIT and disconnect: leaves every subscription and MONITOR, closing the upstream streams. */
  reset(): void;
}

export function createStreamState(session: Session): StreamState {
  return {
    subscriptionCount: 0,
    handle: (spec) =>
      session.answerNow(errorReply(`ERR '${spec.name}' is not supported yet by respgate: pub/sub and MONITOR streams are not available in this version`)),
    subscribedPing: (args) => {
      const arg = args[1] ?? Buffer.alloc(0);
      return Buffer.concat([Buffer.from(`*2\r\n$4\r\npong\r\n$${arg.length}\r\n`), arg, Buffer.from('\r\n')]);
    },
    reset: () => undefined,
  };
}
