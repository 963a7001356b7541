// Commands on a whole vector set (namespace): VCARD, VDIM, VINFO, VREMBY.
import type { ReplyWriter } from '../../resp/reply-writer.js';
import { ArgCursor, CommandError, SYNTAX_ERROR, text } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { keyOf, namespaceInfo, type VectorContext } from './keyspace.js';
import { writeMap } from './replies.js';
import { filterOption } from './vsim.js';

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
  let what: { prefix: string } | { filter: string };
  if (opt === 'PREFIX') what = { prefix: text(cur.value()) };
  else if (opt === 'WHERE' || opt === 'FILTER') what = { filter: filterOption(opt, cur) };
  else return cur.unknown('vremby');
  if (!cur.done) throw new CommandError(SYNTAX_ERROR);
  const { deleted } = await ctx.client.delete(keyOf(c), what);
  return (w) => w.integer(deleted);
}
