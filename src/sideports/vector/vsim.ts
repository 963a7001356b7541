// VSIM: the elements most similar to a vector, an element or a text (/query, /query-data).
import type { ScoredRecord } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, floatArg, positiveIntegerArg, text, upper } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { translateFilter } from '../vector-filter.js';
import { readVectorInput, type VectorInput } from './input.js';
import { keyOf, toVectorError, type VectorContext } from './keyspace.js';
import { flag, ignored, readOptions, type OptionTable } from './options.js';
import { writeElements, type Fields } from './replies.js';

interface VsimOptions {
  f: Fields;
  count: number;
  epsilon?: number;
  filter?: string;
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

/** Reads a WHERE (service language) or FILTER (Redis language) argument into the service's filter. */
export function filterOption(opt: string, cur: ArgCursor): string {
  const expr = text(cur.value());
  return opt === 'WHERE' ? expr : translateFilter(expr);
}

const VSIM_OPTIONS: OptionTable<VsimOptions> = {
  WITHSCORES: flag((s) => (s.f.scores = true)),
  WITHATTRIBS: flag((s) => (s.f.attribs = true)),
  WITHDATA: flag((s) => (s.f.data = true)),
  COUNT: (s, cur) => (s.count = positiveIntegerArg(cur.value(), 'COUNT', 1000)),
  EPSILON: (s, cur) => {
    const epsilon = floatArg(cur.value(), 'EPSILON');
    if (epsilon <= 0 || epsilon >= 1)
      throw new CommandError('ERR EPSILON must be between 0 and 1 (elements with a similarity of at least 1 - EPSILON are returned)');
    s.epsilon = epsilon;
  },
  EF: (_s, cur, opt) => void positiveIntegerArg(cur.value(), opt, 1_000_000),
  'FILTER-EF': (_s, cur, opt) => void positiveIntegerArg(cur.value(), opt, 1_000_000),
  // Redis' own search tuning: no effect on the service.
  TRUTH: ignored,
  NOTHREAD: ignored,
  FILTER: (s, cur, opt) => setFilter(s, cur, opt),
  WHERE: (s, cur, opt) => setFilter(s, cur, opt),
  QUERYMODE: (s, cur) => (s.queryMode = choice(cur, ['HYBRID', 'DENSE', 'SPARSE'] as const, 'QUERYMODE')),
  FUSION: (s, cur) => (s.fusion = choice(cur, ['RRF', 'DBSF'] as const, 'FUSION')),
  WEIGHTING: (s, cur) => (s.weighting = choice(cur, ['IDF'] as const, 'WEIGHTING')),
};

function setFilter(s: VsimOptions, cur: ArgCursor, opt: string): void {
  if (s.filter !== undefined) throw new CommandError('ERR give one FILTER or WHERE, not both');
  s.filter = filterOption(opt, cur);
}

export async function vsim(ctx: VectorContext, c: Call): Promise<Reply> {
  const ns = keyOf(c);
  const cur = new ArgCursor(c.args, 2);
  const input = readVectorInput(cur, true);
  const o = readOptions(cur, VSIM_OPTIONS, 'vsim', { f: { scores: false, attribs: false, data: false }, count: 10 });
  if (o.queryMode && input.data === undefined)
    throw new CommandError('ERR QUERYMODE applies to text queries only (VSIM key DATA text QUERYMODE …)');
  let results: ScoredRecord[];
  try {
    results = await search(ctx, ns, input, o);
  } catch (err) {
    throw toVectorError(err);
  }
  if (o.epsilon !== undefined) results = results.filter((r) => r.score >= 1 - o.epsilon!);
  return (w) => writeElements(w, results, o.f);
}

/** The service's answer to the query: /query-data for a text, /query for a vector (ELE: the element's). */
async function search(ctx: VectorContext, ns: string, input: VectorInput, o: VsimOptions): Promise<ScoredRecord[]> {
  const common = {
    topK: o.count,
    includeMetadata: o.f.attribs,
    includeData: o.f.data,
    filter: o.filter,
    fusionAlgorithm: o.fusion,
    weightingStrategy: o.weighting,
  };
  if (input.data !== undefined) return ctx.client.queryData(ns, { data: input.data, ...common, queryMode: o.queryMode });
  let { dense, sparse } = input;
  if (input.element !== undefined) {
    const [r] = await ctx.client.fetch(ns, { ids: [input.element], includeVectors: true });
    if (!r) throw new CommandError('ERR element not found in set');
    dense = r.vector;
    sparse = r.sparseVector;
  }
  return ctx.client.query(ns, {
    ...(dense ? { vector: dense } : {}),
    ...(sparse ? { sparseVector: sparse } : {}),
    ...common,
  });
}
