// Which vector indexes the platform serves: four by default, more (or others) from a JSON file given with
// --vector-config. Validation errors name the index, the field and the accepted values.
import { readFileSync } from 'node:fs';
import type { IndexType, Metric, VectorIndexConfig } from '../../config.js';

export type { IndexType, VectorIndexConfig };

export const DEFAULT_INDEXES: VectorIndexConfig[] = [
  { name: 'dense', type: 'DENSE', dimension: 384, similarityFunction: 'COSINE' },
  { name: 'dense-data', type: 'DENSE', dimension: 384, similarityFunction: 'COSINE', denseEmbedder: 'local' },
  { name: 'sparse', type: 'SPARSE', sparseEmbedder: 'bm25' },
  { name: 'hybrid', type: 'HYBRID', dimension: 384, similarityFunction: 'COSINE', denseEmbedder: 'local', sparseEmbedder: 'bm25' },
];

export class VectorConfigError extends Error {}

const METRICS = ['COSINE', 'EUCLIDEAN', 'DOT_PRODUCT'];

/** Checks one index definition and fills the defaults (COSINE; dimension required for dense and hybrid). */
export function validateIndex(raw: unknown, where: string): VectorIndexConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new VectorConfigError(`${where}: an index is an object such as {"name":"docs","type":"DENSE","dimension":384}`);
  const o = raw as Record<string, unknown>;
  const name = o.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new VectorConfigError(`${where}: "name" must be 1-64 letters, digits, '-' or '_' (it becomes the URL path /vector/<name>)`);
  const at = `${where} (index '${name}')`;
  const type = String(o.type ?? '').toUpperCase();
  if (!['DENSE', 'SPARSE', 'HYBRID'].includes(type)) throw new VectorConfigError(`${at}: "type" must be DENSE, SPARSE or HYBRID`);
  const cfg: VectorIndexConfig = { name, type: type as IndexType };
  if (type !== 'SPARSE') {
    const dim = o.dimension;
    if (typeof dim !== 'number' || !Number.isInteger(dim) || dim < 1 || dim > 16384)
      throw new VectorConfigError(`${at}: "dimension" must be a whole number from 1 to 16384`);
    cfg.dimension = dim;
    const metric = String(o.similarityFunction ?? 'COSINE').toUpperCase();
    if (!METRICS.includes(metric)) throw new VectorConfigError(`${at}: "similarityFunction" must be one of ${METRICS.join(', ')}`);
    cfg.similarityFunction = metric as Metric;
    if (o.denseEmbedder !== undefined) {
      if (o.denseEmbedder !== 'local' && o.denseEmbedder !== 'openai')
        throw new VectorConfigError(`${at}: "denseEmbedder" must be "local" or "openai"`);
      cfg.denseEmbedder = o.denseEmbedder;
    }
  } else if (o.denseEmbedder !== undefined || o.dimension !== undefined) {
    throw new VectorConfigError(`${at}: a SPARSE index has no "dimension" or "denseEmbedder"`);
  }
  if (o.sparseEmbedder !== undefined) {
    if (type === 'DENSE') throw new VectorConfigError(`${at}: a DENSE index has no "sparseEmbedder"`);
    if (String(o.sparseEmbedder).toLowerCase() !== 'bm25') throw new VectorConfigError(`${at}: "sparseEmbedder" must be "bm25"`);
    cfg.sparseEmbedder = 'bm25';
  }
  if (type === 'HYBRID' && (cfg.denseEmbedder === undefined) !== (cfg.sparseEmbedder === undefined)) {
    throw new VectorConfigError(`${at}: a HYBRID index has both embedders ("denseEmbedder" and "sparseEmbedder") or neither`);
  }
  if (o.hnswThreshold !== undefined) {
    if (typeof o.hnswThreshold !== 'number' || !Number.isInteger(o.hnswThreshold) || o.hnswThreshold < 0)
      throw new VectorConfigError(`${at}: "hnswThreshold" must be a whole number >= 0`);
    cfg.hnswThreshold = o.hnswThreshold;
  }
  for (const f of ['embeddingsUrl', 'embeddingsModel', 'embeddingsKey', 'token', 'readonlyToken'] as const) {
    if (o[f] !== undefined) {
      if (typeof o[f] !== 'string' || o[f] === '') throw new VectorConfigError(`${at}: "${f}" must be a non-empty string`);
      cfg[f] = o[f] as string;
    }
  }
  return cfg;
}

/**
 * Reads a --vector-config file: {"defaults": true, "indexes": [ ... ]}. Its indexes are added to the four
 * defaults (one with a default's name replaces it); "defaults": false serves only the file's indexes.
 */
export function loadVectorConfigFile(path: string): VectorIndexConfig[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new VectorConfigError(`--vector-config: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new VectorConfigError(`--vector-config: ${path} is not valid JSON (${(err as Error).message})`);
  }
  const o = json as { defaults?: unknown; indexes?: unknown };
  if (!o || typeof o !== 'object' || !Array.isArray(o.indexes))
    throw new VectorConfigError(`--vector-config: ${path} must hold {"indexes": [ ... ]}`);
  const own = o.indexes.map((raw, i) => validateIndex(raw, `--vector-config ${path}, indexes[${i}]`));
  return mergeIndexes(o.defaults === false ? [] : DEFAULT_INDEXES, own);
}

export function mergeIndexes(base: VectorIndexConfig[], extra: VectorIndexConfig[]): VectorIndexConfig[] {
  const seen = new Set<string>();
  for (const e of extra) {
    if (seen.has(e.name)) throw new VectorConfigError(`--vector-config: index '${e.name}' is defined twice`);
    seen.add(e.name);
  }
  return [...base.filter((b) => !seen.has(b.name)), ...extra];
}
