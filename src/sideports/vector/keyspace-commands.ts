// DEL, KEYS, EXISTS and TYPE on namespaces. A namespace without vectors is no key (Redis deletes a
// vector set with its last element; the service keeps the empty namespace).
import { text } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { exists, namespaceInfo, type VectorContext } from './keyspace.js';
import { writeNames } from './replies.js';

export async function del(ctx: VectorContext, c: Call): Promise<Reply> {
  let n = 0;
  const names = [...new Set(c.args.slice(1).map(text))];
  const { info } = await namespaceInfo(ctx, '');
  for (const ns of names) {
    if (!exists(info.namespaces?.[ns])) continue;
    if (ns === '') await ctx.client.reset('');
    else await ctx.client.deleteNamespace(ns);
    n++;
  }
  return (w) => w.integer(n);
}

export async function keys(ctx: VectorContext, c: Call): Promise<Reply> {
  const re = globToRegExp(text(c.args[1]));
  const { info } = await namespaceInfo(ctx, '');
  const names = Object.entries(info.namespaces ?? {})
    .filter(([n, entry]) => exists(entry) && re.test(n))
    .map(([n]) => n);
  return (w) => writeNames(w, names);
}

/** EXISTS key [key …]: how many of the keys exist (a key named twice counts twice, as in Redis). */
export async function existsCommand(ctx: VectorContext, c: Call): Promise<Reply> {
  const { info } = await namespaceInfo(ctx, '');
  const n = c.args.slice(1).filter((k) => exists(info.namespaces?.[text(k)])).length;
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
