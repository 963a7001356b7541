/**
 * The service's own SEARCH.* commands (Upstash Redis Search,
 * https://upstash.com/docs/redis/search/command-reference) as command data, in the shape Redis 8 gives a
 * module's commands (flag `module`, group `module`, the module's name in COMMAND DOCS), so that the proxy
 * knows, lists and forwards them. The module name `upstash-search` is ours: the service names none, and
 * RediSearch's `search` would promise its FT.* commands.
 */
import type { CommandData } from './data.js';

export const SEARCH_MODULE = 'upstash-search';

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
    docs: { summary, group: 'module', module: SEARCH_MODULE },
  };
}

/** The SEARCH.* commands, sorted by name. */
export const searchCommandData: readonly CommandData[] = [
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
