// VSIM: the elements most similar to a vector, an element or a text (/query, /query-data).
import { RestError } from '../../upstream/rest-json.js';
import type { ScoredRecord } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, text, upper } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { FilterExpression } from './filter-expr.js';
import { readVectorInput, type VectorInput } from './input.js';
import { exists, keyOf, namespaceInfo, toVectorError, type VectorContext } from './keyspace.js';
import { flag, ignored, readOptions, redisInteger, type OptionTable } from './options.js';
import { project, projectionOf } from './projection.js';
import { attributesText } from './attributes.js';
import { writeElements, type Fields } from './replies.js';
import { rescore } from './similarity.js';

/** The service's topK limit: the most candidates one query brings for FILTER to choose from. */
const MAX_CANDIDATES = 1000;

interface VsimOptions {
  f: Fields;
  count: number;
  epsilon?: number;
  /** FILTER: Redis' expression, evaluated here on each candidate's attributes. */
  filter?: FilterExpression;
  /** FILTER-EF: how many candidates FILTER may look at (Redis' default: COUNT * 100). */
  filterEf?: number;
  /** WHERE: a filter in the service's own language, sent with the query. */
  where?: string;
  queryMode?: 'HYBRID' | 'DENSE' | 'SPARSE';
  fusion?: 'RRF' | 'DBSF';
  weighting?: 'IDF';
}

/** The value of an option that takes one of a few words. */
function choice<T extends string>(cur: ArgCursor, allowed: readonly T[], what: string): T {
  const v = upper(cur.value()) as T;
  if (!allowed.includes(v)) throw new CommandError(`ERR ${what} must be one of ${allowed.join(', ')}`);
  return v;
}

const VSIM_OPTIONS: OptionTable<VsimOptions> = {
  WITHSCORES: flag((s) => (s.f.scores = true)),
  WITHATTRIBS: flag((s) => (s.f.attribs = true)),
  WITHDATA: flag((s) => (s.f.data = true)),
  // Redis' checks and texts; COUNT beyond the service's topK limit returns at most that many.
  COUNT: (s, cur) => (s.count = redisInteger(cur.value(), 1, Number.MAX_SAFE_INTEGER, 'ERR invalid COUNT')),
  EPSILON: (s, cur) => {
    const t = cur.value().toString('latin1');
    const epsilon = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : NaN;
    if (!(epsilon > 0)) throw new CommandError('ERR invalid EPSILON');
    s.epsilon = epsilon;
  },
  EF: (_s, cur) => void redisInteger(cur.value(), 1, 1_000_000, 'ERR invalid EF'),
  'FILTER-EF': (s, cur) => (s.filterEf = redisInteger(cur.value(), 1, Number.MAX_SAFE_INTEGER, 'ERR invalid FILTER-EF')),
  // Redis' own search tuning: no effect on the service.
  TRUTH: ignored,
  NOTHREAD: ignored,
  // As in Redis, a second FILTER replaces the first; WHERE goes to the service, so both may be given.
  FILTER: (s, cur) => (s.filter = FilterExpression.compile(cur.value())),
  WHERE: (s, cur) => (s.where = text(cur.value())),
  QUERYMODE: (s, cur) => (s.queryMode = choice(cur, ['HYBRID', 'DENSE', 'SPARSE'] as const, 'QUERYMODE')),
  FUSION: (s, cur) => (s.fusion = choice(cur, ['RRF', 'DBSF'] as const, 'FUSION')),
  WEIGHTING: (s, cur) => (s.weighting = choice(cur, ['IDF'] as const, 'WEIGHTING')),
};

export async function vsim(ctx: VectorContext, c: Call): Promise<Reply> {
  const ns = keyOf(c);
  let input: VectorInput;
  let o: VsimOptions;
  try {
    const cur = new ArgCursor(c.args, 2);
    input = readVectorInput(cur, true);
    o = readOptions(
      cur,
      VSIM_OPTIONS,
      'vsim',
      { f: { scores: false, attribs: false, data: false }, count: 10 },
      'ERR syntax error in VSIM command',
    );
    if (o.queryMode && input.data === undefined)
      throw new CommandError('ERR QUERYMODE applies to text queries only (VSIM key DATA text QUERYMODE …)');
  } catch (err) {
    // Redis answers a missing key with an empty array before it reads the rest of the request.
    if (err instanceof CommandError && !exists((await namespaceInfo(ctx, ns)).entry)) return (w) => w.arrayHeader(0);
    throw err;
  }
  let results: ScoredRecord[];
  try {
    results = await search(ctx, ns, input, o);
  } catch (err) {
    // A missing key (or one VREM emptied) answers an empty array whatever the query's dimension, as in
    // Redis; the service refused it because the key's index (the default one) has another dimension.
    if (!exists((await namespaceInfo(ctx, ns)).entry)) return (w) => w.arrayHeader(0);
    const projected = await projectedQuery(ctx, ns, input, err);
    if (!projected) throw toVectorError(err);
    results = await search(ctx, ns, projected, o).catch((e: unknown) => {
      throw toVectorError(e);
    });
  }
  if (o.filter) results = results.filter((r) => o.filter!.matchesText(attributesText(r.metadata)));
  if (o.epsilon !== undefined) results = results.filter((r) => r.score >= 1 - o.epsilon!);
  if (results.length > o.count) results = results.slice(0, o.count);
  return (w) => writeElements(w, results, o.f);
}

/**
 * A query vector of a set made with REDUCE: the service refused its dimension, so when the set has a
 * projection from that dimension the query is projected as Redis projects it (undefined otherwise).
 */
async function projectedQuery(ctx: VectorContext, ns: string, input: VectorInput, err: unknown): Promise<VectorInput | undefined> {
  const m = err instanceof RestError ? /Invalid vector dimension: (\d+), expected: (\d+)/.exec(err.message) : null;
  if (!m || !input.dense || input.sparse) return undefined;
  const [sample] = (await ctx.client.range(ns, { cursor: '0', limit: 1, includeMetadata: true })).vectors;
  const proj = projectionOf(sample?.metadata);
  if (!proj) return undefined;
  if (input.dense.length !== proj)
    throw new CommandError(`ERR Input dimension mismatch for projection - got ${input.dense.length} but projection expects ${proj}`);
  return { dense: project(input.dense, Number(m[2])) };
}

/**
 * The service's answer to the query: /query-data for a text, /query for a vector (ELE: the element's).
 * With FILTER, the candidates are the FILTER-EF nearest (default COUNT * 100, as Redis explores at most
 * that many nodes; at most the service's topK limit) with their attributes, filtered by the caller.
 */
async function search(ctx: VectorContext, ns: string, input: VectorInput, o: VsimOptions): Promise<ScoredRecord[]> {
  const topK = Math.min(MAX_CANDIDATES, o.filter ? Math.max(o.count, o.filterEf ?? o.count * 100) : o.count);
  // Scores shown or compared (EPSILON) are recomputed as Redis computes them, from the vectors.
  const exact = o.f.scores || o.epsilon !== undefined;
  const common = {
    topK,
    includeMetadata: o.f.attribs || o.filter !== undefined || exact,
    ...(exact ? { includeVectors: true } : {}),
    includeData: o.f.data,
    filter: o.where,
    fusionAlgorithm: o.fusion,
    weightingStrategy: o.weighting,
  };
  if (input.data !== undefined) return ctx.client.queryData(ns, { data: input.data, ...common, queryMode: o.queryMode });
  let { dense, sparse } = input;
  if (input.element !== undefined) {
    const [r] = await ctx.client.fetch(ns, { ids: [input.element], includeVectors: true });
    if (!r) {
      // Redis answers a missing key with an empty array before it looks for the element.
      if (!exists((await namespaceInfo(ctx, ns)).entry)) return [];
      throw new CommandError('ERR element not found in set');
    }
    dense = r.vector;
    sparse = r.sparseVector;
  }
  const results = await ctx.client.query(ns, {
    ...(dense ? { vector: dense } : {}),
    ...(sparse ? { sparseVector: sparse } : {}),
    ...common,
  });
  return exact && dense && !sparse ? rescore(results, dense, input.element !== undefined) : results;
}
