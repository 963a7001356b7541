// Loads the JSON function library (lua/*.lua) into the data store, and loads it again when a user's
// FUNCTION FLUSH or FUNCTION DELETE removed it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RedisConnection, errorText, type RedisEndpoint } from '../../redis/connection.js';

export const JSON_LIBRARY_NAME = 'respgate_json';

/**
 * The library's parts, in load order: one Lua chunk cut into files by concern, each part using the
 * locals of the parts before it. `npm run build` copies lua/ next to the compiled module.
 */
export const JSON_LIBRARY_PARTS = ['values', 'bignum', 'codec', 'path', 'store', 'commands'] as const;

/** The library's source: FUNCTION LOAD takes one text, a Redis 7 function library (`#!lua name=…`). */
function librarySource(): string {
  const parts = JSON_LIBRARY_PARTS.map((part) => readFileSync(fileURLToPath(new URL(`./lua/${part}.lua`, import.meta.url)), 'utf8'));
  return `#!lua name=${JSON_LIBRARY_NAME}\n${parts.join('')}`;
}
export const JSON_LIBRARY_SOURCE = librarySource();

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
