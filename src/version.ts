// The versions respgate reports, in one place: its own (package.json's, so a release changes one
// file) and the Redis version whose behaviour it reproduces (HELLO, INFO, COMMAND DOCS).
import { readFileSync } from 'node:fs';

/** package.json sits one level above both src/ (tsx) and dist/ (the build). */
export const RESPGATE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The redis-server whose replies are the oracle (tests compare bytes with it). */
export const REDIS_VERSION = '7.0.15';
