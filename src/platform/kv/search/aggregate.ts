// SEARCH.AGGREGATE: metric operators ($avg $sum $min $max $count $cardinality $stats $extendedStats
// $percentiles) and bucket operators ($terms $range $histogram $dateHistogram $facet, with nested $aggs) over
// the documents a filter selects. The reply is a flat `[alias, result, …]` array; each result is a flat
// `[name, value, …]` array (`["buckets", [[…], …], …]` for bucket operators), the shape the SDK parses.
import type { Doc, Scalar } from './documents.js';
import { Double, SearchError, type ReplyValue } from './reply.js';
import { NUMERIC_TYPES, type FieldDef, type IndexDef } from './schema.js';
import { engineOrder } from './term-order.js';

type Spec = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const num = (n: number | null | undefined): ReplyValue => (n === null || n === undefined || !Number.isFinite(n) ? null : new Double(n));
/** A bucket key or bound: integers as integers, other numbers as doubles. */
const keyValue = (v: Scalar): ReplyValue =>
  typeof v === 'number' ? (Number.isInteger(v) ? v : new Double(v)) : typeof v === 'boolean' ? (v ? 1 : 0) : v;

export function parseAggregations(text: string): Spec {
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch {
    throw new SearchError('ERR invalid aggregations: not valid JSON');
  }
  if (!isObject(spec) || Object.keys(spec).length === 0)
    throw new SearchError('ERR invalid aggregations: expected a non-empty JSON object');
  return spec;
}

export class Aggregator {
  constructor(private readonly def: IndexDef) {}

  run(spec: Spec, docs: Doc[], nested = false): ReplyValue[] {
    const out: ReplyValue[] = [];
    for (const [alias, body] of Object.entries(spec)) {
      if (!isObject(body)) throw new SearchError(`ERR aggregation '${alias}' must be an object`);
      const ops = Object.keys(body).filter((k) => k !== '$aggs');
      if (ops.length !== 1) throw new SearchError(`ERR aggregation '${alias}' needs exactly one operator`);
      const op = ops[0];
      const args = body[op];
      if (!isObject(args)) throw new SearchError(`ERR ${op} of '${alias}' expects an object`);
      const sub = body.$aggs;
      if (sub !== undefined && (!isObject(sub) || !BUCKET_OPS.includes(op) || op === '$facet')) {
        throw new SearchError(`ERR $aggs is only allowed with $terms, $range, $histogram and $dateHistogram ('${alias}')`);
      }
      if (op === '$facet' && nested) throw new SearchError('ERR $facet cannot be a sub-aggregation');
      out.push(alias, this.operator(op, args, docs, sub as Spec | undefined));
    }
    return out;
  }

  private field(args: Spec, op: string, types: readonly string[], fast = true): FieldDef {
    const name = args.field;
    if (typeof name !== 'string') throw new SearchError(`ERR ${op} needs a 'field'`);
    const field = this.def.fields.find((f) => f.name === name);
    if (!field) throw new SearchError(`ERR unknown field '${name}' in ${op}`);
    if (!types.includes(field.type)) throw new SearchError(`ERR ${op} is not supported on ${field.type} field '${name}'`);
    // KEYWORD values are kept whole for every document: the service aggregates them without FAST
    // (its ioredis adapter's tests run $terms on a plain s.keyword()).
    if (fast && !field.fast && field.type !== 'KEYWORD') throw new SearchError(`ERR ${op} needs a FAST field; '${name}' is not FAST`);
    return field;
  }

  private operator(op: string, args: Spec, docs: Doc[], sub: Spec | undefined): ReplyValue {
    switch (op) {
      case '$avg':
      case '$sum':
      case '$min':
      case '$max':
      case '$count':
      case '$cardinality':
      case '$stats':
      case '$extendedStats':
      case '$percentiles':
        return this.metric(op, args, docs);
      case '$terms':
        return this.terms(args, docs, sub);
      case '$range':
        return this.range(args, docs, sub);
      case '$histogram':
        return this.histogram(args, docs, sub, false);
      case '$dateHistogram':
        return this.histogram(args, docs, sub, true);
      case '$facet':
        return this.facet(args, docs);
      default:
        throw new SearchError(`ERR unknown aggregation operator '${op}'`);
    }
  }

  private values(field: FieldDef, docs: Doc[], missing: unknown): number[] {
    const out: number[] = [];
    for (const d of docs) {
      const vs = d.scalars.get(field.name);
      if (vs) for (const v of vs) out.push(typeof v === 'boolean' ? (v ? 1 : 0) : Number(v));
      else if (typeof missing === 'number') out.push(missing);
    }
    return out;
  }

  private metric(op: string, args: Spec, docs: Doc[]): ReplyValue {
    const types = op === '$cardinality' || op === '$count' ? [...NUMERIC_TYPES, 'DATE', 'BOOL', 'KEYWORD'] : [...NUMERIC_TYPES, 'DATE'];
    const field = this.field(args, op, types);
    if (op === '$cardinality' || op === '$count') {
      const all = docs.flatMap((d) => d.scalars.get(field.name) ?? (args.missing !== undefined ? [args.missing as Scalar] : []));
      return ['value', op === '$count' ? all.length : new Set(all.map(String)).size];
    }
    const vs = this.values(field, docs, args.missing);
    const sum = vs.reduce((a, b) => a + b, 0);
    const min = vs.length ? Math.min(...vs) : null;
    const max = vs.length ? Math.max(...vs) : null;
    const avg = vs.length ? sum / vs.length : null;
    if (op === '$avg') return ['value', num(avg)];
    if (op === '$sum') return ['value', num(sum)];
    if (op === '$min') return ['value', num(min)];
    if (op === '$max') return ['value', num(max)];
    const stats: ReplyValue[] = ['count', vs.length, 'min', num(min), 'max', num(max), 'sum', num(sum), 'avg', num(avg)];
    if (op === '$stats') return stats;
    if (op === '$extendedStats') return [...stats, ...extendedStats(vs, avg, typeof args.sigma === 'number' ? args.sigma : 2)];
    return percentiles(vs, args);
  }

  private terms(args: Spec, docs: Doc[], sub: Spec | undefined): ReplyValue {
    const field = this.field(args, '$terms', [...NUMERIC_TYPES, 'DATE', 'BOOL', 'KEYWORD']);
    const size = typeof args.size === 'number' ? args.size : 10;
    const minDocCount = typeof args.minDocCount === 'number' ? args.minDocCount : 1;
    const groups = new Map<Scalar, Doc[]>();
    for (const d of docs) {
      const vs = d.scalars.get(field.name) ?? (args.missing !== undefined ? [args.missing as Scalar] : []);
      for (const v of new Set(vs)) groups.set(v, [...(groups.get(v) ?? []), d]);
    }
    let entries = [...groups].filter(([, ds]) => ds.length >= minDocCount);
    entries = entries.filter(([k]) => included(k, args.include, args.exclude));
    const order = isObject(args.order) ? Object.entries(args.order)[0] : ['count', 'desc'];
    const [target, dir] = [String(order[0]), String(order[1]).toLowerCase() === 'asc' ? 1 : -1];
    // Ascending keys, then the engine's order for ties of count (term-order.ts), then a stable sort.
    entries.sort(([ka], [kb]) => (ka < kb ? -1 : ka > kb ? 1 : 0));
    const tieOrder =
      target === 'key'
        ? undefined
        : engineOrder(
            field.type,
            entries.map(([k]) => k),
          );
    if (tieOrder) entries = tieOrder.map((k) => [k, groups.get(k)!] as [Scalar, Doc[]]);
    entries.sort(([ka, da], [kb, db]) => {
      if (target === 'key') return (ka < kb ? -1 : ka > kb ? 1 : 0) * dir;
      return (da.length - db.length) * dir;
    });
    const kept = entries.slice(0, size);
    const other = entries.slice(size).reduce((n, [, ds]) => n + ds.length, 0);
    const buckets = kept.map(([k, ds]) => ['key', keyValue(k), 'docCount', ds.length, ...(sub ? this.run(sub, ds, true) : [])]);
    return ['buckets', buckets, 'sumOtherDocCount', other, 'docCountErrorUpperBound', 0];
  }

  private range(args: Spec, docs: Doc[], sub: Spec | undefined): ReplyValue {
    const field = this.field(args, '$range', [...NUMERIC_TYPES, 'DATE']);
    if (!Array.isArray(args.ranges) || args.ranges.length === 0) throw new SearchError("ERR $range needs a non-empty 'ranges' array");
    const buckets: ReplyValue[] = [];
    for (const r of args.ranges as unknown[]) {
      if (!isObject(r)) throw new SearchError('ERR each $range range must be an object');
      const from = typeof r.from === 'number' ? r.from : undefined;
      const to = typeof r.to === 'number' ? r.to : undefined;
      const inside = docs.filter((d) =>
        (d.scalars.get(field.name) ?? []).some((v) => (from === undefined || Number(v) >= from) && (to === undefined || Number(v) < to)),
      );
      const key = typeof r.key === 'string' ? r.key : `${from === undefined ? '*' : from}-${to === undefined ? '*' : to}`;
      const bucket: ReplyValue[] = ['key', key, 'docCount', inside.length];
      if (from !== undefined) bucket.push('from', keyValue(from));
      if (to !== undefined) bucket.push('to', keyValue(to));
      buckets.push(sub ? [...bucket, ...this.run(sub, inside, true)] : bucket);
    }
    return ['buckets', args.keyed === true ? keyedBuckets(buckets) : buckets];
  }

  private histogram(args: Spec, docs: Doc[], sub: Spec | undefined, dates: boolean): ReplyValue {
    const op = dates ? '$dateHistogram' : '$histogram';
    const field = this.field(args, op, dates ? ['DATE'] : [...NUMERIC_TYPES, 'DATE']);
    const interval = dates ? durationMs(args.fixedInterval) : args.interval;
    if (typeof interval !== 'number' || !(interval > 0))
      throw new SearchError(`ERR ${op} needs a positive ${dates ? "'fixedInterval'" : "'interval'"}`);
    const offset = dates
      ? args.offset === undefined
        ? 0
        : durationMs(args.offset, true)
      : typeof args.offset === 'number'
        ? args.offset
        : 0;
    const keyOf = (v: number) => Math.floor((v - offset) / interval) * interval + offset;
    const hard = bounds(args.hardBounds, op, 'hardBounds');
    const groups = new Map<number, Doc[]>();
    for (const d of docs) {
      for (const v of new Set((d.scalars.get(field.name) ?? []).map(Number))) {
        if (hard && (v < hard.min || v > hard.max)) continue;
        const k = keyOf(v);
        groups.set(k, [...(groups.get(k) ?? []), d]);
      }
    }
    const ext = bounds(args.extendedBounds, op, 'extendedBounds');
    const keys = [...groups.keys()];
    if (ext) keys.push(keyOf(ext.min), keyOf(ext.max));
    const minDocCount = typeof args.minDocCount === 'number' ? args.minDocCount : 0;
    const buckets: ReplyValue[] = [];
    if (keys.length > 0) {
      let lo = Math.min(...keys);
      let hi = Math.max(...keys);
      if (hard) [lo, hi] = [Math.max(lo, keyOf(hard.min)), Math.min(hi, keyOf(hard.max))];
      for (let k = lo; k <= hi; k += interval) {
        const ds = groups.get(k) ?? [];
        if (ds.length < minDocCount) continue;
        const bucket: ReplyValue[] = ['key', keyValue(k), 'docCount', ds.length];
        if (dates) bucket.push('keyAsString', new Date(k).toISOString().replace('.000Z', 'Z'));
        buckets.push(sub ? [...bucket, ...this.run(sub, ds, true)] : bucket);
      }
    }
    return ['buckets', args.keyed === true ? keyedBuckets(buckets) : buckets];
  }

  private facet(args: Spec, docs: Doc[]): ReplyValue {
    const field = this.field(args, '$facet', ['FACET'], false);
    const path = args.path;
    if (typeof path !== 'string' || !path.startsWith('/')) throw new SearchError("ERR $facet needs a 'path' starting with '/'");
    const depth = typeof args.depth === 'number' ? args.depth : 1;
    if (!Number.isInteger(depth) || depth < 1) throw new SearchError('ERR $facet depth must be an integer of at least 1');
    const opts = {
      size: typeof args.size === 'number' ? args.size : 10,
      minDocCount: typeof args.minDocCount === 'number' ? args.minDocCount : 1,
      order: isObject(args.order) ? Object.entries(args.order)[0].map(String) : ['count', 'desc'],
    };
    const root = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const level = facetLevel(field, docs, root, depth, opts);
    return ['path', path, 'sumOtherDocCount', level.other, 'children', level.children];
  }
}

const BUCKET_OPS = ['$terms', '$range', '$histogram', '$dateHistogram', '$facet'];

function included(key: Scalar, include: unknown, exclude: unknown): boolean {
  const test = (rule: unknown): boolean =>
    Array.isArray(rule)
      ? rule.map(String).includes(String(key))
      : typeof rule === 'string'
        ? new RegExp(`^(?:${rule})$`).test(String(key))
        : false;
  if (include !== undefined && !test(include)) return false;
  return exclude === undefined || !test(exclude);
}

function keyedBuckets(buckets: ReplyValue[]): ReplyValue[] {
  return buckets.flatMap((b) => [(b as ReplyValue[])[1], b]);
}

function bounds(v: unknown, op: string, name: string): { min: number; max: number } | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v) || typeof v.min !== 'number' || typeof v.max !== 'number')
    throw new SearchError(`ERR ${op} ${name} needs numeric 'min' and 'max'`);
  return { min: v.min, max: v.max };
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function durationMs(v: unknown, signed = false): number {
  const m = typeof v === 'string' ? /^(-?\d+)(ms|s|m|h|d)$/.exec(v) : null;
  if (!m || (!signed && m[1].startsWith('-')))
    throw new SearchError(`ERR invalid interval '${String(v)}': use a number and ms, s, m, h or d ("1d")`);
  return Number(m[1]) * UNITS[m[2]];
}

function extendedStats(vs: number[], avg: number | null, sigma: number): ReplyValue[] {
  const n = vs.length;
  const sumSq = vs.reduce((a, b) => a + b * b, 0);
  const varPop = n && avg !== null ? sumSq / n - avg * avg : null;
  const varSamp = n > 1 && varPop !== null ? (varPop * n) / (n - 1) : null;
  const sdPop = varPop === null ? null : Math.sqrt(Math.max(0, varPop));
  const sdSamp = varSamp === null ? null : Math.sqrt(Math.max(0, varSamp));
  const bound = (sd: number | null, s: number) => (avg === null || sd === null ? null : avg + s * sigma * sd);
  return [
    'sumOfSquares',
    num(n ? sumSq : null),
    'variance',
    num(varPop),
    'variancePopulation',
    num(varPop),
    'varianceSampling',
    num(varSamp),
    'stdDeviation',
    num(sdPop),
    'stdDeviationPopulation',
    num(sdPop),
    'stdDeviationSampling',
    num(sdSamp),
    'stdDeviationBounds',
    [
      'upper',
      num(bound(sdPop, 1)),
      'lower',
      num(bound(sdPop, -1)),
      'upperPopulation',
      num(bound(sdPop, 1)),
      'lowerPopulation',
      num(bound(sdPop, -1)),
      'upperSampling',
      num(bound(sdSamp, 1)),
      'lowerSampling',
      num(bound(sdSamp, -1)),
    ],
  ];
}

function percentiles(vs: number[], args: Spec): ReplyValue {
  const percents = Array.isArray(args.percents) ? (args.percents as unknown[]) : [1, 5, 25, 50, 75, 95, 99];
  if (!percents.every((p) => typeof p === 'number' && p >= 0 && p <= 100))
    throw new SearchError('ERR $percentiles percents must be numbers from 0 to 100');
  const sorted = [...vs].sort((a, b) => a - b);
  const at = (p: number): number | null => {
    if (sorted.length === 0) return null;
    const rank = (p / 100) * (sorted.length - 1);
    const lo = Math.floor(rank);
    const hi = Math.ceil(rank);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
  };
  const label = (p: number) => (Number.isInteger(p) ? p.toFixed(1) : String(p));
  if (args.keyed === false) return ['values', (percents as number[]).map((p) => ['key', keyValue(p), 'value', num(at(p))])];
  return ['values', (percents as number[]).flatMap((p) => [label(p), num(at(p))])];
}

interface FacetOpts {
  size: number;
  minDocCount: number;
  order: string[];
}

function facetLevel(field: FieldDef, docs: Doc[], path: string, depth: number, opts: FacetOpts): { children: ReplyValue[]; other: number } {
  const base = path === '/' ? '/' : `${path}/`;
  const groups = new Map<string, Doc[]>();
  for (const d of docs) {
    const children = new Set<string>();
    for (const v of d.scalars.get(field.name) ?? []) {
      const s = String(v);
      if (!s.startsWith(base) || s.length === base.length) continue;
      children.add(base + s.slice(base.length).split('/')[0]);
    }
    for (const c of children) groups.set(c, [...(groups.get(c) ?? []), d]);
  }
  const [target, dir] = [opts.order[0], opts.order[1]?.toLowerCase() === 'asc' ? 1 : -1];
  const entries = [...groups].filter(([, ds]) => ds.length >= opts.minDocCount);
  entries.sort(([pa, da], [pb, db]) =>
    target === 'path' ? (pa < pb ? -1 : 1) * dir : (da.length - db.length) * dir || (pa < pb ? -1 : 1),
  );
  const kept = entries.slice(0, opts.size);
  const other = entries.slice(opts.size).reduce((n, [, ds]) => n + ds.length, 0);
  const children = kept.map(([p, ds]) => {
    const entry: ReplyValue[] = ['docCount', ds.length, 'path', p];
    const below = depth > 1 ? facetLevel(field, ds, p, depth - 1, opts) : undefined;
    entry.push('sumOtherDocCount', below?.other ?? 0);
    if (below && below.children.length > 0) entry.push('children', below.children);
    return entry;
  });
  return { children, other };
}
