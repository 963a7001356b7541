// undici's Pool and its request API without undici's index module. The index also loads fetch,
// WebSocket, the cache stores and the mock agent, and through their use of the File and Headers
// globals Node's own bundled copy of undici: 7.7 MiB of a proxy's idle RSS and part of its start
// (bench/README.md, "Sidecar startup"). These two modules are what the index itself puts together
// (`Object.assign(Dispatcher.prototype, api)`), so a Pool made here is the index's Pool.
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

const require = createRequire(import.meta.url);

export const Pool: typeof UndiciPool = require('undici/lib/dispatcher/pool.js');
const Dispatcher = require('undici/lib/dispatcher/dispatcher.js');
// request() on every dispatcher, as the index does (assigning the same functions again is harmless).
Object.assign(Dispatcher.prototype, require('undici/lib/api/index.js'));

export type Pool = UndiciPool;
