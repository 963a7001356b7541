// Commands on a whole vector set (namespace): VCARD, VDIM, VINFO, VREMBY.
import type { ReplyWriter } from '../../resp/reply-writer.js';
import { ArgCursor, CommandError, SYNTAX_ERROR, text } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { FilterExpression } from './filter-expr.js';
import { keyOf, namespaceInfo, type VectorContext } from './keyspace.js';
import { attributesText } from './attributes.js';
import { writeMap } from './replies.js';

export async function vcard(ctx: VectorContext, c: Call): Promise<Reply> {
  const { entry } = await namespaceInfo(ctx, keyOf(c));
  return (w) => w.integer(entry?.vectorCount ?? 0);
}

export async function vdim(ctx: VectorContext, c: Call): Promise<Reply> {
  const { info, entry } = await namespaceInfo(ctx, keyOf(c));
  if (!entry || entry.vectorCount === 0) throw new CommandError('ERR key does not exist');
  const dim = info.denseIndex?.dimension ?? info.dimension;
  if (info.indexType === 'SPARSE' || !dim) throw new CommandError('ERR the index is sparse: its vectors have no fixed dimension');
  return (w) => w.integer(dim);
}

export async function vinfo(ctx: VectorContext, c: Call): Promise<Reply> {
  const { info, entry } = await namespaceInfo(ctx, keyOf(c));
  return (w) => {
    if (!entry) return void w.nullBulk();
    const dim = info.denseIndex?.dimension ?? info.dimension ?? 0;
    const fields: [string, (w: ReplyWriter) => void][] = [
      ['quant-type', (x) => x.simple('f32')],
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
