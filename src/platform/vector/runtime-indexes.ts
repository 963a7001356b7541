// Indexes created at run time: Redis 8 creates a vector set of any dimension at its first VADD, so the dev
// stack's vector side port asks its platform for a dense COSINE index of a dimension none has (issue 21).
// Each is recorded in the internal Redis (a hash: name → configuration), so that a restart on the same
// internal Redis (a data directory, or --internal-redis-url) serves it again with its records.
import type { RedisPool } from '../redis/pool.js';
import { validateIndex, type VectorIndexConfig } from './config.js';
import { runInternal } from './store.js';

const KEY = 'respgate:vector:runtime-indexes';

/** The most dimensions an index may have (validateIndex's bound). */
export const MAX_DIMENSION = 16384;

/** `vset-<dimension>`: one index per dimension, the same name after every restart. */
export const runtimeIndexName = (dimension: number): string => `vset-${dimension}`;

export function runtimeIndexConfig(dimension: number): VectorIndexConfig {
  return { name: runtimeIndexName(dimension), type: 'DENSE', dimension, similarityFunction: 'COSINE' };
}

/** The indexes created at run time before, as recorded (checked as a --vector-config entry would be). */
export async function recordedRuntimeIndexes(pool: RedisPool): Promise<VectorIndexConfig[]> {
  const [values] = await runInternal(pool, [['HVALS', KEY]]);
  return (values as Buffer[]).map((v) => validateIndex(JSON.parse(v.toString()), `internal Redis ${KEY}`));
}

export async function recordRuntimeIndex(pool: RedisPool, config: VectorIndexConfig): Promise<void> {
  await runInternal(pool, [['HSET', KEY, config.name, JSON.stringify(config)]]);
}
