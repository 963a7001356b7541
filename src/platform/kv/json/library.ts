// Loads the JSON function library (library.lua) into the data store, and loads it again when a user's
// FUNCTION FLUSH or FUNCTION DELETE removed it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RedisConnection, errorText, type RedisEndpoint } from '../../redis/connection.js';

/**
 * The library's source: a Redis 7 function library (`#!lua name=respgate_json`). Read next to this module
 * under tsx; the compiled dist/ has no .lua files, so it reads the one in src/ then.
 */
function librarySource(): string {
  const here = fileURLToPath(new URL('./library.lua', import.meta.url));
  const inSrc = fileURLToPath(new URL('../../../../src/platform/kv/json/library.lua', import.meta.url));
  return readFileSync(existsSync(here) ? here : inSrc, 'utf8');
}
export const JSON_LIBRARY_SOURCE = librarySource();
export const JSON_LIBRARY_NAME = 'respgate_json';

/** Redis' answer to FCALL of a function that is not loaded. */
export function isFunctionMissing(reply: Buffer): boolean {
  const text = errorText(reply);
  return text !== undefined && /^ERR Function not found/.test(text);
}

export class JsonLibrary {
  private loading: Promise<void> | undefined;

  /** `admin`: a user allowed to run FUNCTION LOAD (the store's own user). */
  constructor(private readonly admin: RedisEndpoint) {}

  /** Loads (or replaces) the library; concurrent callers share one load. */
  load(): Promise<void> {
    if (!this.loading) {
      this.loading = this.loadOnce().finally(() => {
        this.loading = undefined;
      });
    }
    return this.loading;
  }

  private async loadOnce(): Promise<void> {
    const conn = await RedisConnection.open(this.admin);
    try {
      const [reply] = await conn.send([['FUNCTION', 'LOAD', 'REPLACE', JSON_LIBRARY_SOURCE]]);
      const err = errorText(reply);
      if (err)
        throw new Error(
          `cannot load the JSON function library into the data store (${err}); the Redis user of --redis-url needs FUNCTION LOAD`,
        );
    } finally {
      conn.close();
    }
  }
}
