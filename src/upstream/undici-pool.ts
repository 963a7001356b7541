// undici's Pool and its request API without undici's index module. The index also loads fetch,
// WebSocket, the cache stores and the mock agent, and through their use of the File and Headers
// globals Node's own bundled copy of undici: 7.7 MiB of a proxy's idle RSS and part of its start
// (bench/README.md, "Sidecar startup"). These two modules are what the index itself puts together
// (`Object.assign(Dispatcher.prototype, api)`), so a Pool made here is the index's Pool. They load on
// first use, not with this module: a proxy's key-value calls go through Http1Pool, and its start (to the
// first PONG) does not wait for ~30 modules of undici that only a SUBSCRIBE, MONITOR or side-port call
// needs (bench/README.md, 2026-11-28).
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';
import { Http1Pool } from './http1-pool.js';

const require = createRequire(import.meta.url);

export type Pool = UndiciPool;

let poolClass: typeof UndiciPool | undefined;

/** undici's Pool class, its modules loaded on the first call. */
export function undiciPool(): typeof UndiciPool {
  if (poolClass === undefined) {
    poolClass = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
    const Dispatcher = require('undici/lib/dispatcher/dispatcher.js');
    // request() on every dispatcher, as the index does (assigning the same functions again is harmless).
    Object.assign(Dispatcher.prototype, require('undici/lib/api/index.js'));
  }
  return poolClass;
}

/** What the proxy's upstream calls (kv-client.ts) are sent through. */
export interface CallPoolOptions {
  connections: number;
  connectTimeoutMs: number;
  ca?: string | Buffer;
  /**
   * Backstops for the undici fallback only. Http1Pool needs none: the exchange's own deadline
   * (http-exchange.ts) bounds every call, and its abort destroys the connection the call was on
   * (test/proxy/upstream-faults.test.ts: an upstream that never answers).
   */
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/**
 * The pool of the proxy's upstream calls: the lean HTTP/1.1 client (http1-pool.ts), or undici's Pool
 * with RESPGATE_UPSTREAM_HTTP=undici (the client of earlier versions, kept as a fallback).
 */
export function callPool(origin: string, options: CallPoolOptions): Pool {
  if (process.env.RESPGATE_UPSTREAM_HTTP === 'undici')
    return new (undiciPool())(origin, {
      connections: options.connections,
      pipelining: 1,
      connect: { timeout: options.connectTimeoutMs, ...(options.ca ? { ca: options.ca } : {}) },
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
    });
  // Http1Pool is a Dispatcher as far as exchange() and kv-client use one: dispatch, close, destroy, destroyed.
  return new Http1Pool(origin, {
    connections: options.connections,
    connectTimeoutMs: options.connectTimeoutMs,
    ca: options.ca,
  }) as unknown as Pool;
}
