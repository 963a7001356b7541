// The metadata filter language of the vector area (Upstash docs `vector/features/filtering.mdx`):
// SQL-like comparisons on metadata fields, combined with AND (binds tighter) and OR, with parentheses.
// parseFilter() turns the text into a predicate once per query; a syntax error names the position.

export type Metadata = Record<string, unknown>;
export type Predicate = (metadata: Metadata | undefined) => boolean;

export class FilterSyntaxError extends Error {}

type Literal = string | number | boolean;
/** A path step: an object key, an array index from the start, or one from the end (`[#-1]` → -1). */
type Step = { key: string } | { index: number; fromEnd: boolean };

interface Token {
  kind: 'ident' | 'string' | 'number' | 'op' | 'lparen' | 'rparen' | 'comma' | 'word';
  text: string;
  value?: Literal;
  pos: number;
}

const WORDS = new Set(['AND', 'OR', 'NOT', 'GLOB', 'IN', 'CONTAINS', 'HAS', 'FIELD', 'TRUE', 'FALSE']);

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const pos = i;
    if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma', text: c, pos });
      i++;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      let text = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) j++;
        text += src[j++];
      }
      if (j >= src.length) throw syntax(src, pos, `unterminated string starting with ${c}`);
      tokens.push({ kind: 'string', text: src.slice(i, j + 1), value: text, pos });
      i = j + 1;
    } else if (/[-+0-9.]/.test(c) && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.test(src.slice(i))) {
      const m = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(src.slice(i))!;
      tokens.push({ kind: 'number', text: m[0], value: Number(m[0]), pos });
      i += m[0].length;
    } else if (/[<>=!]/.test(c)) {
      const two = src.slice(i, i + 2);
      const op = ['<=', '>=', '!='].includes(two) ? two : c;
      if (op === '!') throw syntax(src, pos, "unexpected '!' (did you mean '!='?)");
      tokens.push({ kind: 'op', text: op, pos });
      i += op.length;
    } else if (/[a-zA-Z_]/.test(c)) {
      const m = /^[a-zA-Z_][a-zA-Z_0-9.[\]#-]*/.exec(src.slice(i))!;
      const upper = m[0].toUpperCase();
      tokens.push({ kind: WORDS.has(upper) ? 'word' : 'ident', text: m[0], pos });
      i += m[0].length;
    } else {
      throw syntax(src, pos, `unexpected character '${c}'`);
    }
  }
  return tokens;
}

function syntax(src: string, pos: number, what: string): FilterSyntaxError {
  return new FilterSyntaxError(`Invalid filter: ${what} at position ${pos} in '${src}'`);
}

function parsePath(src: string, tok: Token): Step[] {
  const steps: Step[] = [];
  const re = /([a-zA-Z_][a-zA-Z_0-9-]*)|\[(#-)?(\d+)\]|(\.)/g;
  let expectKey = true;
  let at = 0;
  for (let m = re.exec(tok.text); m; m = re.exec(tok.text)) {
    if (m.index !== at) break;
    at = re.lastIndex;
    if (m[1] !== undefined) {
      if (!expectKey) throw syntax(src, tok.pos + m.index, `unexpected '${m[1]}' in field '${tok.text}'`);
      steps.push({ key: m[1] });
      expectKey = false;
    } else if (m[3] !== undefined) {
      if (expectKey) throw syntax(src, tok.pos + m.index, `array index without a field in '${tok.text}'`);
      steps.push({ index: Number(m[3]) * (m[2] ? -1 : 1), fromEnd: Boolean(m[2]) });
    } else {
      if (expectKey) throw syntax(src, tok.pos + m.index, `unexpected '.' in field '${tok.text}'`);
      expectKey = true;
    }
  }
  if (at !== tok.text.length || expectKey) throw syntax(src, tok.pos + at, `malformed field name '${tok.text}'`);
  return steps;
}

function resolve(metadata: Metadata | undefined, steps: Step[]): unknown {
  let cur: unknown = metadata;
  for (const step of steps) {
    if ('key' in step) {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
      cur = (cur as Metadata)[step.key];
    } else {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[step.fromEnd ? cur.length + step.index : step.index];
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

function equal(field: unknown, literal: Literal): boolean {
  if (typeof field === 'boolean' && typeof literal === 'number') return (literal === 1 || literal === 0) && field === (literal === 1);
  return field === literal;
}

/** GLOB of SQLite: `*`, `?`, `[abc]`, `[a-z]`, `[^abc]`; case-sensitive. */
function globToRegExp(glob: string): RegExp {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        const negate = body.startsWith('^');
        if (negate) body = body.slice(1);
        re += `[${negate ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re + '$');
}

class Parser {
  private i = 0;
  constructor(
    private readonly src: string,
    private readonly tokens: Token[],
  ) {}

  parse(): Predicate {
    if (this.tokens.length === 0) return () => true;
    const p = this.or();
    const rest = this.tokens[this.i];
    if (rest) throw syntax(this.src, rest.pos, `unexpected '${rest.text}'`);
    return p;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.tokens[this.i + offset];
    return t !== undefined && t.kind === 'word' && t.text.toUpperCase() === word;
  }

  private expectWord(word: string): void {
    if (!this.isWord(word)) throw this.unexpected(`'${word}'`);
    this.i++;
  }

  private unexpected(wanted: string): FilterSyntaxError {
    const t = this.peek();
    return t
      ? syntax(this.src, t.pos, `expected ${wanted}, found '${t.text}'`)
      : syntax(this.src, this.src.length, `expected ${wanted}, found the end of the filter`);
  }

  private or(): Predicate {
    const parts = [this.and()];
    while (this.isWord('OR')) {
      this.i++;
      parts.push(this.and());
    }
    return parts.length === 1 ? parts[0] : (m) => parts.some((p) => p(m));
  }

  private and(): Predicate {
    const parts = [this.primary()];
    while (this.isWord('AND')) {
      this.i++;
      parts.push(this.primary());
    }
    return parts.length === 1 ? parts[0] : (m) => parts.every((p) => p(m));
  }

  private primary(): Predicate {
    const t = this.peek();
    if (!t) throw this.unexpected('a condition');
    if (t.kind === 'lparen') {
      this.i++;
      const inner = this.or();
      if (this.peek()?.kind !== 'rparen') throw this.unexpected("')'");
      this.i++;
      return inner;
    }
    if (this.isWord('HAS')) {
      this.i++;
      const negate = this.isWord('NOT');
      if (negate) this.i++;
      this.expectWord('FIELD');
      const steps = this.field();
      return negate ? (m) => resolve(m, steps) === undefined : (m) => resolve(m, steps) !== undefined;
    }
    const steps = this.field();
    return this.comparison(steps);
  }

  private field(): Step[] {
    const t = this.peek();
    if (!t || t.kind !== 'ident') throw this.unexpected('a field name');
    this.i++;
    return parsePath(this.src, t);
  }

  private literal(): Literal {
    const t = this.peek();
    if (t && (t.kind === 'string' || t.kind === 'number')) {
      this.i++;
      return t.value!;
    }
    if (t && (this.isWord('TRUE') || this.isWord('FALSE'))) {
      this.i++;
      return t.text.toUpperCase() === 'TRUE';
    }
    throw this.unexpected('a value (a quoted string, a number, true or false)');
  }

  private list(): Literal[] {
    if (this.peek()?.kind !== 'lparen') throw this.unexpected("'(' to open the list of values");
    this.i++;
    const values = [this.literal()];
    while (this.peek()?.kind === 'comma') {
      this.i++;
      values.push(this.literal());
    }
    if (this.peek()?.kind !== 'rparen') throw this.unexpected("',' or ')'");
    this.i++;
    return values;
  }

  private comparison(steps: Step[]): Predicate {
    const t = this.peek();
    const get = (m: Metadata | undefined) => resolve(m, steps);
    if (t?.kind === 'op') {
      this.i++;
      const opPos = t.pos;
      const value = this.literal();
      switch (t.text) {
        case '=':
          return (m) => equal(get(m), value);
        case '!=':
          return (m) => {
            const f = get(m);
            return f !== undefined && f !== null && typeof f !== 'object' && !equal(f, value);
          };
        default: {
          if (typeof value !== 'number') throw syntax(this.src, opPos, `'${t.text}' compares numbers only`);
          const cmp =
            t.text === '<'
              ? (a: number) => a < value
              : t.text === '<='
                ? (a: number) => a <= value
                : t.text === '>'
                  ? (a: number) => a > value
                  : (a: number) => a >= value;
          return (m) => {
            const f = get(m);
            return typeof f === 'number' && cmp(f);
          };
        }
      }
    }
    const negate = this.isWord('NOT');
    if (negate) this.i++;
    if (this.isWord('GLOB')) {
      this.i++;
      const pattern = this.literal();
      if (typeof pattern !== 'string') throw syntax(this.src, this.tokens[this.i - 1].pos, 'GLOB needs a quoted pattern');
      const re = globToRegExp(pattern);
      return (m) => {
        const f = get(m);
        return typeof f === 'string' && re.test(f) !== negate;
      };
    }
    if (this.isWord('IN')) {
      this.i++;
      const values = this.list();
      return (m) => {
        const f = get(m);
        return f !== undefined && f !== null && typeof f !== 'object' && values.some((v) => equal(f, v)) !== negate;
      };
    }
    if (this.isWord('CONTAINS')) {
      this.i++;
      const value = this.literal();
      return (m) => {
        const f = get(m);
        return Array.isArray(f) && f.some((e) => equal(e, value)) !== negate;
      };
    }
    throw this.unexpected(
      negate ? 'GLOB, IN or CONTAINS after NOT' : 'an operator (=, !=, <, <=, >, >=, GLOB, NOT GLOB, IN, NOT IN, CONTAINS, NOT CONTAINS)',
    );
  }
}

/** Compiles a filter; the empty filter matches everything. Throws FilterSyntaxError naming the position. */
export function parseFilter(filter: string): Predicate {
  return new Parser(filter, tokenize(filter)).parse();
}
