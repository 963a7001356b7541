/**
 * Commands the proxy knows beyond Redis 7.0.15's table, so that it forwards them instead of refusing them
 * as unknown:
 * - every command and subcommand of Redis 8.8.0 that 7.0.15 lacks (CLIENT SETINFO, WAITAOF, the hash-field
 *   TTL family, HGETDEL/HGETEX/HSETEX, MSETEX, DELEX, DIGEST, XACKDEL/XDELEX, the AR* array type …), in
 *   redis-8-added.json, transcribed from Redis' command descriptions by scripts/gen-newer-command-data.ts;
 * - the service's own SEARCH.* commands (Upstash Redis Search), whose shape its command reference gives.
 * COMMAND INFO / COMMAND DOCS answer for them by name. Not part of COMMAND LIST/COUNT or allCommands(),
 * which stay Redis 7.0.15's own commands (the differential tests compare those with redis-server 7.0.15).
 */
import raw from './redis-8-added.json' with { type: 'json' };
import type { CommandData } from './data.js';

interface AddedFile {
  redisVersion: string;
  commands: CommandData[];
  /** New subcommands of 7.0.15's containers (`client|setinfo`, `cluster|myshardid`). */
  subcommands: CommandData[];
  /** 7.0.15's commands whose arity a newer Redis widened (`zrank`: 3 → -3 for WITHSCORE). */
  arities: Record<string, number>;
}
const added = raw as unknown as AddedFile;

/**
 * A SEARCH.* command. Its arguments are index names, queries and options, never keys (the index covers
 * keys by prefix), so it has no key positions; arity is the least the command reference allows.
 */
function search(name: string, arity: number, write: boolean, summary: string): CommandData {
  return {
    name: `search.${name}`,
    arity,
    flags: write ? ['write', 'module'] : ['readonly', 'module'],
    firstKey: 0,
    lastKey: 0,
    step: 0,
    aclCategories: write ? ['@write', '@slow'] : ['@read', '@slow'],
    tips: [],
    keySpecs: [],
    docs: { summary, group: 'module' },
  };
}

/** Upstash Redis Search (https://upstash.com/docs/redis/search/command-reference). */
const searchCommandData: readonly CommandData[] = [
  search('aggregate', -3, false, 'Compute analytics over the documents an index query matches'),
  search('aliasadd', 3, true, 'Add or update an index alias'),
  search('aliasdel', 2, true, 'Remove an index alias'),
  search('count', -3, false, 'Count the documents an index query matches'),
  search('create', -7, true, 'Create a search index over keys with given prefixes'),
  search('describe', 2, false, 'Return metadata about a search index'),
  search('drop', 2, true, 'Remove a search index (its keys stay)'),
  search('listaliases', -1, false, 'List index aliases'),
  search('listindexes', -1, false, 'List the search indexes of the database'),
  search('query', -3, false, 'Search the documents of an index with a JSON filter'),
  search('reindex', -2, true, 'Rebuild a search index from the current data'),
  search('waitindexing', 2, false, 'Wait until pending index updates are visible'),
];

/** New top-level commands, sorted by name. */
export const newerCommandData: readonly CommandData[] = [...added.commands, ...searchCommandData];

/** New subcommands of Redis 7.0.15's containers, sorted by name. */
export const newerSubcommandData: readonly CommandData[] = added.subcommands;

/**
 * Arities of Redis 7.0.15's commands that a newer Redis widened (ZRANK/ZREVRANK … WITHSCORE): the proxy
 * checks forwarded commands against these, so a newer option reaches the service (COMMAND INFO still
 * shows 7.0.15's data).
 */
export const newerArities: Readonly<Record<string, number>> = added.arities;

/** The Redis version the added commands were taken from. */
export const NEWER_REDIS_VERSION = added.redisVersion;
