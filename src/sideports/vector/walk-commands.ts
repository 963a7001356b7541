// Commands that walk a set's elements: VRANDMEMBER, VRANGE, and the extensions VSCAN and VFETCH.
import type { VectorRecord } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, integerArg, positiveIntegerArg, SYNTAX_ERROR, text } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { elementName, nameBytes } from './element-names.js';
import { allIds, keyOf, type VectorContext } from './keyspace.js';
import { flag, readOptions, wrongArity, type OptionTable } from './options.js';
import { writeFlatElements, writeNames, writeRecord, type Fields } from './replies.js';

/** VRANGE sorts the whole namespace; past this many elements it refuses (VSCAN walks any size). */
export const VRANGE_LIMIT = 100_000;

/** A count as RedisModule_StringToLongLong reads it, or the command's own error. */
function countArg(b: Buffer, error: string): number {
  try {
    return integerArg(b);
  } catch {
    throw new CommandError(error);
  }
}

export async function vrandmember(ctx: VectorContext, c: Call): Promise<Reply> {
  const ns = keyOf(c);
  if (c.args.length > 3) throw wrongArity('VRANDMEMBER');
  if (c.args.length === 2) {
    const r = await ctx.client.random(ns);
    return (w) => w.bulk(r ? elementName(r.id) : null);
  }
  const count = countArg(c.args[2], 'ERR COUNT value is not an integer');
  if (count === 0) return (w) => w.arrayHeader(0);
  const n = Math.min(Math.abs(count), 1000);
  if (count < 0) {
    // Repeats allowed, as in Redis: one random draw per element.
    const draws = await Promise.all(Array.from({ length: n }, () => ctx.client.random(ns)));
    const ids = draws.filter((r): r is VectorRecord => r !== null).map((r) => elementName(r.id));
    return (w) => writeNames(w, ids);
  }
  // Distinct elements: the whole namespace when it is no larger than count, else a random sample of a scan.
  const { ids } = await allIds(ctx, ns, 10_000);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  const pick = ids.slice(0, n).map(elementName);
  return (w) => writeNames(w, pick);
}

type LexBound = { kind: 'min' } | { kind: 'max' } | { kind: 'incl' | 'excl'; value: Buffer };

/** `-`, `+`, `[elem` (inclusive) or `(elem` (exclusive, a bracket alone is not one), as VRANGE takes them. */
function lexBound(b: Buffer, which: 'start' | 'end'): LexBound {
  if (b.length === 1 && b[0] === 0x2d) return { kind: 'min' };
  if (b.length === 1 && b[0] === 0x2b) return { kind: 'max' };
  if (b.length > 1 && b[0] === 0x5b) return { kind: 'incl', value: b.subarray(1) };
  if (b.length > 1 && b[0] === 0x28) return { kind: 'excl', value: b.subarray(1) };
  throw new CommandError(`ERR invalid ${which} range format`);
}

function aboveLow(b: Buffer, lo: LexBound): boolean {
  if (lo.kind === 'min') return true;
  if (lo.kind === 'max') return false;
  const c = Buffer.compare(b, lo.value);
  return lo.kind === 'incl' ? c >= 0 : c > 0;
}

function belowHigh(b: Buffer, hi: LexBound): boolean {
  if (hi.kind === 'max') return true;
  if (hi.kind === 'min') return false;
  const c = Buffer.compare(b, hi.value);
  return hi.kind === 'incl' ? c <= 0 : c < 0;
}

export async function vrange(ctx: VectorContext, c: Call): Promise<Reply> {
  // Redis' order of checks: arity, COUNT, the bounds, then - and + in their places.
  if (c.args.length > 5) throw wrongArity('VRANGE');
  const count = c.args.length === 5 ? countArg(c.args[4], 'ERR invalid COUNT value') : -1;
  const lo = lexBound(c.args[2], 'start');
  const hi = lexBound(c.args[3], 'end');
  if (lo.kind === 'max' || hi.kind === 'min') throw new CommandError("ERR '-' can only be used as first argument, '+' only as second");
  const { ids, complete } = await allIds(ctx, keyOf(c), VRANGE_LIMIT);
  if (!complete)
    throw new CommandError(
      `ERR VRANGE sorts the whole namespace and it holds more than ${VRANGE_LIMIT} elements; walk it with VSCAN instead`,
    );
  const bytes = ids.map(nameBytes);
  bytes.sort(Buffer.compare);
  const picked = bytes.filter((b) => aboveLow(b, lo) && belowHigh(b, hi));
  const out = count < 0 ? picked : picked.slice(0, count);
  return (w) => writeNames(w, out);
}

interface VscanOptions {
  count: number;
  prefix?: string;
  f: Fields;
}

const VSCAN_OPTIONS: OptionTable<VscanOptions> = {
  COUNT: (s, cur) => (s.count = positiveIntegerArg(cur.value(), 'COUNT', 1000)),
  PREFIX: (s, cur) => (s.prefix = text(cur.value())),
  WITHATTRIBS: flag((s) => (s.f.attribs = true)),
  WITHDATA: flag((s) => (s.f.data = true)),
};

export async function vscan(ctx: VectorContext, c: Call): Promise<Reply> {
  const cursor = text(c.args[2]);
  if (!/^\d+$/.test(cursor)) throw new CommandError('ERR invalid cursor');
  const o = readOptions(new ArgCursor(c.args, 3), VSCAN_OPTIONS, 'vscan', {
    count: 10,
    f: { scores: false, attribs: false, data: false },
  });
  const page = await ctx.client.range(keyOf(c), {
    cursor,
    limit: o.count,
    prefix: o.prefix,
    includeMetadata: o.f.attribs,
    includeData: o.f.data,
  });
  return (w) => {
    w.arrayHeader(2);
    w.bulk(page.nextCursor === '' ? '0' : page.nextCursor);
    writeFlatElements(w, page.vectors, o.f);
  };
}

interface VfetchOptions {
  what?: { ids: string[] } | { prefix: string };
  include: { includeMetadata: boolean; includeVectors: boolean; includeData: boolean };
}

const VFETCH_OPTIONS: OptionTable<VfetchOptions> = {
  IDS: (s, cur) => {
    if (s.what) cur.unknown('vfetch');
    const n = positiveIntegerArg(cur.value(), 'IDS count', 1000);
    s.what = { ids: cur.values(n).map(text) };
  },
  PREFIX: (s, cur) => {
    if (s.what) cur.unknown('vfetch');
    s.what = { prefix: text(cur.value()) };
  },
  WITHATTRIBS: flag((s) => (s.include.includeMetadata = true)),
  WITHVECTORS: flag((s) => (s.include.includeVectors = true)),
  WITHDATA: flag((s) => (s.include.includeData = true)),
};

export async function vfetch(ctx: VectorContext, c: Call): Promise<Reply> {
  const { what, include } = readOptions(new ArgCursor(c.args, 2), VFETCH_OPTIONS, 'vfetch', {
    include: { includeMetadata: false, includeVectors: false, includeData: false },
  });
  if (!what) throw new CommandError(`${SYNTAX_ERROR}: VFETCH needs IDS count id … or PREFIX prefix`);
  const records = await ctx.client.fetch(keyOf(c), { ...what, ...include });
  return (w) => {
    w.arrayHeader(records.length);
    for (const r of records) writeRecord(w, r);
  };
}
