// Upstash Redis Search on the local platform: the SEARCH.* commands of Area B, answered by the platform
// (redis-server has no such commands). Index definitions and aliases are kept in the internal store (so
// they survive restarts with the data directory, and a user's FLUSHALL does not remove them); each index's
// contents live in memory, built from the data store at start and kept in step by sync.ts.
import type { Arg } from '../../../resp/request-writer.js';
import { errorReply } from '../../../resp/protocol.js';
import { globToRegExp } from '../../../commands/glob.js';
import { arityOk, lookupCommand } from '../../../commands/table.js';
import type { InternalStore } from '../../internal-store.js';
import { RedisConnection, errorText, type RedisEndpoint } from '../../redis/connection.js';
import { Aggregator, parseAggregations } from './aggregate.js';
import { FilterEvaluator } from './filter.js';
import { SearchIndex } from './inverted-index.js';
import { runCount, runQuery } from './query.js';
import { encodeReply, SearchError, type ReplyValue } from './reply.js';
import { describeSchema, keyMatches, parseCreate, sameDefinition, type IndexDef } from './schema.js';
import { bulkText, KeyspaceListener, readKeys } from './sync.js';
import { arrayElements } from '../../../resp/reply-scanner.js';

const KEY = { indexes: 'respgate:search:indexes', aliases: 'respgate:search:aliases' };
const WRITES = new Set(['create', 'drop', 'aliasadd', 'aliasdel', 'reindex']);
const BATCH = 500;

/** Whether a command (its name, any case) is one of the SEARCH.* commands. */
export function isSearchCommand(name: Arg): boolean {
  return name.length > 7 && String(name).slice(0, 7).toLowerCase() === 'search.';
}

/** Starts the search engine of the data store; its stop joins `cleanups`. */
export async function startSearch(
  data: RedisEndpoint,
  internal: InternalStore,
  cleanups: Array<() => Promise<void>>,
): Promise<SearchEngine> {
  const search = new SearchEngine(data, internal);
  cleanups.push(async () => search.stop());
  await search.start();
  return search;
}

export class SearchEngine {
  private readonly indexes = new Map<string, SearchIndex>();
  private readonly aliases = new Map<string, string>();
  /** Keys changed since they were last read, with the indexes to update (undefined: every covering index). */
  private readonly dirty = new Map<string, Set<string> | undefined>();
  private processing: Promise<void> = Promise.resolve();
  private scheduled = false;
  private reader: RedisConnection | undefined;
  private listener: KeyspaceListener | undefined;

  constructor(
    private readonly data: RedisEndpoint,
    private readonly internal: InternalStore,
  ) {}

  async start(): Promise<void> {
    const conn = await this.internal.pool.shared();
    const [defs, aliases] = await conn.send([
      ['HGETALL', KEY.indexes],
      ['HGETALL', KEY.aliases],
    ]);
    for (const [name, json] of pairsOf(defs)) this.indexes.set(name, new SearchIndex(JSON.parse(json) as IndexDef));
    for (const [alias, target] of pairsOf(aliases)) this.aliases.set(alias, target);
    await this.connection();
    if (this.indexes.size > 0) await this.listen();
    for (const index of this.indexes.values()) this.scan(index).catch(() => undefined); // settle waits for it
  }

  /**
   * Starts hearing of changed keys, once the first index exists: a data store without indexes pays
   * nothing for the search engine (no tracking work on its writes).
   */
  private listen(): Promise<void> {
    this.listening ??= (async () => {
      const listener = new KeyspaceListener(
        this.data,
        (key) => this.touch(key),
        () => this.resyncAll(),
      );
      await listener.start();
      this.listener = listener;
    })().catch((err: Error) => {
      this.listening = undefined;
      throw new SearchError(`ERR ${err.message}`);
    });
    return this.listening;
  }

  private listening: Promise<void> | undefined;

  stop(): void {
    this.listener?.stop();
    this.reader?.close();
  }

  /** After FLUSHALL / FLUSHDB (which Redis does not notify): every index is read again. */
  resyncAll(): void {
    for (const index of this.indexes.values()) {
      index.clear();
      this.scan(index).catch(() => undefined);
    }
  }

  private touch(key: string, only?: string): void {
    if (!only && ![...this.indexes.values()].some((i) => keyMatches(i.def, key))) return;
    if (only) {
      const set = this.dirty.has(key) ? this.dirty.get(key) : new Set<string>();
      if (set) set.add(only);
      this.dirty.set(key, set);
    } else this.dirty.set(key, undefined);
    if (this.scheduled) return;
    this.scheduled = true;
    this.processing = this.processing.then(() => this.process());
  }

  /** Reads the dirty keys again and updates the indexes covering them, in batches. */
  private async process(): Promise<void> {
    this.scheduled = false;
    while (this.dirty.size > 0) {
      const batch = [...this.dirty].slice(0, BATCH);
      for (const [key] of batch) this.dirty.delete(key);
      let values;
      try {
        values = await readKeys(
          await this.connection(),
          batch.map(([k]) => k),
        );
      } catch {
        // The data store is gone: the next use opens a new connection, and the listener's reconnection
        // reads everything again.
        this.reader?.close();
        this.reader = undefined;
        return;
      }
      for (const [key, only] of batch) {
        const value = values.get(key);
        for (const index of this.indexes.values()) {
          if ((only && !only.has(index.def.name)) || !keyMatches(index.def, key)) continue;
          const kind = index.def.dataType === 'HASH' ? 'hash' : index.def.dataType === 'JSON' ? 'json' : 'string';
          const source = value && value.kind === kind && 'source' in value ? value.source : undefined;
          if (source) index.put(key, source);
          else index.remove(key);
        }
      }
    }
  }

  /** Scans under way: queries wait for them (settle), so an index being rebuilt never answers half. */
  private readonly scans = new Set<Promise<void>>();

  /** Queues every key under the index's prefixes (the initial scan, SEARCH.REINDEX, after FLUSHALL). */
  private scan(index: SearchIndex): Promise<void> {
    const run = this.scanKeys(index).finally(() => this.scans.delete(run));
    this.scans.add(run);
    return run;
  }

  private async scanKeys(index: SearchIndex): Promise<void> {
    const conn = await RedisConnection.open(this.data);
    try {
      for (const prefix of index.def.prefixes) {
        let cursor = '0';
        do {
          const [reply] = await conn.send([['SCAN', cursor, 'MATCH', `${globEscape(prefix)}*`, 'COUNT', '1000']]);
          const [next, keys] = scanPage(reply);
          cursor = next;
          for (const key of keys) if (this.indexes.get(index.def.name) === index) this.touch(key, index.def.name);
        } while (cursor !== '0');
      }
    } finally {
      conn.close();
    }
  }

  /** The connection that reads documents (opened again after the data store went away). */
  private async connection(): Promise<RedisConnection> {
    this.reader ??= await RedisConnection.open(this.data);
    return this.reader;
  }

  /** Every write acknowledged before this call is indexed once it resolves. */
  private async settle(): Promise<void> {
    await this.listener?.received();
    while (this.scans.size > 0) await Promise.allSettled([...this.scans]);
    await this.processing;
    // A batch that failed (the store went away) leaves its keys dirty: one more pass, then answer.
    if (this.dirty.size > 0) {
      if (!this.scheduled) {
        this.scheduled = true;
        this.processing = this.processing.then(() => this.process());
      }
      await this.processing;
    }
  }

  private resolve(name: string): SearchIndex | undefined {
    return this.indexes.get(name) ?? this.indexes.get(this.aliases.get(name) ?? '');
  }

  /** Why a SEARCH.* command cannot be queued in a transaction (arity; SEARCH.QUERY without NOCONTENT), if so. */
  refusedInTransaction(command: Arg[]): string | undefined {
    const spec = lookupCommand(String(command[0]).toLowerCase());
    if (!spec) return `ERR unknown command '${String(command[0])}', with args beginning with: `;
    if (!arityOk(spec, command.length)) return `ERR wrong number of arguments for '${spec.name}' command`;
    if (spec.name === 'search.query' && !command.slice(3).some((a) => String(a).toUpperCase() === 'NOCONTENT')) {
      return 'ERR SEARCH.QUERY inside MULTI requires NOCONTENT';
    }
    return undefined;
  }

  /** Runs one SEARCH.* command and returns its RESP2 reply. */
  async run(command: Arg[], readOnly: boolean): Promise<Buffer> {
    const sub = String(command[0]).toLowerCase().slice(7);
    const spec = lookupCommand(String(command[0]).toLowerCase());
    if (!spec) return errorReply(`ERR unknown command '${String(command[0])}', with args beginning with: `);
    if (!arityOk(spec, command.length)) return errorReply(`ERR wrong number of arguments for '${spec.name}' command`);
    if (readOnly && WRITES.has(sub)) return errorReply(`NOPERM this user has no permissions to run the '${spec.name}' command`);
    const args = command.slice(1).map((a) => (typeof a === 'string' ? a : a.toString('utf8')));
    try {
      return encodeReply(await this.dispatch(sub, args));
    } catch (err) {
      if (err instanceof SearchError) return errorReply(err.message);
      // The data store or the internal store failed under the command: a clear error, not a 500.
      return errorReply(`ERR the search engine could not complete the command (${(err as Error)?.message ?? String(err)})`);
    }
  }

  private async dispatch(sub: string, args: string[]): Promise<ReplyValue> {
    switch (sub) {
      case 'create':
        return this.create(args);
      case 'drop':
        return this.drop(args[0]);
      case 'describe':
        return this.describe(args[0]);
      case 'query':
      case 'count':
      case 'aggregate':
        return this.search(sub, args);
      case 'waitindexing': {
        if (!this.resolve(args[0])) return 0;
        await this.settle();
        return 1;
      }
      case 'reindex':
        return this.reindex(args[0]);
      case 'listindexes':
        return this.listIndexes(args);
      case 'aliasadd':
        return this.aliasAdd(args[0], args[1]);
      case 'aliasdel':
        return this.aliasDel(args[0]);
      case 'listaliases':
        if (args.length > 0) throw new SearchError('ERR SEARCH.LISTALIASES takes no arguments');
        return [...this.aliases].map(([a, i]) => [a, i]);
      default:
        throw new SearchError(`ERR unknown subcommand 'SEARCH.${sub.toUpperCase()}'`);
    }
  }

  private async create(args: string[]): Promise<ReplyValue> {
    const { def, skipInitialScan, existsOk } = parseCreate(args);
    const existing = this.indexes.get(def.name);
    if (existing) {
      if (existsOk && sameDefinition(existing.def, def)) return 0;
      throw new SearchError(
        existsOk ? `ERR index '${def.name}' exists with another configuration` : `ERR index '${def.name}' already exists`,
      );
    }
    const [exists] = await (await this.connection()).send([['EXISTS', def.name]]);
    if (exists.toString('latin1') !== ':0\r\n') throw new SearchError(`ERR '${def.name}' is already used by a key that is not an index`);
    await this.listen();
    await this.internalSend(['HSET', KEY.indexes, def.name, JSON.stringify(def)]);
    const index = new SearchIndex(def);
    this.indexes.set(def.name, index);
    if (!skipInitialScan) await this.scan(index);
    return 1;
  }

  private async drop(name: string): Promise<ReplyValue> {
    if (!this.indexes.has(name)) return 0;
    await this.internalSend(['HDEL', KEY.indexes, name]);
    this.indexes.delete(name);
    return 1;
  }

  private async reindex(name: string): Promise<ReplyValue> {
    const index = this.resolve(name);
    if (!index) return 0;
    await this.settle();
    index.clear();
    await this.scan(index);
    await this.settle();
    return 1;
  }

  private async describe(name: string): Promise<ReplyValue> {
    const index = this.resolve(name);
    if (!index) return null;
    const { def } = index;
    const pending = [...this.dirty.keys()].filter((k) => keyMatches(def, k)).length;
    return [
      'name',
      def.name,
      'type',
      def.dataType,
      'prefixes',
      def.prefixes,
      'language',
      def.language,
      'indexSize',
      index.sizeInBytes(),
      'pendingUpdates',
      pending,
      'schema',
      describeSchema(def),
    ];
  }

  private async search(sub: string, args: string[]): Promise<ReplyValue> {
    const index = this.resolve(args[0]);
    if (sub === 'count' && args.length !== 2) throw new SearchError("ERR wrong number of arguments for 'search.count' command");
    if (sub === 'aggregate' && args.length !== 3) throw new SearchError("ERR wrong number of arguments for 'search.aggregate' command");
    if (!index) return sub === 'count' ? -1 : null;
    await this.settle();
    if (sub === 'count') return runCount(index, args[1]);
    if (sub === 'query') return runQuery(index, args[1], args.slice(2));
    const spec = parseAggregations(args[2]);
    const docs = [...new FilterEvaluator(index).run(args[1]).keys()].sort((a, b) => a.seq - b.seq);
    return new Aggregator(index.def).run(spec, docs);
  }

  private listIndexes(args: string[]): ReplyValue {
    let match: RegExp | undefined;
    let limit = 0;
    let offset = 0;
    for (let i = 0; i < args.length; i += 2) {
      const opt = args[i].toUpperCase();
      const value = args[i + 1];
      if (value === undefined) throw new SearchError(`ERR ${opt} needs a value`);
      if (opt === 'MATCH') match = globToRegExp(value);
      else if ((opt === 'LIMIT' || opt === 'OFFSET') && /^\d+$/.test(value)) {
        if (opt === 'LIMIT') limit = Number(value);
        else offset = Number(value);
      } else throw new SearchError(`ERR syntax error near '${args[i]}'`);
    }
    const names = [...this.indexes.keys()].filter((n) => !match || match.test(n)).sort();
    const page = names.slice(offset, limit > 0 ? offset + limit : undefined);
    return page.map((n) => ['name', n, 'type', this.indexes.get(n)!.def.dataType]);
  }

  private async aliasAdd(alias: string, target: string): Promise<ReplyValue> {
    const existed = this.aliases.has(alias);
    await this.internalSend(['HSET', KEY.aliases, alias, target]);
    this.aliases.set(alias, target);
    return existed ? 2 : 1;
  }

  private async aliasDel(alias: string): Promise<ReplyValue> {
    if (!this.aliases.has(alias)) return 0;
    await this.internalSend(['HDEL', KEY.aliases, alias]);
    this.aliases.delete(alias);
    return 1;
  }

  private async internalSend(command: string[]): Promise<void> {
    const conn = await this.internal.pool.shared();
    const [reply] = await conn.send([command]);
    const err = errorText(reply);
    if (err) throw new Error(`internal store: ${err}`);
  }
}

function pairsOf(reply: Buffer): Array<[string, string]> {
  const items = (arrayElements(reply) ?? []).map((b) => bulkText(b) ?? '');
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < items.length; i += 2) pairs.push([items[i], items[i + 1]]);
  return pairs;
}

/** A SCAN reply: the next cursor and the keys. */
function scanPage(reply: Buffer): [string, string[]] {
  const [cursor, keys] = arrayElements(reply) ?? [];
  if (!cursor || !keys) throw new Error(`unexpected SCAN reply ${reply.toString('latin1', 0, 40)}`);
  return [bulkText(cursor) ?? '0', (arrayElements(keys) ?? []).map((k) => bulkText(k) ?? '')];
}

/** A literal prefix as a SCAN MATCH pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
