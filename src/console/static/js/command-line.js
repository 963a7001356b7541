// Splits a command line as redis-cli does: spaces separate arguments, "double quotes" take \n, \t,
// \\, \" and \xHH escapes (bytes), 'single quotes' take only \'. Returns Uint8Array arguments.
import { toUtf8 } from './bytes.js';

const ESCAPES = { n: 10, r: 13, t: 9, b: 8, a: 7, '"': 34, '\\': 92 };

export function splitCommandLine(line) {
  const args = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i])) i++;
    if (i >= line.length) break;
    const bytes = [];
    const push = (text) => bytes.push(...toUtf8(text));
    while (i < line.length && !/\s/.test(line[i])) {
      const quote = line[i];
      if (quote !== '"' && quote !== "'") {
        push(line[i++]);
        continue;
      }
      i++;
      for (;;) {
        if (i >= line.length) throw new Error(`unbalanced ${quote} quotes`);
        const c = line[i++];
        if (c === quote) break;
        if (c !== '\\' || i >= line.length) {
          push(c);
          continue;
        }
        const e = line[i++];
        if (quote === "'") push(e === "'" ? "'" : `\\${e}`);
        else if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(line.slice(i, i + 2))) {
          bytes.push(parseInt(line.slice(i, i + 2), 16));
          i += 2;
        } else if (e in ESCAPES) bytes.push(ESCAPES[e]);
        else push(e);
      }
      if (i < line.length && !/\s/.test(line[i])) throw new Error('closing quote must be followed by a space');
    }
    args.push(new Uint8Array(bytes));
  }
  return args;
}
