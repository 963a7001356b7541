// DEL and KEYS on namespaces.
import { text } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { namespaceInfo, type VectorContext } from './keyspace.js';
import { writeNames } from './replies.js';

export async function del(ctx: VectorContext, c: Call): Promise<Reply> {
  let n = 0;
  const names = [...new Set(c.args.slice(1).map(text))];
  const { info } = await namespaceInfo(ctx, '');
  for (const ns of names) {
    const entry = info.namespaces?.[ns];
    if (!entry || (ns === '' && entry.vectorCount === 0)) continue;
    if (ns === '') await ctx.client.reset('');
    else await ctx.client.deleteNamespace(ns);
    n++;
  }
  return (w) => w.integer(n);
}

export async function keys(ctx: VectorContext, c: Call): Promise<Reply> {
  const re = globToRegExp(text(c.args[1]));
  const names = (await ctx.client.listNamespaces()).filter((n) => re.test(n));
  return (w) => writeNames(w, names);
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
