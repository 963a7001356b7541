// Area C, the vector index API: one VectorIndex per configured index under /vector/<index>, records kept
// in the platform's internal Redis, embedders chosen per index (see docs/vector.md).
import type { AreaContext, AreaServer } from '../area.js';
import { DEFAULT_INDEXES, type VectorIndexConfig } from './config.js';
import { Bm25Embedder, LocalLexicalEmbedder, OpenAiEmbedder, type DenseEmbedder } from './embedders.js';
import { VectorHttpApi, type IndexTokens, type LocalVectorCall } from './http-api.js';
import type { SearchTuning } from './namespace.js';
import { VectorStore } from './store.js';
import { recordedRuntimeIndexes, recordRuntimeIndex, MAX_DIMENSION, runtimeIndexConfig } from './runtime-indexes.js';
import { VectorError, VectorIndex } from './vector-index.js';

/** HNSW parameters: recall@10 ≥ 0.95 on random vectors (test/platform/vector-hnsw.test.ts, bench/vector.bench.ts). */
export const DEFAULT_TUNING: SearchTuning = { hnswThreshold: 20_000, connectivity: 16, expansionAdd: 64, expansionSearch: 128 };

function denseEmbedderFor(cfg: VectorIndexConfig, ctx: AreaContext): DenseEmbedder | undefined {
  if (cfg.denseEmbedder === 'local') return new LocalLexicalEmbedder(cfg.dimension!);
  if (cfg.denseEmbedder === 'openai') {
    const url = cfg.embeddingsUrl ?? ctx.config.vectorEmbeddingsUrl;
    if (!url)
      throw new Error(
        `vector index '${cfg.name}' uses the "openai" embedder but no endpoint is set: give --vector-embeddings-url (RESPGATE_VECTOR_EMBEDDINGS_URL) or "embeddingsUrl" in --vector-config`,
      );
    const model = cfg.embeddingsModel ?? ctx.config.vectorEmbeddingsModel ?? 'text-embedding-3-small';
    return new OpenAiEmbedder(url, model, cfg.embeddingsKey ?? ctx.config.vectorEmbeddingsKey, cfg.dimension!);
  }
  return undefined;
}

/** The vector area, and its operations called in-process (the dev stack's side port). */
export interface VectorAreaServer extends AreaServer {
  invoke: LocalVectorCall;
  /** The index of `dimension` dimensions created at run time (`vset-<dimension>`): made and recorded once. */
  createIndex(dimension: number): Promise<string>;
  /** The names of the indexes created at run time (those of an earlier run included). */
  runtimeIndexes(): string[];
}

export async function startVectorArea(ctx: AreaContext): Promise<VectorAreaServer> {
  const configs = ctx.config.vectorIndexes ?? DEFAULT_INDEXES;
  // Assigned once below; the tuning's busy hook reads it when requests arrive, after it is set.
  // eslint-disable-next-line prefer-const
  let api: VectorHttpApi | undefined;
  const tuning: SearchTuning = { ...DEFAULT_TUNING, busy: () => (api?.inFlight ?? 0) > 0, ...ctx.config.vectorTuning };
  const indexes = new Map<string, { index: VectorIndex; tokens: IndexTokens }>();
  const open = async (cfg: VectorIndexConfig) => {
    const index = new VectorIndex(
      cfg,
      new VectorStore(ctx.internal.pool, cfg.name),
      denseEmbedderFor(cfg, ctx),
      cfg.sparseEmbedder ? new Bm25Embedder() : undefined,
      cfg.hnswThreshold === undefined ? tuning : { ...tuning, hnswThreshold: cfg.hnswThreshold },
    );
    await index.load();
    indexes.set(cfg.name, {
      index,
      tokens: {
        token: cfg.token ?? ctx.config.vectorToken ?? ctx.config.token,
        readonlyToken: cfg.readonlyToken ?? ctx.config.readonlyToken,
      },
    });
  };
  for (const cfg of configs) await open(cfg);
  // Indexes created at run time before: served again (a configured index of the same name wins).
  const runtime = new Set<string>();
  for (const cfg of await recordedRuntimeIndexes(ctx.internal.pool)) {
    if (indexes.has(cfg.name)) continue;
    await open(cfg);
    runtime.add(cfg.name);
  }
  const creating = new Map<number, Promise<string>>();
  const create = async (dimension: number): Promise<string> => {
    const cfg = runtimeIndexConfig(dimension);
    const have = indexes.get(cfg.name)?.index;
    if (have) {
      if (have.config.type !== 'DENSE' || have.dimension !== dimension)
        throw new VectorError(
          409,
          `index '${cfg.name}' exists as ${have.config.type} of dimension ${have.dimension}; rename it to let a DENSE one of ${dimension} be created`,
        );
      return cfg.name;
    }
    // Opened first: an index that cannot load (stale records of another dimension) is never recorded.
    await open(cfg);
    try {
      await recordRuntimeIndex(ctx.internal.pool, cfg);
      ctx.recordVectorIndex?.(cfg);
    } catch (err) {
      indexes.get(cfg.name)?.index.close();
      indexes.delete(cfg.name);
      throw err;
    }
    runtime.add(cfg.name);
    ctx.log.info({ index: cfg.name, dimension }, 'vector index created at run time');
    return cfg.name;
  };
  api = new VectorHttpApi(indexes, ctx.config.maxRequestSize);
  const served = api;
  return {
    handle: (req, res, path, query) => served.handle(req, res, path, query),
    invoke: (index, op, namespace, body, token) => served.invoke(index, op, namespace, body, token),
    createIndex(dimension) {
      if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_DIMENSION)
        return Promise.reject(new VectorError(400, `an index has 1 to ${MAX_DIMENSION} dimensions, not ${dimension}`));
      // One creation per dimension: concurrent callers wait for the same one.
      let made = creating.get(dimension);
      if (!made) {
        made = create(dimension);
        creating.set(dimension, made);
        made.catch(() => creating.delete(dimension));
      }
      return made;
    },
    runtimeIndexes: () => [...runtime],
    banner() {
      const lines = ['  Vector indexes (@upstash/vector: Index.fromEnv() after pasting the two lines of an index)'];
      for (const [name, { index, tokens }] of indexes) {
        const kind = [
          index.config.type,
          index.config.dimension ? `${index.config.dimension} dimensions, ${index.metric}` : '',
          index.config.denseEmbedder ? `${index.config.denseEmbedder} embedder` : '',
          index.config.sparseEmbedder ? 'BM25' : '',
        ]
          .filter(Boolean)
          .join(', ');
        lines.push(`    ${name} (${kind})`);
        lines.push(`      export UPSTASH_VECTOR_REST_URL=${ctx.baseUrl()}/vector/${name}`);
        lines.push(`      export UPSTASH_VECTOR_REST_TOKEN=${tokens.token}`);
      }
      lines.push('    # read-only token of every index: the read-only token above', '');
      return lines;
    },
    async stop() {
      for (const { index } of indexes.values()) index.close();
    },
  };
}
