// Comparison modes of the RESP3 tests: the modes of differential-compare.ts (same names, same intent),
// for replies that may be RESP3 (maps, sets, doubles, verbatim strings, nulls, pushes) as well as RESP2.
import { clientInfoText, infoLines, type CompareMode } from './differential-compare.js';

export { printable } from './differential-compare.js';

/** A decoded RESP2/RESP3 reply. Maps and attributes keep their items flat (key, value, key, value…). */
export type Resp3 =
  | { t: '+' | '-' | ':' | ',' | '#' | '('; s: string }
  | { t: '_' }
  | { t: '$' | '='; b: Buffer | null }
  | { t: '*' | '~' | '>' | '%' | '|'; items: Resp3[] | null };

export function parse3(buf: Buffer): Resp3 {
  const [value, end] = parseAt(buf, 0);
  if (end !== buf.length) throw new Error(`trailing bytes after a reply: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`);
  return value;
}

function parseAt(buf: Buffer, pos: number): [Resp3, number] {
  const eol = buf.indexOf('\r\n', pos, 'latin1');
  if (eol < 0) throw new Error('incomplete reply');
  const line = buf.toString('latin1', pos + 1, eol);
  const type = String.fromCharCode(buf[pos]);
  switch (type) {
    case '+':
    case '-':
    case ':':
    case ',':
    case '#':
    case '(':
      return [{ t: type, s: line }, eol + 2];
    case '_':
      return [{ t: '_' }, eol + 2];
    case '$':
    case '=': {
      const len = Number(line);
      if (len < 0) return [{ t: type, b: null }, eol + 2];
      return [{ t: type, b: buf.subarray(eol + 2, eol + 2 + len) }, eol + 2 + len + 2];
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const n = Number(line);
      if (n < 0) return [{ t: type, items: null }, eol + 2];
      const count = type === '%' || type === '|' ? 2 * n : n;
      const items: Resp3[] = [];
      let p = eol + 2;
      for (let i = 0; i < count; i++) {
        const [item, next] = parseAt(buf, p);
        items.push(item);
        p = next;
      }
      return [{ t: type, items }, p];
    }
    default:
      throw new Error(`not a RESP reply: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`);
  }
}

export function render3(r: Resp3): string {
  switch (r.t) {
    case '_':
      return '_\r\n';
    case '$':
    case '=':
      return r.b === null ? `${r.t}-1\r\n` : `${r.t}${r.b.length}\r\n${r.b.toString('latin1')}\r\n`;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|':
      if (r.items === null) return `${r.t}-1\r\n`;
      return `${r.t}${r.t === '%' || r.t === '|' ? r.items.length / 2 : r.items.length}\r\n${r.items.map(render3).join('')}`;
    default:
      return `${r.t}${r.s}\r\n`;
  }
}

const isAggregate = (r: Resp3): r is Extract<Resp3, { items: Resp3[] | null }> => 'items' in r;
const isMap = (r: Resp3) => r.t === '%' || r.t === '|';
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Items of an aggregate as sortable units: map entries as [key, value] pairs. */
function units(r: Extract<Resp3, { items: Resp3[] | null }>): Resp3[][] {
  const items = r.items ?? [];
  if (!isMap(r)) return items.map((i) => [i]);
  const out: Resp3[][] = [];
  for (let i = 0; i < items.length; i += 2) out.push([items[i], items[i + 1]]);
  return out;
}

function sorted(r: Resp3, deep = false): Resp3 {
  if (!isAggregate(r) || r.items === null) return r;
  const us = units(r).map((u) => (deep ? u.map((x) => sorted(x, true)) : u));
  us.sort((a, b) => cmp(a.map(render3).join(''), b.map(render3).join('')));
  return { t: r.t, items: us.flat() };
}

function mapLeaves(r: Resp3, f: (leaf: Resp3) => Resp3): Resp3 {
  if (isAggregate(r) && r.items) return { t: r.t, items: r.items.map((i) => mapLeaves(i, f)) };
  return f(r);
}

const unlessError = (f: (r: Resp3) => Resp3) => (r: Resp3) => (r.t === '-' ? r : f(r));

function textOf(r: Resp3): { text: string; rebuild: (s: string) => Resp3 } | undefined {
  if ((r.t === '$' || r.t === '=') && r.b !== null) {
    const raw = r.b.toString('latin1');
    const prefix = r.t === '=' ? raw.slice(0, 4) : '';
    return { text: raw.slice(prefix.length), rebuild: (s) => ({ t: r.t, b: Buffer.from(prefix + s, 'latin1') }) };
  }
  return undefined;
}

export const normalizers3: Record<CompareMode, (r: Resp3) => Resp3> = {
  exact: (r) => r,
  unordered: unlessError((r) => sorted(r)),
  unorderedScan: unlessError((r) => {
    if (!isAggregate(r) || !r.items || r.items.length !== 2) return r;
    return { t: r.t, items: [r.items[0], sorted(r.items[1])] };
  }),
  deepUnordered: unlessError((r) => sorted(r, true)),
  unorderedPairs: unlessError((r) => {
    if (!isAggregate(r) || !r.items) return r;
    if (isMap(r)) return sorted(r);
    const pairs: Resp3[] = [];
    for (let i = 0; i < r.items.length; i += 2) pairs.push({ t: '*', items: r.items.slice(i, i + 2) });
    return sorted({ t: r.t, items: pairs });
  }),
  functionList: unlessError((r) => {
    if (!isAggregate(r) || !r.items) return r;
    const libraries = r.items.map((lib) => {
      if (!isAggregate(lib) || !lib.items) return lib;
      const fields = [...lib.items];
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const key = fields[i];
        if ('b' in key && key.b?.toString() === 'functions') fields[i + 1] = sorted(fields[i + 1]);
      }
      return { t: lib.t, items: fields } as Resp3;
    });
    return sorted({ t: r.t, items: libraries });
  }),
  maskIntegers: unlessError((r) => mapLeaves(r, (leaf) => (leaf.t === ':' ? { t: ':', s: '#' } : leaf))),
  shape: unlessError((r) =>
    mapLeaves(r, (leaf) => {
      if (leaf.t === ':' || leaf.t === ',') return { t: leaf.t, s: '#' };
      if ((leaf.t === '$' || leaf.t === '=') && leaf.b !== null) return { t: leaf.t, b: Buffer.from('?') };
      return leaf;
    }),
  ),
  clientInfo: unlessError((r) => {
    const t = textOf(r);
    return t ? t.rebuild(clientInfoText(t.text)) : r;
  }),
  clientList: unlessError((r) => {
    const t = textOf(r);
    if (!t) return r;
    const own = t.text.split('\n').filter((line) => line.includes(' cmd=client|list '));
    return t.rebuild(clientInfoText(own.map((l) => `${l}\n`).join('')));
  }),
  info: unlessError((r) => {
    const t = textOf(r);
    if (!t) return r;
    const lines = infoLines(t.text);
    // The length of a verbatim/bulk header follows the text, so compare the text only.
    return { t: r.t === '=' ? '=' : '$', b: Buffer.from(lines.join('\n'), 'latin1') };
  }),
};

/** The top-level type only, and for a map its keys: for replies whose content is the server's own (MEMORY STATS, SLOWLOG GET). */
function topType(r: Resp3): string {
  if (r.t === '-') return render3(r);
  if ((r.t === '%' || r.t === '|') && r.items) {
    const keys = r.items.filter((_, i) => i % 2 === 0).map((k) => ('b' in k && k.b ? k.b.toString('latin1') : render3(k)));
    return `${r.t}[${keys.join(',')}]`;
  }
  return r.t;
}

/** The string two replies are compared by under a mode (raw latin1 for `exact`). */
export function comparable3(reply: Buffer, mode: CompareMode | 'topType'): string {
  if (mode === 'exact') return reply.toString('latin1');
  if (mode === 'topType') return topType(parse3(reply));
  return render3(normalizers3[mode](parse3(reply)));
}
