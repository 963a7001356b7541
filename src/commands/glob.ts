// Redis' glob patterns (CONFIG GET, COMMAND LIST FILTERBY PATTERN, KEYS-like filters) as regular expressions.

/** Redis' glob (util.c stringmatchlen): `*`, `?`, `[...]` classes with `^` and ranges, `\\` escapes. */
export function globToRegExp(glob: string, nocase = false): RegExp {
  const lit = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') re += '[\\s\\S]*';
    else if (ch === '?') re += '[\\s\\S]';
    else if (ch === '\\' && i + 1 < glob.length) re += lit(glob[++i]);
    else if (ch === '[') {
      let j = i + 1;
      let negate = false;
      if (glob[j] === '^') {
        negate = true;
        j++;
      }
      let cls = '';
      while (j < glob.length && glob[j] !== ']') {
        if (glob[j] === '\\' && j + 1 < glob.length) {
          cls += lit(glob[j + 1]);
          j += 2;
        } else if (glob[j + 1] === '-' && j + 2 < glob.length && glob[j + 2] !== ']') {
          const [a, b] = [glob[j], glob[j + 2]].sort();
          cls += `${lit(a)}-${lit(b)}`;
          j += 3;
        } else {
          cls += lit(glob[j]);
          j++;
        }
      }
      // An empty class matches nothing (or, negated, any character), as in stringmatchlen.
      re += cls === '' ? (negate ? '[\\s\\S]' : '(?!)') : `[${negate ? '^' : ''}${cls}]`;
      i = j; // at the closing ']' (or the end of an unterminated class)
    } else re += lit(ch);
  }
  return new RegExp(`^${re}$`, nocase ? 'i' : '');
}
