// DEL, KEYS, EXISTS and TYPE on namespaces. A namespace without vectors is no key (Redis deletes a
// vector set with its last element; the service keeps the empty namespace).
import { text } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { exists, namespaceInfo, type VectorContext } from './keyspace.js';
import { writeNames } from './replies.js';

/** DEL: each key is removed from every index that has it (one per dimension; normally one). */
export async function del(ctx: VectorContext, c: Call): Promise<Reply> {
  let n = 0;
  const names = [...new Set(c.args.slice(1).map(text))];
  const infos = await ctx.router.infos();
  for (const ns of names) {
    const holders = infos.map((info, i) => (exists(info.namespaces?.[ns]) ? i : -1)).filter((i) => i >= 0);
    if (holders.length === 0) continue;
    ctx.setQuants.forget(ns);
    ctx.router.forget(ns);
    for (const i of holders) {
      const client = ctx.router.clients[i];
      if (ns === '') await client.reset('');
      else await client.deleteNamespace(ns);
    }
    n++;
  }
  return (w) => w.integer(n);
}

/** The keys of all indexes (namespaces with vectors). */
async function allKeys(ctx: VectorContext): Promise<Set<string>> {
  const names = new Set<string>();
  for (const info of await ctx.router.infos())
    for (const [n, entry] of Object.entries(info.namespaces ?? {})) if (exists(entry)) names.add(n);
  return names;
}

export async function keys(ctx: VectorContext, c: Call): Promise<Reply> {
  const re = globToRegExp(text(c.args[1]));
  const names = [...(await allKeys(ctx))].filter((n) => re.test(n));
  return (w) => writeNames(w, names);
}

/** EXISTS key [key …]: how many of the keys exist (a key named twice counts twice, as in Redis). */
export async function existsCommand(ctx: VectorContext, c: Call): Promise<Reply> {
  const names = await allKeys(ctx);
  const n = c.args.slice(1).filter((k) => names.has(text(k))).length;
  return (w) => w.integer(n);
}

/** TYPE key: `vectorset` (Redis 8's name for the type) or `none`. */
export async function type(ctx: VectorContext, c: Call): Promise<Reply> {
  const { entry } = await namespaceInfo(ctx, text(c.args[1]));
  return (w) => w.simple(exists(entry) ? 'vectorset' : 'none');
}

/** A Redis glob pattern (`*`, `?`, `[…]`, `\x`) as an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob
          .slice(i + 1, end)
          .replace(/^\^/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (ch === '\\' && i + 1 < glob.length) re += `\\${glob[++i]}`;
    else re += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}
