/**
 * Commands newer than Redis 7.0.15 that @upstash/redis exposes, as command data, so the proxy forwards
 * them (the real service runs them; the local platform emulates or explains them, see
 * src/platform/kv/compat.ts). Arity, flags and key positions as Redis 7.4/8.x define them. Not part of
 * COMMAND LIST/COUNT, which list Redis 7.0.15's own commands.
 */
import type { CommandData } from './data.js';

function cmd(name: string, arity: number, write: boolean, group: string, since: string, summary: string): CommandData {
  return {
    name,
    arity,
    flags: write ? ['write', 'denyoom', 'fast'] : ['readonly', 'fast'],
    firstKey: 1,
    lastKey: 1,
    step: 1,
    aclCategories: write ? ['@write', `@${group}`, '@fast'] : ['@read', `@${group}`, '@fast'],
    tips: [],
    keySpecs: [
      {
        flags: write ? ['RW', 'update'] : ['RO', 'access'],
        begin_search: { type: 'index', spec: { index: 1 } },
        find_keys: { type: 'range', spec: { lastkey: 0, keystep: 1, limit: 0 } },
      },
    ],
    docs: { summary, since, group, arguments: [{ name: 'key', type: 'key', key_spec_index: 0 }] },
  };
}

/** Sorted by name. */
export const newerCommandData: readonly CommandData[] = [
  cmd('hexpire', -6, true, 'hash', '7.4.0', 'Set expiry for hash field using relative time to expire (seconds)'),
  cmd('hexpireat', -6, true, 'hash', '7.4.0', 'Set expiry for hash field using an absolute Unix timestamp (seconds)'),
  cmd('hexpiretime', -5, false, 'hash', '7.4.0', 'Returns the expiration time of a hash field as a Unix timestamp, in seconds.'),
  cmd('hgetdel', -5, true, 'hash', '8.0.0', 'Returns the value of a field and deletes it from the hash.'),
  cmd('hgetex', -5, true, 'hash', '8.0.0', 'Get the value of one or more fields of a given hash key, and optionally set their expiration.'),
  cmd('hpersist', -5, true, 'hash', '7.4.0', 'Removes the expiration time for each specified field'),
  cmd('hpexpire', -6, true, 'hash', '7.4.0', 'Set expiry for hash field using relative time to expire (milliseconds)'),
  cmd('hpexpireat', -6, true, 'hash', '7.4.0', 'Set expiry for hash field using an absolute Unix timestamp (milliseconds)'),
  cmd('hpexpiretime', -5, false, 'hash', '7.4.0', 'Returns the expiration time of a hash field as a Unix timestamp, in msec.'),
  cmd('hpttl', -5, false, 'hash', '7.4.0', 'Returns the TTL in milliseconds of a hash field.'),
  cmd('hsetex', -6, true, 'hash', '8.0.0', 'Set the value of one or more fields of a given hash key, and optionally set their expiration.'),
  cmd('httl', -5, false, 'hash', '7.4.0', 'Returns the TTL in seconds of a hash field.'),
  cmd(
    'xackdel',
    -6,
    true,
    'stream',
    '8.2.0',
    'Acknowledges and conditionally deletes one or multiple entries for a stream consumer group.',
  ),
  cmd('xdelex', -5, true, 'stream', '8.2.0', 'Deletes one or multiple entries from the stream.'),
];
