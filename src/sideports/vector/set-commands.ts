// Commands on a whole vector set (namespace): VCARD, VDIM, VINFO, VREMBY, and the extension VSERVICE.
import type { ReplyWriter } from '../../resp/reply-writer.js';
import { ArgCursor, CommandError, SYNTAX_ERROR, text } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { FilterExpression } from './filter-expr.js';
import { exists, keyOf, namespaceInfo, type VectorContext } from './keyspace.js';
import { attributesText, DEFAULT_M, linksOf, QUANT_KEY, quantOf } from './attributes.js';
import { projectionOf } from './projection.js';
import type { Quant } from './quantization.js';
import { writeMap } from './replies.js';

export async function vcard(ctx: VectorContext, c: Call): Promise<Reply> {
  const { entry } = await namespaceInfo(ctx, keyOf(c));
  return (w) => w.integer(entry?.vectorCount ?? 0);
}

export async function vdim(ctx: VectorContext, c: Call): Promise<Reply> {
  const { info, entry } = await namespaceInfo(ctx, keyOf(c));
  if (!exists(entry)) throw new CommandError('ERR key does not exist');
  const dim = info.denseIndex?.dimension ?? info.dimension;
  if (info.indexType === 'SPARSE' || !dim) throw new CommandError('ERR the index is sparse: its vectors have no fixed dimension');
  return (w) => w.integer(dim);
}

/**
 * VINFO with Redis 8's nine fields, in its order, keys as simple strings. What describes Redis' own
 * HNSW graph is given as Redis would have it for this set: its M, REDUCE's input dimension, the expected top level
 * of a graph of this size; the quantization elements were added with. attributes-count reads the namespace.
 */
export async function vinfo(ctx: VectorContext, c: Call): Promise<Reply> {
  const ns = keyOf(c);
  const { info, entry } = await namespaceInfo(ctx, ns);
  if (!exists(entry)) return (w) => w.nullArray();
  const { attributes, quant, proj, m } = await readSet(ctx, ns);
  const dim = info.indexType === 'SPARSE' ? 0 : (info.denseIndex?.dimension ?? info.dimension ?? 0);
  const size = entry.vectorCount;
  const fields: [string, number | string][] = [
    ['quant-type', quant],
    ['hnsw-m', m],
    ['vector-dim', dim],
    ['projection-input-dim', proj],
    ['size', size],
    // Levels are drawn with p = 1/4 in Redis' HNSW: the top level of n nodes is about log4(n).
    ['max-level', size > 1 ? Math.floor(Math.log(size) / Math.log(4)) : 0],
    ['attributes-count', attributes],
    ['vset-uid', 0],
    ['hnsw-max-node-uid', size],
  ];
  return (w) => {
    w.mapHeader(fields.length);
    for (const [k, v] of fields) {
      w.simple(k);
      if (typeof v === 'number') w.integer(v);
      else w.simple(v);
    }
  };
}

/**
 * How many elements have attributes (the service keeps no such count: the namespace is read), and the
 * set's quantization (recorded with its elements; f32 when another client wrote them).
 */
async function readSet(ctx: VectorContext, ns: string): Promise<{ attributes: number; quant: Quant; proj: number; m: number }> {
  let attributes = 0;
  let quant: Quant | undefined;
  let proj = 0;
  let m = DEFAULT_M;
  let cursor = '0';
  do {
    const page = await ctx.client.range(ns, { cursor, limit: 1000, includeMetadata: true });
    for (const r of page.vectors) {
      if (attributesText(r.metadata) !== null) attributes++;
      if (quant === undefined && r.metadata?.[QUANT_KEY] !== undefined) {
        quant = quantOf(r.metadata);
        proj = projectionOf(r.metadata);
        m = linksOf(r.metadata);
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== '');
  return { attributes, quant: quant ?? 'f32', proj, m };
}

/** VSERVICE (extension): the service's view of a namespace and its index; null for a missing key. */
export async function vservice(ctx: VectorContext, c: Call): Promise<Reply> {
  const { info, entry } = await namespaceInfo(ctx, keyOf(c));
  return (w) => {
    if (!exists(entry)) return void w.nullArray();
    const dim = info.denseIndex?.dimension ?? info.dimension ?? 0;
    const fields: [string, (w: ReplyWriter) => void][] = [
      ['vector-dim', (x) => x.integer(info.indexType === 'SPARSE' ? 0 : dim)],
      ['size', (x) => x.integer(entry.vectorCount)],
      ['pending-size', (x) => x.integer(entry.pendingVectorCount ?? 0)],
      ['index-type', (x) => x.bulk(info.indexType ?? 'DENSE')],
      ['similarity-function', (x) => x.bulk(info.denseIndex?.similarityFunction ?? info.similarityFunction ?? '')],
      ['dense-embedding-model', (x) => x.bulk(info.denseIndex?.embeddingModel ?? null)],
      ['sparse-embedding-model', (x) => x.bulk(info.sparseIndex?.embeddingModel ?? null)],
      ['index-vector-count', (x) => x.integer(info.vectorCount)],
      ['index-size', (x) => x.integer(info.indexSize ?? 0)],
    ];
    writeMap(w, fields);
  };
}

export async function vremby(ctx: VectorContext, c: Call): Promise<Reply> {
  const cur = new ArgCursor(c.args, 2);
  const opt = cur.option();
  let what: { prefix: string } | { filter: string } | FilterExpression;
  if (opt === 'PREFIX') what = { prefix: text(cur.value()) };
  else if (opt === 'WHERE') what = { filter: text(cur.value()) };
  else if (opt === 'FILTER') what = FilterExpression.compile(cur.value());
  else return cur.unknown('vremby');
  if (!cur.done) throw new CommandError(SYNTAX_ERROR);
  const deleted =
    what instanceof FilterExpression ? await removeMatching(ctx, keyOf(c), what) : (await ctx.client.delete(keyOf(c), what)).deleted;
  return (w) => w.integer(deleted);
}

/** VREMBY FILTER: the service cannot evaluate Redis' expressions, so the namespace is read here page by page. */
async function removeMatching(ctx: VectorContext, ns: string, filter: FilterExpression): Promise<number> {
  const ids: string[] = [];
  let cursor = '0';
  do {
    const page = await ctx.client.range(ns, { cursor, limit: 1000, includeMetadata: true });
    for (const r of page.vectors) if (filter.matchesText(attributesText(r.metadata))) ids.push(r.id);
    cursor = page.nextCursor;
  } while (cursor !== '');
  let deleted = 0;
  for (let i = 0; i < ids.length; i += 1000) deleted += (await ctx.client.delete(ns, { ids: ids.slice(i, i + 1000) })).deleted;
  return deleted;
}
