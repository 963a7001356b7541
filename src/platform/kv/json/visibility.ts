// Keeps JSON documents and the JSON library looking like RedisJSON's to users:
// - SCAN … TYPE ReJSON-RL lists JSON documents, and SCAN … TYPE string no longer lists them (documents
//   are Redis strings with a marker, see library.lua);
// - FUNCTION LIST does not show the platform's own library (respgate_json).
import type { Arg } from '../../../resp/request-writer.js';
import { arrayElements } from '../../../resp/reply-scanner.js';
import { JSON_LIBRARY_NAME } from './library.js';
import { JSON_MAGIC_LUA } from './rewrite.js';

export type ReplyFilter = { kind: 'scan-type'; want: 'json' | 'string' } | { kind: 'scan-withtype' } | { kind: 'function-list' };

function lower(arg: Arg): string {
  return (typeof arg === 'string' ? arg : arg.toString('latin1')).toLowerCase();
}

/**
 * For `SCAN cursor … TYPE ReJSON-RL|string`: the command to send (TYPE string for both) and how to filter
 * its reply; for `FUNCTION LIST …`: the filter. Undefined for every other command.
 */
/** Whether replyFilterFor may filter a command of this lowercase name (FUNCTION LIST, SCAN). */
export function filtersRepliesOf(name: string): boolean {
  return name === 'function' || name === 'scan';
}

export function replyFilterFor(command: Arg[]): { command: Arg[]; filter: ReplyFilter } | undefined {
  if (command.length === 0 || command[0].length > 8) return undefined;
  const name = lower(command[0]);
  if (name === 'function' && command.length >= 2 && lower(command[1]) === 'list') return { command, filter: { kind: 'function-list' } };
  if (name !== 'scan') return undefined;
  // SCAN … WITHTYPE (the real service's extension, the SDK's `withType`): each key followed by its type.
  const withType = command.findIndex((a, i) => i >= 2 && lower(a) === 'withtype' && (i - 2) % 2 === 0);
  if (withType >= 0) return { command: command.filter((_, i) => i !== withType), filter: { kind: 'scan-withtype' } };
  for (let i = 2; i + 1 < command.length; i += 2) {
    if (lower(command[i]) !== 'type') continue;
    const type = lower(command[i + 1]);
    if (type !== 'rejson-rl' && type !== 'string') return undefined;
    const sent = [...command];
    sent[i + 1] = 'string';
    return { command: sent, filter: { kind: 'scan-type', want: type === 'rejson-rl' ? 'json' : 'string' } };
  }
  return undefined;
}

/** Which of KEYS are JSON documents (1) or not (0). Sent whole: it needs no library. */
export const WHICH_SCRIPT = [
  'local out = {}',
  'for i, k in ipairs(KEYS) do',
  `  out[i] = (redis.call('TYPE', k)['ok'] == 'string' and redis.call('GETRANGE', k, 0, ${JSON_MAGIC_LUA.length - 1}) == '${JSON_MAGIC_LUA.replace(/\0/g, '\\0')}') and 1 or 0`,
  'end',
  'return out',
].join('\n');

/** The type of each of KEYS as TYPE answers it, ReJSON-RL for JSON documents. */
export const TYPES_SCRIPT = [
  'local out = {}',
  'for i, k in ipairs(KEYS) do',
  "  local t = redis.call('TYPE', k)['ok']",
  `  if t == 'string' and redis.call('GETRANGE', k, 0, ${JSON_MAGIC_LUA.length - 1}) == '${JSON_MAGIC_LUA.replace(/\0/g, '\\0')}' then t = 'ReJSON-RL' end`,
  '  out[i] = t',
  'end',
  'return out',
].join('\n');

export function arrayReply(items: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(`*${items.length}\r\n`), ...items]);
}

function bulkText(reply: Buffer): string | undefined {
  if (reply[0] !== 0x24) return undefined;
  const headerEnd = reply.indexOf(13);
  return reply.toString('utf8', headerEnd + 2, reply.length - 2);
}

/** FUNCTION LIST without the platform's library (RESP2: each library is a flat key/value array). */
export function withoutJsonLibrary(reply: Buffer): Buffer {
  const libraries = arrayElements(reply);
  if (!libraries) return reply;
  const kept = libraries.filter((lib) => {
    const fields = arrayElements(lib) ?? [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (bulkText(fields[i]) === 'library_name') return bulkText(fields[i + 1]) !== JSON_LIBRARY_NAME;
    }
    return true;
  });
  return kept.length === libraries.length ? reply : arrayReply(kept);
}

/** The keys of a SCAN reply ([cursor, [keys…]]) and a way to rebuild it with some of them. */
export function scanKeys(
  reply: Buffer,
): { keys: Buffer[]; rebuild(keep: boolean[]): Buffer; withTypes(types: Buffer[]): Buffer } | undefined {
  const parts = arrayElements(reply);
  if (!parts || parts.length !== 2) return undefined;
  const keys = arrayElements(parts[1]);
  if (!keys) return undefined;
  return {
    keys: keys.map((k) => {
      const headerEnd = k.indexOf(13);
      return k.subarray(headerEnd + 2, k.length - 2);
    }),
    rebuild: (keep) => arrayReply([parts[0], arrayReply(keys.filter((_, i) => keep[i]))]),
    withTypes: (types) => arrayReply([parts[0], arrayReply(keys.flatMap((k, i) => [k, types[i]]))]),
  };
}
