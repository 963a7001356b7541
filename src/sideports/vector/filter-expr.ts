// Redis 8 vector-set FILTER expressions (`.year > 1950 and .genre == "drama"`), compiled and evaluated
// here against each candidate's attribute text, exactly as Redis' expr.c does: the same tokens
// (selectors `.field`, numbers, quoted strings kept verbatim, `[…]` tuples, `null`), the same operator
// table and precedence (! not > ** > * / % > + - > comparisons and in > and && > or ||), the same
// shunting-yard compilation with its arity checks (so `1 2 +` compiles and `!!1` does not, as in
// Redis), the same conversions at run time, and the same error text with the same position.
// A selector the attributes do not have makes the whole expression false, as in Redis.
import { CommandError } from '../args.js';
import { contains, cPow, equal, num, toBool, toNum, type FilterValue } from './filter-values.js';
import { jsonField } from './json-field.js';

type Op = '(' | ')' | '!' | '**' | '*' | '/' | '%' | '+' | '-' | '>' | '>=' | '<' | '<=' | '==' | '!=' | 'in' | 'and' | 'or';

/** Spelling → operator, precedence and arity (expr.c's table). */
const OPERATORS: Record<string, { op: Op; prec: number; arity: number }> = {
  '(': { op: '(', prec: 7, arity: 0 },
  ')': { op: ')', prec: 7, arity: 0 },
  '!': { op: '!', prec: 6, arity: 1 },
  not: { op: '!', prec: 6, arity: 1 },
  '**': { op: '**', prec: 5, arity: 2 },
  '*': { op: '*', prec: 4, arity: 2 },
  '/': { op: '/', prec: 4, arity: 2 },
  '%': { op: '%', prec: 4, arity: 2 },
  '+': { op: '+', prec: 3, arity: 2 },
  '-': { op: '-', prec: 3, arity: 2 },
  '>': { op: '>', prec: 2, arity: 2 },
  '>=': { op: '>=', prec: 2, arity: 2 },
  '<': { op: '<', prec: 2, arity: 2 },
  '<=': { op: '<=', prec: 2, arity: 2 },
  '==': { op: '==', prec: 2, arity: 2 },
  '!=': { op: '!=', prec: 2, arity: 2 },
  in: { op: 'in', prec: 2, arity: 2 },
  and: { op: 'and', prec: 1, arity: 2 },
  '&&': { op: 'and', prec: 1, arity: 2 },
  or: { op: 'or', prec: 0, arity: 2 },
  '||': { op: 'or', prec: 0, arity: 2 },
};
const PREC: Record<Op, number> = Object.fromEntries(Object.values(OPERATORS).map((o) => [o.op, o.prec])) as Record<Op, number>;
const ARITY: Record<Op, number> = Object.fromEntries(Object.values(OPERATORS).map((o) => [o.op, o.arity])) as Record<Op, number>;

type Token = { k: 'val'; v: FilterValue } | { k: 'sel'; name: string } | { k: 'op'; op: Op };
type Item = Exclude<Token, { k: 'op'; op: '(' | ')' }>;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isAlpha = (c: string | undefined): boolean => c !== undefined && /[A-Za-z]/.test(c);
const isSpace = (c: string | undefined): boolean => c !== undefined && ' \t\n\v\f\r'.includes(c);
const isOpChar = (c: string | undefined): boolean => c !== undefined && '+-*%/!()<>=|&'.includes(c);
const isSelectorChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_-]/.test(c);

/** A syntax error at a position of the expression (Redis prints the text from there on). */
class SyntaxAt extends Error {
  constructor(readonly pos: number) {
    super('syntax');
  }
}

/** Splits the expression into tokens as expr.c does; a token it cannot read throws at its position. */
class Tokenizer {
  p = 0;
  readonly tokens: Token[] = [];
  constructor(readonly s: string) {}

  run(): Token[] {
    for (;;) {
      while (isSpace(this.s[this.p])) this.p++;
      const c = this.s[this.p];
      if (c === undefined) return this.tokens;
      const last = this.tokens[this.tokens.length - 1];
      // A '-' starts a number at the start or after an operator other than ')'.
      const minusIsNumber = last === undefined || (last.k === 'op' && last.op !== ')');
      let t: Token | undefined;
      if (isDigit(c) || (minusIsNumber && c === '-' && isDigit(this.s[this.p + 1]))) t = this.number();
      else if (c === '"' || c === "'") t = this.string();
      // expr.c's strchr() also finds the string's terminator, so a '.' ending the expression is a
      // selector with an empty name (which no attribute matches).
      else if (c === '.' && (this.p + 1 === this.s.length || isSelectorChar(this.s[this.p + 1]))) t = this.selector();
      else if (c === '[') t = this.tuple();
      else if (isAlpha(c) || isOpChar(c)) t = this.operatorOrNull();
      if (!t) throw new SyntaxAt(this.p);
      this.tokens.push(t);
    }
  }

  private number(): Token | undefined {
    const start = this.p;
    while (isDigit(this.s[this.p]) || '.eE'.includes(this.s[this.p] ?? 'x') || (this.p === start && this.s[this.p] === '-')) {
      if (this.p - start >= 255) return undefined;
      this.p++;
    }
    const text = this.s.slice(start, this.p);
    // What strtod reads whole from these characters: digits, one '.', an exponent without sign.
    if (!/^-?\d+\.?\d*([eE]\d+)?$/.test(text)) return undefined;
    return { k: 'val', v: num(Number(text)) };
  }

  /** A quoted string, kept verbatim: a backslash only keeps the next char from closing it. */
  private string(): Token | undefined {
    const quote = this.s[this.p++];
    const start = this.p;
    while (this.p < this.s.length) {
      if (this.s[this.p] === '\\' && this.p + 1 < this.s.length) this.p += 2;
      else if (this.s[this.p] === quote) return { k: 'val', v: { t: 'str', v: this.s.slice(start, this.p++) } };
      else this.p++;
    }
    return undefined;
  }

  private selector(): Token {
    const start = ++this.p;
    while (isSelectorChar(this.s[this.p])) this.p++;
    return { k: 'sel', name: this.s.slice(start, this.p) };
  }

  /** `[1, "a", …]`: numbers and strings only; a trailing comma is allowed. */
  private tuple(): Token | undefined {
    this.p++;
    const items: FilterValue[] = [];
    for (;;) {
      while (isSpace(this.s[this.p])) this.p++;
      if (this.s[this.p] === ']') break;
      const c = this.s[this.p];
      let item: Token | undefined;
      if (isDigit(c) || c === '-') item = this.number();
      else if (c === '"' || c === "'") item = this.string();
      if (!item || item.k !== 'val') return undefined;
      items.push(item.v);
      while (isSpace(this.s[this.p])) this.p++;
      if (this.s[this.p] === ']') break;
      if (this.s[this.p] !== ',') return undefined;
      this.p++;
    }
    this.p++;
    return { k: 'val', v: { t: 'tuple', v: items } };
  }

  /** A run of letters and operator chars: exactly `null`, or the longest operator it starts with. */
  private operatorOrNull(): Token | undefined {
    const start = this.p;
    while (isAlpha(this.s[this.p]) || isOpChar(this.s[this.p])) this.p++;
    const run = this.s.slice(start, this.p);
    if (run === 'null') return { k: 'val', v: { t: 'null' } };
    let best: string | undefined;
    for (const name of Object.keys(OPERATORS)) if (run.startsWith(name) && name.length > (best?.length ?? 0)) best = name;
    if (!best) return undefined;
    this.p = start + best.length;
    return { k: 'op', op: OPERATORS[best].op };
  }
}

/**
 * Shunting-yard into a postfix program, counting the values the program will hold so an operator
 * without enough operands, an unmatched parenthesis or more than one final value is an error (Redis
 * reports those at position 0).
 */
function compile(tokens: Token[]): Item[] {
  const program: Item[] = [];
  const ops: Op[] = [];
  let depth = 0;
  const emit = (op: Op) => {
    if (depth < ARITY[op]) throw new SyntaxAt(0);
    program.push({ k: 'op', op });
    depth = depth - ARITY[op] + 1;
  };
  for (const t of tokens) {
    if (t.k !== 'op') {
      program.push(t);
      depth++;
    } else if (t.op === '(') ops.push('(');
    else if (t.op === ')') {
      for (;;) {
        const top = ops.pop();
        if (top === undefined) throw new SyntaxAt(0);
        if (top === '(') break;
        emit(top);
      }
    } else {
      const prec = PREC[t.op];
      for (;;) {
        const top = ops[ops.length - 1];
        if (top === undefined || top === '(' || PREC[top] < prec) break;
        if (t.op === '**' && PREC[top] <= prec) break; // ** is right-associative
        emit(ops.pop()!);
      }
      ops.push(t.op);
    }
  }
  for (let top = ops.pop(); top !== undefined; top = ops.pop()) {
    if (top === '(') throw new SyntaxAt(0);
    emit(top);
  }
  if (depth !== 1) throw new SyntaxAt(0);
  return program;
}

function apply(op: Op, a: FilterValue, b: FilterValue): number {
  switch (op) {
    case '**':
      return cPow(toNum(a), toNum(b));
    case '*':
      return toNum(a) * toNum(b);
    case '/':
      return toNum(a) / toNum(b);
    case '%':
      return toNum(a) % toNum(b); // JS % is C's fmod
    case '+':
      return toNum(a) + toNum(b);
    case '-':
      return toNum(a) - toNum(b);
    case '>':
      return +(toNum(a) > toNum(b));
    case '>=':
      return +(toNum(a) >= toNum(b));
    case '<':
      return +(toNum(a) < toNum(b));
    case '<=':
      return +(toNum(a) <= toNum(b));
    case '==':
      return +equal(a, b);
    case '!=':
      return +!equal(a, b);
    case 'in':
      return +contains(a, b);
    case 'and':
      return +(toBool(a) && toBool(b));
    case 'or':
      return +(toBool(a) || toBool(b));
    default:
      return 0;
  }
}

/** A compiled FILTER expression. */
export class FilterExpression {
  private constructor(private readonly program: Item[]) {}

  /**
   * Compiles the expression; a syntax error is Redis' `ERR syntax error in FILTER expression near: …`
   * with the text from the position expr.c reports (the whole expression for errors found after
   * tokenizing). The expression ends at a NUL byte, as Redis reads it as a C string.
   */
  static compile(expression: Buffer): FilterExpression {
    const full = expression.toString('latin1');
    const s = full.split('\0', 1)[0];
    try {
      return new FilterExpression(compile(new Tokenizer(s).run()));
    } catch (err) {
      if (!(err instanceof SyntaxAt)) throw err;
      const pos = err.pos >= full.length ? 0 : err.pos;
      const near = Buffer.from(s.slice(pos), 'latin1').toString('utf8');
      throw new CommandError(`ERR syntax error in FILTER expression near: ${near}`);
    }
  }

  /** Does an element with these attributes (latin1 text, null for none) pass? */
  matches(attributes: string | null): boolean {
    if (attributes === null) return false;
    const stack: FilterValue[] = [];
    for (const item of this.program) {
      if (item.k === 'val') stack.push(item.v);
      else if (item.k === 'sel') {
        const v = item.name === '' ? undefined : jsonField(attributes, item.name);
        if (v === undefined) return false;
        stack.push(v);
      } else if (item.op === '!') stack.push(num(toBool(stack.pop()!) ? 0 : 1));
      else {
        const b = stack.pop()!;
        const a = stack.pop()!;
        stack.push(num(apply(item.op, a, b)));
      }
    }
    const final = stack.pop();
    return final !== undefined && toBool(final);
  }

  /** matches() for attribute text as the service returns it (UTF-8 decoded). */
  matchesText(attributes: string | null): boolean {
    return this.matches(attributes === null ? null : Buffer.from(attributes, 'utf8').toString('latin1'));
  }
}
