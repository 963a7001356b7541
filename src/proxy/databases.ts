// Several databases behind one proxy (SELECT n): database 0 is the main upstream, every other
// configured number is a REST database of its own (--database N=URL[,TOKEN]; the dev stack's 16). Each
// database has its own upstream client and batcher, so its commands are batched, run as transactions
// and polled (blocking commands) only with commands of that database; a connection's selected database
// decides which one its commands use. Pub/sub is global in Redis, so its streams and PUBLISH stay on
// database 0's upstream. A database's client and batcher are made on first use: a proxy with 16
// databases configured pays for the ones its clients select.
import type { DatabaseUpstream } from '../config.js';
import type { CommandSpec } from '../commands/table.js';
import { lower, parseLongLong } from '../resp/args.js';
import { errorReply } from '../server/replies.js';
import type { Batcher } from './batcher.js';

export type { DatabaseUpstream };

/** What a database is to the proxy: its batcher (and through it, its upstream client). */
export interface Database {
  readonly index: number;
  readonly batcher: Batcher;
  /** The `dbN:` name of its line in the upstream's INFO keyspace. */
  readonly keyspaceDb: number;
  close(): Promise<void>;
}

/** Redis' selectDb error, for SELECT and COPY … DB of a number that is not configured. */
export const DB_OUT_OF_RANGE = errorReply('ERR DB index is out of range');

/** The databases of one proxy. */
export class Databases {
  private readonly made = new Map<number, Database>();
  private readonly configured = new Map<number, DatabaseUpstream>();

  constructor(
    main: Database,
    others: readonly DatabaseUpstream[],
    private readonly make: (upstream: DatabaseUpstream) => Database,
  ) {
    this.made.set(0, main);
    for (const o of others) if (o.index !== 0) this.configured.set(o.index, o);
  }

  /** Whether SELECT may choose `index`. */
  has(index: number): boolean {
    return index === 0 || this.configured.has(index);
  }

  /** How many databases there are (CONFIG GET databases reads the highest number + 1). */
  get count(): number {
    return this.configured.size + 1;
  }

  /** The configured numbers, ascending (INFO keyspace). */
  indexes(): number[] {
    return [0, ...[...this.configured.keys()].sort((a, b) => a - b)];
  }

  /** Database `index` (which must be configured); its client and batcher are made on first use. */
  get(index: number): Database {
    let db = this.made.get(index);
    if (db) return db;
    const upstream = this.configured.get(index);
    if (!upstream) throw new Error(`respgate internal error: database ${index} is not configured`);
    db = this.make(upstream);
    this.made.set(index, db);
    return db;
  }

  /** The databases made so far (their counters, INFO stats). */
  active(): Iterable<Database> {
    return this.made.values();
  }

  /** Upstream calls and commands of every database (INFO stats, /metrics). */
  readonly stats = {
    get: (key: 'calls' | 'commands'): number => {
      let n = 0;
      for (const db of this.made.values()) n += db.batcher.stats[key];
      return n;
    },
  };

  async close(): Promise<void> {
    await Promise.all([...this.made.values()].map((db) => db.close()));
  }
}

/** The database a command of a connection on `selected` uses: pub/sub is global in Redis, so it stays on 0's upstream. */
export function databaseOf(spec: CommandSpec, selected: number): number {
  return selected !== 0 && spec.flags.has('pubsub') ? 0 : selected;
}

/**
 * MOVE and SWAPDB are refused by the command table; COPY … DB n is checked here: DB of the selected
 * database copies in place (the option is dropped, the upstream being one database), DB of an
 * unconfigured number is Redis' out-of-range error, another configured database is refused (one REST
 * call reaches one database). Returns the arguments to run, or the error reply.
 */
export function checkCopyDb(args: Buffer[], selected: number, has: (index: number) => boolean): Buffer[] | Buffer {
  for (let i = 3; i < args.length - 1; i++) {
    if (lower(args[i]) !== 'db') continue;
    // A value that is no integer (string2ll: no leading zeros, signs or spaces) keeps the upstream's own
    // parse error (`ERR value is not an integer or out of range`).
    const parsed = parseLongLong(args[i + 1]);
    if (parsed === undefined) return args;
    const target = Number(parsed);
    if (target === selected) return [...args.slice(0, i), ...args.slice(i + 2)];
    if (!has(target)) return DB_OUT_OF_RANGE;
    return errorReply(
      `ERR COPY to another database is not supported by respgate: databases ${selected} and ${target} are separate REST databases, and one REST call reaches only one (copy with DUMP and RESTORE through two connections instead)`,
    );
  }
  return args;
}

/**
 * The local platform's databases 1 … count-1 (its --databases) as the proxy's: `<url>/db/<n>`, with the
 * same token, each reporting its keys as `db<n>` (one redis-server behind them all).
 */
export function platformDatabases(url: string, count: number): DatabaseUpstream[] {
  return Array.from({ length: count - 1 }, (_, i) => ({ index: i + 1, url: `${url}/db/${i + 1}`, keyspaceDb: i + 1 }));
}
