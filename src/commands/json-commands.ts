/**
 * The JSON command group (RedisJSON's JSON.*) as command data, so the proxy knows, lists and forwards these
 * commands (arity checks, COMMAND, COMMAND INFO/DOCS/LIST/GETKEYS) although Redis 8.8's core has none of
 * them. The REST platform runs them through its JSON function library (src/platform/kv/json/). They are
 * described the way Redis 8 describes a loaded module's commands: flag `module`, group `module`, the module
 * `ReJSON` in COMMAND DOCS, and RedisJSON's own ACL category `@json` after the implied ones (a module's
 * categories follow Redis' own). Arity, flags and key positions follow RedisJSON's command definitions
 * (redis_json/src/commands.rs). No RedisJSON module is at hand to record them from, so this is hand-written.
 */
import type { CommandData } from './data.js';

/** RedisJSON's module name, as MODULE LIST and COMMAND DOCS of a Redis 8 with RedisJSON give it. */
export const JSON_MODULE = 'ReJSON';

type Access = 'read' | 'write';

function keySpec(access: Access, index: number, lastkey: number, keystep: number) {
  return {
    flags: access === 'read' ? ['RO', 'access'] : ['RW', 'update'],
    begin_search: { type: 'index', spec: { index } },
    find_keys: { type: 'range', spec: { lastkey, keystep, limit: 0 } },
  };
}

function json(
  name: string,
  arity: number,
  access: Access,
  summary: string,
  since: string,
  keys: { first?: number; last?: number; step?: number } = {},
): CommandData {
  const first = keys.first ?? 1;
  const last = keys.last ?? first;
  const step = keys.step ?? 1;
  return {
    name,
    arity,
    flags: access === 'read' ? ['readonly', 'module'] : ['write', 'denyoom', 'module'],
    firstKey: first,
    lastKey: last,
    step,
    aclCategories: access === 'read' ? ['@read', '@slow', '@json'] : ['@write', '@slow', '@json'],
    tips: [],
    keySpecs: [keySpec(access, first, last < 0 ? last : 0, step)],
    docs: {
      summary,
      since,
      group: 'module',
      module: JSON_MODULE,
      arguments: [{ name: 'key', type: 'key', display_text: 'key', key_spec_index: 0 }],
    },
  };
}

/** The JSON.* commands, sorted by name. */
export const jsonCommandData: readonly CommandData[] = [
  json('json.arrappend', -4, 'write', 'Append one or more json values into the array at path after the last element in it.', '1.0.0'),
  json('json.arrindex', -4, 'read', 'Returns the index of the first occurrence of a JSON scalar value in the array at path', '1.0.0'),
  json('json.arrinsert', -5, 'write', 'Inserts the JSON scalar(s) value at the specified index in the array at path', '1.0.0'),
  json('json.arrlen', -2, 'read', 'Returns the length of the array at path', '1.0.0'),
  json('json.arrpop', -2, 'write', 'Removes and returns the element at the specified index in the array at path', '1.0.0'),
  json(
    'json.arrtrim',
    5,
    'write',
    'Trims the array at path to contain only the specified inclusive range of indices from start to stop',
    '1.0.0',
  ),
  json('json.clear', -2, 'write', 'Clears all values from an array or an object and sets numeric values to `0`', '2.0.0'),
  {
    ...json('json.debug', -2, 'read', 'Debugging container command', '1.0.0', { first: 0, last: 0, step: 0 }),
    keySpecs: [],
    subcommands: [
      { ...json('json.debug|help', 2, 'read', 'Shows helpful information', '1.0.0', { first: 0, last: 0, step: 0 }), keySpecs: [] },
      json('json.debug|memory', -3, 'read', 'Reports the size in bytes of a key', '1.0.0', { first: 2 }),
    ],
  },
  json('json.del', -2, 'write', 'Deletes a value', '1.0.0'),
  json('json.forget', -2, 'write', 'Deletes a value', '1.0.0'),
  json('json.get', -2, 'read', 'Gets the value at one or more paths in JSON serialized form', '1.0.0'),
  json('json.merge', -4, 'write', 'Merges a given JSON value into matching paths', '2.6.0'),
  json('json.mget', -3, 'read', 'Returns the values at a path from one or more keys', '1.0.0', { last: -2 }),
  json('json.mset', -4, 'write', 'Sets or updates the JSON value of one or more keys', '2.6.0', { last: -1, step: 3 }),
  json('json.numincrby', 4, 'write', 'Increments the numeric value at path by a value', '1.0.0'),
  json('json.nummultby', 4, 'write', 'Multiplies the numeric value at path by a value', '1.0.0'),
  json('json.objkeys', -2, 'read', 'Returns the JSON keys of the object at path', '1.0.0'),
  json('json.objlen', -2, 'read', 'Returns the number of keys of the object at path', '1.0.0'),
  json('json.resp', -2, 'read', 'Returns the JSON value at path in Redis Serialization Protocol (RESP)', '1.0.0'),
  json('json.set', -4, 'write', 'Sets or updates the JSON value at a path', '1.0.0'),
  json('json.strappend', -3, 'write', 'Appends a string to a JSON string value at path', '1.0.0'),
  json('json.strlen', -2, 'read', 'Returns the length of the JSON String at path in key', '1.0.0'),
  json('json.toggle', -3, 'write', 'Toggles a boolean value', '2.0.0'),
  json('json.type', -2, 'read', 'Returns the type of the JSON value at path', '1.0.0'),
];
