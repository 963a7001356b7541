// FILTER expressions of Redis 8 vector sets (`.year > 1950 and .genre == "drama"`) translated into the
// vector service's SQL-like filter language (`year > 1950 AND genre = 'drama'`). Only the part of the
// Redis language that the service can evaluate is accepted: comparisons of a selector with a literal,
// `in` lists, `and`/`or`/`&&`/`||`, parentheses. Arithmetic and `not` have no counterpart and are
// refused with a pointer to WHERE, which takes the service's own language verbatim.
import { CommandError } from './args.js';

type Token =
  { t: 'sel'; v: string } | { t: 'num'; v: string } | { t: 'str'; v: string } | { t: 'bool'; v: boolean } | { t: 'op'; v: string };

const UNSUPPORTED = "use WHERE with the service's filter language instead (e.g. WHERE \"genre = 'drama' AND year > 1950\")";

function fail(problem: string): never {
  throw new CommandError(`ERR FILTER expression: ${problem}; ${UNSUPPORTED}`);
}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '.' && /[A-Za-z_]/.test(src[i + 1] ?? '')) {
      const m = /^\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(src.slice(i))!;
      out.push({ t: 'sel', v: m[0].slice(1) });
      i += m[0].length;
    } else if (/[0-9]/.test(c) || (c === '-' && /[0-9.]/.test(src[i + 1] ?? '') && !isOperand(out[out.length - 1]))) {
      const m = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(src.slice(i));
      if (!m) fail(`bad number at ${i}`);
      out.push({ t: 'num', v: m[0] });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let v = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) j++;
        v += src[j++];
      }
      if (j >= src.length) fail('unterminated string');
      out.push({ t: 'str', v });
      i = j + 1;
    } else {
      const m = /^(==|!=|>=|<=|&&|\|\||\*\*|[<>()[\],!+\-*/%])/.exec(src.slice(i)) ?? /^[A-Za-z_]+/.exec(src.slice(i));
      if (!m) fail(`unexpected character '${c}' at ${i}`);
      const w = m[0].toLowerCase();
      if (w === 'true' || w === 'false') out.push({ t: 'bool', v: w === 'true' });
      else out.push({ t: 'op', v: w });
      i += m[0].length;
    }
  }
  return out;
}

function isOperand(t: Token | undefined): boolean {
  return t !== undefined && (t.t !== 'op' || t.v === ')' || t.v === ']');
}

function literal(t: Token): string {
  if (t.t === 'num') return t.v;
  if (t.t === 'bool') return t.v ? 'true' : 'false';
  if (t.t === 'str') return `'${t.v.replace(/'/g, "\\'")}'`;
  return fail(`expected a value, got '${t.v}'`);
}

const FLIP: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '==': '==', '!=': '!=' };
const SQL: Record<string, string> = { '==': '=', '!=': '!=', '<': '<', '>': '>', '<=': '<=', '>=': '>=' };

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}

  parse(): string {
    if (this.toks.length === 0) fail('empty expression');
    const s = this.or();
    if (this.i < this.toks.length) fail(`unexpected '${tokText(this.toks[this.i])}'`);
    return s;
  }

  private peekOp(...ops: string[]): boolean {
    const t = this.toks[this.i];
    return t !== undefined && t.t === 'op' && ops.includes(t.v);
  }

  private next(): Token {
    const t = this.toks[this.i++];
    if (!t) fail('the expression ends too early');
    return t;
  }

  private or(): string {
    let s = this.and();
    while (this.peekOp('or', '||')) {
      this.i++;
      s = `${s} OR ${this.and()}`;
    }
    return s;
  }

  private and(): string {
    let s = this.primary();
    while (this.peekOp('and', '&&')) {
      this.i++;
      s = `${s} AND ${this.primary()}`;
    }
    return s;
  }

  private primary(): string {
    if (this.peekOp('(')) {
      this.i++;
      const s = this.or();
      if (!this.peekOp(')')) fail("missing ')'");
      this.i++;
      return `(${s})`;
    }
    if (this.peekOp('not', '!')) fail("'not' has no counterpart in the service's language");
    const left = this.next();
    if (this.peekOp('in')) {
      this.i++;
      if (this.peekOp('[')) {
        if (left.t !== 'sel') fail('`in [list]` needs a selector on its left');
        return `${left.v} IN (${this.list().join(', ')})`;
      }
      const right = this.next();
      if (right.t !== 'sel') fail('`in` needs a list or a selector on its right');
      return `${right.v} CONTAINS ${literal(left)}`;
    }
    const op = this.next();
    if (op.t !== 'op' || !(op.v in SQL)) {
      if (op.t === 'op' && ['+', '-', '*', '/', '%', '**'].includes(op.v)) fail("arithmetic has no counterpart in the service's language");
      fail(`expected a comparison after '${tokText(left)}'`);
    }
    const right = this.next();
    if (this.peekOp('+', '-', '*', '/', '%', '**')) fail("arithmetic has no counterpart in the service's language");
    if (left.t === 'sel' && right.t !== 'sel') return `${left.v} ${SQL[op.v]} ${literal(right)}`;
    if (right.t === 'sel' && left.t !== 'sel') return `${right.v} ${SQL[FLIP[op.v]]} ${literal(left)}`;
    return fail('a comparison needs one selector (.field) and one value');
  }

  private list(): string[] {
    this.i++; // [
    const items: string[] = [];
    while (!this.peekOp(']')) {
      items.push(literal(this.next()));
      if (this.peekOp(',')) this.i++;
      else if (!this.peekOp(']')) fail("expected ',' or ']' in a list");
    }
    this.i++;
    return items;
  }
}

function tokText(t: Token): string {
  return t.t === 'bool' ? String(t.v) : t.t === 'sel' ? `.${t.v}` : t.v;
}

/** Redis vector-set FILTER expression → the vector service's filter string. */
export function translateFilter(expression: string): string {
  return new Parser(tokenize(expression)).parse();
}
