// The local platform: its stores (embedded redis-servers unless URLs are given) and one HTTP
// server for every area, each under its own base path like the real service's separate hosts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlatformConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { parseRedisUrl, type RedisEndpoint } from './redis/connection.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './redis/embedded-server.js';
import { openDataDir, usesDataDir, type OpenDataDir, type StoreRole } from './data-dir.js';
import { InternalStore } from './internal-store.js';
import { FieldExpiry } from './kv/field-expiry.js';
import { KeyspaceSetting } from './kv/config.js';
import type { Arg } from '../resp/request-writer.js';
import { Principals, READONLY_USER } from './kv/principals.js';
import { Executor } from './kv/executor.js';
import { startSearch } from './kv/search/engine.js';
import { JsonLibrary } from './kv/json/library.js';
import { KvHandler, errorJson } from './kv/handler.js';
import { openStreams } from './kv/events.js';
import { answerHealth, metricsText, observedGauge, platformRequests } from '../metrics.js';
import type { AreaContext, AreaServer } from './area.js';
import { startVectorArea, type VectorAreaServer } from './vector/index.js';
import type { LocalVectorCall } from './vector/http-api.js';
import { startQueueArea, type QueueArea } from './queue/index.js';
import { startAccountArea } from './account/index.js';
import { ConsoleHandler } from './console/handler.js';
import { databaseCountOf, ExtraDatabases } from './databases.js';
import { DEFAULT_INDEXES } from './vector/config.js';
import { safeEqual } from '../safe-equal.js';

export interface RunningPlatform {
  /** Base URL of Area B, e.g. http://127.0.0.1:8079 */
  url: string;
  /** Key-value databases: 0 at `url`, n at `${url}/db/${n}` (--databases). */
  databases: number;
  port: number;
  token: string;
  readonlyToken: string;
  /** Tells the web console where the dev stack's proxy listens (its Proxy page); `password`: --requirepass. */
  attachProxy(endpoint: RedisEndpoint): void;
  /** Where the Area B data lives (for tests and the dev stack banner). */
  dataStore: RedisEndpoint;
  /** The data directory the embedded stores keep their data in; undefined when they keep nothing (or none is embedded). */
  dataDir?: string;
  /** What the data directory has to say (an index kept but not served). */
  dataDirNotes: string[];
  /** Banner lines of the other areas (vector, queue, account), in that order, then the web console's. */
  areaBanner: string[];
  /** The vector area's operations called in this process, without HTTP (the dev stack's vector side port). */
  vectorLocal: LocalVectorCall;
  /** The vector area's index of that dimension created at run time, and those created so far (dev stack, issue 21). */
  vectorCreateIndex(dimension: number): Promise<string>;
  vectorRuntimeIndexes(): string[];
  stop(): Promise<void>;
}

/** Base paths of the other areas; no Redis command has these names. */
const AREA_PREFIXES = ['/vector', '/queue', '/account'];

export async function startPlatform(config: PlatformConfig, log: Logger): Promise<RunningPlatform> {
  const embedded: EmbeddedRedis[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  // Only embedded stores keep their data in the directory; with both URLs given it is not used.
  const dataDir = usesDataDir(config) ? openDataDir(config.dataDir, config) : undefined;
  const stopStores = async () => {
    for (const e of embedded) await e.stop();
    dataDir?.close(); // after the servers wrote their last bytes
  };
  const databaseCount = databaseCountOf(config, log);
  try {
    const embeddedData = config.redisUrl
      ? undefined
      : await embed(embedded, { binary: config.redisServerBinary, databases: databaseCount, ...kept(dataDir, 'kv') }, log, 'data');
    const dataStore = embeddedData?.endpoint ?? parseRedisUrl(config.redisUrl!);
    const internalEndpoint = config.internalRedisUrl
      ? parseRedisUrl(config.internalRedisUrl)
      : (await embed(embedded, { binary: config.redisServerBinary, ...kept(dataDir, 'internal') }, log, 'internal')).endpoint;

    const internal = new InternalStore(internalEndpoint);
    cleanups.push(() => internal.close());
    await internal.secret(); // fails early, with a clear message, when the internal store is unreachable
    const principals = new Principals(dataStore, internal);
    cleanups.push(() => principals.close());
    await principals.init(config.token, config.readonlyToken);
    // A kept embedded store saves its ACL users (ACL SETUSER …) to its ACL file, so they survive a restart.
    const acl = { saveAclChanges: embeddedData?.aclFile === true, log };
    const { executor, jsonLibrary } = await startExecutor(dataStore, principals, internal, cleanups, acl);
    const kv = new KvHandler(principals, executor, internal, config, log);
    const extraDatabases = new ExtraDatabases(databaseCount, dataStore, internal, jsonLibrary, config, log);
    cleanups.push(() => extraDatabases.close());

    let baseUrl = '';
    const areaContext: AreaContext = {
      config,
      log,
      internal,
      internalEndpoint,
      baseUrl: () => baseUrl,
      recordVectorIndex: dataDir && ((c) => dataDir.recordVectorIndex(c)),
    };
    const areas = new Map<string, AreaServer>();
    let vectorArea: VectorAreaServer | undefined;
    for (const [prefix, start] of [
      ['/vector', startVectorArea],
      ['/queue', startQueueArea],
      ['/account', startAccountArea],
    ] as const) {
      const area = await start(areaContext);
      if (prefix === '/vector') vectorArea = area as VectorAreaServer;
      areas.set(prefix, area);
      cleanups.push(() => area.stop());
    }

    const consoleHandler = webConsole(config, principals, areas.get('/queue') as QueueArea);
    cleanups.push(async () => consoleHandler.close());

    observedGauge(
      'respgate_platform_event_streams',
      'Open server-sent event streams (subscribe, psubscribe, monitor)',
      () => openStreams.count,
    );
    // Binary arguments travel percent-encoded in the path, so the URL may be as large as a request:
    // --max-request-size bounds it (and is checked per request), not Node's 16 KB header default.
    const server = http.createServer({ maxHeaderSize: config.maxRequestSize + 64 * 1024 }, (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const query = q < 0 ? '' : url.slice(q + 1);
      // Liveness and readiness (the data store answers PING); no Redis command has these names.
      if (
        req.method === 'GET' &&
        answerHealth(path, res, async () =>
          (await executor.ping()) ? { ready: true } : { ready: false, problem: 'the data store did not answer PING' },
        )
      )
        return;
      // Prometheus; no Redis command is named "metrics", and the platform binds loopback by default.
      if (path === '/metrics' && req.method === 'GET') {
        void metricsText().then(({ contentType, body }) => {
          res.writeHead(200, { 'Content-Type': contentType });
          res.end(body);
        });
        return;
      }
      // The web console (docs/console.md); no Redis command is named "console".
      if (path === '/console' || path.startsWith('/console/')) {
        void consoleHandler.handle(req, res, path.slice('/console'.length)).catch((err) => {
          log.error({ err: String(err?.stack ?? err) }, 'console request failed');
          res.destroy();
        });
        return;
      }
      const prefix = AREA_PREFIXES.find((p) => path === p || path.startsWith(p + '/'));
      res.on('finish', () => platformRequests.inc({ area: prefix?.slice(1) ?? 'kv', status: String(res.statusCode) }));
      const db = prefix ? undefined : extraDatabases.route(path);
      const handled = prefix
        ? areas.get(prefix)!.handle(req, res, path.slice(prefix.length), query)
        : (db?.handler ?? kv).handle(req, res, db?.path ?? path, query);
      handled.catch((err) => {
        log.error({ err: String(err?.stack ?? err) }, 'request failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(errorJson('ERR internal error of the platform; see its log'));
      });
    });
    // Long keep-alive so a proxy's connection pool is not cut under it.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    await listen(server, config);
    const port = (server.address() as AddressInfo).port;
    const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
    baseUrl = `http://${hostForUrl}:${port}`;
    cleanups.push(
      () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    log.debug({ port }, 'platform listening');
    return {
      url: baseUrl,
      databases: databaseCount,
      port,
      token: config.token,
      readonlyToken: config.readonlyToken,
      dataStore,
      dataDir: dataDir?.root,
      dataDirNotes: dataDir?.notes ?? [],
      attachProxy: (endpoint) => consoleHandler.attachProxy(endpoint),
      vectorLocal: vectorArea!.invoke,
      vectorCreateIndex: (dimension) => vectorArea!.createIndex(dimension),
      vectorRuntimeIndexes: () => vectorArea!.runtimeIndexes(),
      areaBanner: [
        ...[...areas.values()].flatMap((a) => a.banner?.() ?? []),
        `  Web console                   ${baseUrl}/console/   (log in with a token above)`,
        '',
      ],
      stop: async () => {
        for (const c of cleanups.reverse()) await c().catch(() => undefined);
        await stopStores();
      },
    };
  } catch (err) {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await stopStores();
    throw err;
  }
}

/** The web console (docs/console.md): a token's role as the KV API resolves it, and the queue area with its tokens. */
/** The web console: a token logs in as its role (docs/console.md). */
function webConsole(config: PlatformConfig, principals: Principals, queue: QueueArea): ConsoleHandler {
  return new ConsoleHandler({
    session: async (token) => {
      const p = await principals.resolve(token);
      if (!p) return undefined;
      return { role: p.user === READONLY_USER ? 'readonly' : token === config.token ? 'standard' : 'acl', user: p.user };
    },
    vectorIndexes: (config.vectorIndexes ?? DEFAULT_INDEXES).map((i) => i.name),
    queue: queue.console,
    // The queue API's own tokens (routes.ts): QSTASH_TOKEN, or the Read Only token to read.
    queueAccess: (token) =>
      safeEqual(token, config.queueToken || config.token) ? 'full' : safeEqual(token, config.readonlyToken) ? 'readonly' : undefined,
  });
}

/** The key-value executor with what it runs beside the data store's own commands. */
async function startExecutor(
  dataStore: RedisEndpoint,
  principals: Principals,
  internal: InternalStore,
  cleanups: Array<() => Promise<void>>,
  acl: ConstructorParameters<typeof Executor>[6],
): Promise<{ executor: Executor; jsonLibrary: JsonLibrary }> {
  // JSON.* runs as a Redis function library in the data store (docs/json.md); SEARCH.* in the platform (platform-kv.md).
  const jsonLibrary = new JsonLibrary(dataStore);
  const [, search] = await Promise.all([jsonLibrary.load(), startSearch(dataStore, internal, cleanups)]);
  // Hash-field expiration where the data store lacks it (Redis < 7.4): times kept in the internal store.
  const admin = (commands: Arg[][]) => principals.admin((conn) => conn.send(commands));
  const fieldExpiry = new FieldExpiry(internal, admin);
  // notify-keyspace-events set through the platform is set again at each start (the server keeps no config).
  const keyspace = new KeyspaceSetting(internal, admin);
  await keyspace.restore();
  const executor = new Executor(
    principals,
    [dataStore.username ?? 'default', READONLY_USER],
    jsonLibrary,
    fieldExpiry,
    keyspace,
    search,
    acl,
  );
  await executor.init();
  if (!executor.hasNativeFieldExpiry) {
    await fieldExpiry.init();
    cleanups.push(async () => fieldExpiry.close());
  }
  return { executor, jsonLibrary };
}

/** Listens on --http-port; a port in use is an error that says which flag changes it. */
function listen(server: http.Server, config: PlatformConfig): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `port ${config.httpPort} on ${config.host} is already in use (another respgate?): choose another with --http-port or RESPGATE_HTTP_PORT (npm start -- --http-port 8089)`,
            )
          : err,
      ),
    );
    server.listen(config.httpPort, config.host, resolve);
  });
}

/** Options of an embedded store that keeps its data in the data directory (none: a throw-away one). */
function kept(dataDir: OpenDataDir | undefined, role: StoreRole): { dataDir?: string; pidFile?: string } {
  if (!dataDir) return {};
  const { dir, pidFile } = dataDir.store(role);
  return { dataDir: dir, pidFile };
}

async function embed(
  list: EmbeddedRedis[],
  opts: Parameters<typeof startEmbeddedRedis>[0],
  log: Logger,
  role: string,
): Promise<EmbeddedRedis> {
  const r = await startEmbeddedRedis(opts);
  list.push(r);
  log.debug({ role, port: r.endpoint.port }, 'embedded redis-server started');
  return r;
}
