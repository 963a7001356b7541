// CONFIG SET and CONFIG GET as the real service offers them (its docs: redis/commands/server/config-set.mdx,
// config-get.mdx, redis/howto/keyspacenotifications.mdx): only `notify-keyspace-events` may be changed, and
// it is the only parameter CONFIG GET shows. The data store then publishes Redis' own keyspace and keyevent
// notifications, which reach the /subscribe and /psubscribe event streams like any other message.
import type { Arg } from '../../resp/request-writer.js';
import { arrayElements } from '../../resp/reply-scanner.js';
import type { InternalStore } from '../internal-store.js';

export type ConfigPlan = { command: Arg[] } | { error: string };

export const NOTIFY_PARAMETER = 'notify-keyspace-events';

/** A name CONFIG GET finds nothing for on any Redis (answers an empty array), so no reply needs rewriting. */
const NO_PARAMETER = 'respgate-no-such-parameter';

const text = (a: Arg): string => (typeof a === 'string' ? a : a.toString('latin1'));

/** Redis' glob (stringmatchlen, case-insensitive as CONFIG GET uses it): `*`, `?`, `[…]`, `[^…]`, `\x`. */
export function globMatches(pattern: string, name: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '\\' && i + 1 < pattern.length) re += escape(pattern[++i]);
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        re += escape(c);
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('^');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = end;
    } else re += escape(c);
  }
  return new RegExp(re + '$', 'is').test(name);
}

function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What to send for `CONFIG SET …` / `CONFIG GET …`, an error to answer, or undefined for other commands.
 * Redis checks the value of notify-keyspace-events itself and answers its own error for a bad flag.
 */
export function configPlan(command: Arg[]): ConfigPlan | undefined {
  if (command.length < 2 || command[0].length !== 6 || text(command[0]).toLowerCase() !== 'config') return undefined;
  const sub = text(command[1]).toLowerCase();
  if (sub === 'set') {
    if (command.length < 4 || command.length % 2 !== 0) return { error: "ERR wrong number of arguments for 'config|set' command" };
    for (let i = 2; i < command.length; i += 2) {
      const name = text(command[i]);
      if (name.toLowerCase() !== NOTIFY_PARAMETER)
        return { error: `ERR CONFIG SET of '${name}' is not allowed: only ${NOTIFY_PARAMETER} can be changed on this database` };
    }
    return { command };
  }
  if (sub === 'get') {
    if (command.length < 3) return { error: "ERR wrong number of arguments for 'config|get' command" };
    const shown = command.slice(2).some((p) => globMatches(text(p), NOTIFY_PARAMETER));
    return { command: ['CONFIG', 'GET', shown ? NOTIFY_PARAMETER : NO_PARAMETER] };
  }
  return undefined;
}

const SETTING_KEY = 'respgate:notify-keyspace-events';

/**
 * Keeps the notify-keyspace-events a user set through the platform in the internal store, and sets it
 * again when the platform starts (the embedded server has no configuration file to keep it in).
 */
export class KeyspaceSetting {
  constructor(
    private readonly internal: InternalStore,
    private readonly admin: (commands: Arg[][]) => Promise<Buffer[]>,
  ) {}

  /** At start: the kept value, if one was ever set through the platform. */
  async restore(): Promise<void> {
    const conn = await this.internal.pool.shared();
    const [kept] = await conn.send([['GET', SETTING_KEY]]);
    if (kept[0] !== 0x24 || kept[1] === 0x2d) return;
    await this.admin([['CONFIG', 'SET', NOTIFY_PARAMETER, bulkText(kept)]]);
  }

  /** After commands ran: when one of them set the parameter, the server's value is kept. */
  async rememberIfSet(commands: Arg[][], replies: Buffer[]): Promise<void> {
    const set = commands.some(
      (c, i) => c.length >= 4 && text(c[0]).toLowerCase() === 'config' && text(c[1]).toLowerCase() === 'set' && replies[i]?.[0] === 0x2b,
    );
    if (!set) return;
    const [reply] = await this.admin([['CONFIG', 'GET', NOTIFY_PARAMETER]]);
    const pair = arrayElements(reply);
    if (!pair || pair.length !== 2) return;
    const conn = await this.internal.pool.shared();
    await conn.send([['SET', SETTING_KEY, bulkText(pair[1])]]);
  }
}

function bulkText(reply: Buffer): string {
  const headerEnd = reply.indexOf(13);
  return reply.toString('latin1', headerEnd + 2, reply.length - 2);
}
