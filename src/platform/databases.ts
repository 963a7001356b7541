// Several key-value databases on one platform, like redis-server's numbered databases: database 0 is
// Area B at the base URL (unchanged, one database as on the real service), and database n (1 to
// --databases - 1) is a complete Area B of its own at <base>/db/<n>, whose commands run in the data
// store's database n. The proxy of the dev stack maps SELECT n to these base URLs. No Redis command is
// named "db", so the prefix takes nothing from the root's command paths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlatformConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { InternalStore } from './internal-store.js';
import { Executor } from './kv/executor.js';
import { KvHandler } from './kv/handler.js';
import type { JsonLibrary } from './kv/json/library.js';
import { Principals, READONLY_USER } from './kv/principals.js';
import { parseRedisUrl, type RedisEndpoint } from './redis/connection.js';

/**
 * Databases 1 … n-1 are the data store's numbered databases; a --redis-url that names another database
 * than 0 keeps database 0 only (their numbers would overlap).
 */
export function databaseCountOf(config: PlatformConfig, log: Logger): number {
  const urlDb = config.redisUrl ? (parseRedisUrl(config.redisUrl).db ?? 0) : 0;
  if (urlDb === 0) return Math.max(1, config.databases ?? 1);
  if ((config.databases ?? 1) > 1)
    log.warn({ db: urlDb }, '--redis-url names a database other than 0: the platform serves database 0 only (--databases 1)');
  return 1;
}

const DB_PATH = /^\/db\/(\d{1,4})(\/.*)?$/;

/** The databases 1 … n-1 of the platform, each made on its first request. */
export class ExtraDatabases {
  private readonly handlers = new Map<number, Promise<{ kv: KvHandler; principals: Principals }>>();

  constructor(
    /** Databases in all (1 = database 0 only: no /db/ paths). */
    readonly count: number,
    private readonly dataStore: RedisEndpoint,
    private readonly internal: InternalStore,
    private readonly jsonLibrary: JsonLibrary,
    private readonly config: PlatformConfig,
    private readonly log: Logger,
  ) {}

  /** The handler of `/db/<n>/…` and the path within it; undefined for another path (database 0's). */
  route(path: string): { handler: { handle: KvHandler['handle'] }; path: string } | undefined {
    if (this.count <= 1 || !path.startsWith('/db/')) return undefined;
    const m = DB_PATH.exec(path);
    if (!m) return undefined;
    const db = Number(m[1]);
    return { handler: { handle: (req, res, within, query) => this.handle(req, res, db, within, query) }, path: m[2] ?? '/' };
  }

  /** Serves a request of database `db` (1 … count-1; another number answers 404 in Area B's JSON). */
  private async handle(req: IncomingMessage, res: ServerResponse, db: number, path: string, query: string): Promise<void> {
    if (db < 1 || db >= this.count) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: `ERR DB index is out of range: this platform has databases 0 to ${this.count - 1} (--databases)` }));
      return;
    }
    const { kv } = await this.open(db);
    await kv.handle(req, res, path, query);
  }

  private open(db: number): Promise<{ kv: KvHandler; principals: Principals }> {
    let opened = this.handlers.get(db);
    if (!opened) {
      opened = this.make(db);
      opened.catch(() => this.handlers.delete(db)); // the next request tries again
      this.handlers.set(db, opened);
    }
    return opened;
  }

  /** The same tokens and users as database 0, on connections that select database `db`. */
  private async make(db: number): Promise<{ kv: KvHandler; principals: Principals }> {
    const endpoint: RedisEndpoint = { ...this.dataStore, db };
    const principals = new Principals(endpoint, this.internal);
    await principals.init(this.config.token, this.config.readonlyToken);
    const executor = new Executor(principals, [endpoint.username ?? 'default', READONLY_USER], this.jsonLibrary);
    await executor.init();
    this.log.debug({ db }, 'key-value database opened');
    return { kv: new KvHandler(principals, executor, this.internal, this.config, this.log), principals };
  }

  async close(): Promise<void> {
    for (const opened of this.handlers.values()) {
      const db = await opened.catch(() => undefined);
      await db?.principals.close();
    }
  }
}
