// What an area of the local platform (vector, queue, account) gets from the platform, and what it
// gives back: one HTTP handler under its own base path, and a stop hook.
import type http from 'node:http';
import type { PlatformConfig, VectorIndexConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { RedisEndpoint } from './redis/connection.js';
import type { InternalStore } from './internal-store.js';

export interface AreaContext {
  config: PlatformConfig;
  log: Logger;
  /** The platform's bookkeeping Redis: areas keep their records here, never in the Area B data store. */
  internal: InternalStore;
  internalEndpoint: RedisEndpoint;
  /** Base URL of the platform's HTTP server, known once it listens (e.g. http://127.0.0.1:8079). */
  baseUrl(): string;
  /** Records in the data directory's manifest an index created at run time (none: no data directory). */
  recordVectorIndex?(config: VectorIndexConfig): void;
}

export interface AreaServer {
  /** `path` is relative to the area's base path ('/vector/dense/query' → '/dense/query'); `query` without '?'. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: string): Promise<void>;
  /** Lines for the startup banner (URLs, tokens, env lines). */
  banner?(): string[];
  stop(): Promise<void>;
}

export type AreaStarter = (ctx: AreaContext) => Promise<AreaServer>;
