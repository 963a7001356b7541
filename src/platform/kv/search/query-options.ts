// The options of SEARCH.QUERY after the filter: LIMIT, OFFSET, ORDERBY, SELECT, NOCONTENT, HIGHLIGHT and
// SCOREFUNC, checked against the index's schema as the command reference describes.
import { SearchError } from './reply.js';
import { NUMERIC_TYPES, type IndexDef } from './schema.js';

export type Modifier = 'NONE' | 'LOG' | 'LOG1P' | 'LOG2P' | 'LN' | 'LN1P' | 'LN2P' | 'SQUARE' | 'SQRT' | 'RECIPROCAL';
const MODIFIERS: readonly Modifier[] = ['NONE', 'LOG', 'LOG1P', 'LOG2P', 'LN', 'LN1P', 'LN2P', 'SQUARE', 'SQRT', 'RECIPROCAL'];

export interface FieldValueFn {
  field: string;
  modifier: Modifier;
  factor: number;
  missing: number;
}

export interface ScoreFunc {
  fields: FieldValueFn[];
  scoreMode: 'SUM' | 'MULTIPLY' | 'REPLACE';
  combineMode: 'SUM' | 'MULTIPLY';
}

export interface QueryOptions {
  limit: number;
  offset: number;
  orderBy?: { field: string; desc: boolean };
  select?: string[];
  noContent: boolean;
  highlight?: { fields: string[]; open: string; close: string };
  scoreFunc?: ScoreFunc;
}

class Words {
  i = 0;
  constructor(private readonly words: string[]) {}
  more(): boolean {
    return this.i < this.words.length;
  }
  peek(): string {
    return (this.words[this.i] ?? '').toUpperCase();
  }
  next(what: string): string {
    if (this.i >= this.words.length) throw new SearchError(`ERR ${what} is missing`);
    return this.words[this.i++];
  }
  int(what: string, min: number, max: number): number {
    const text = this.next(what);
    const n = Number(text);
    if (!/^-?\d+$/.test(text) || n < min || n > max) throw new SearchError(`ERR ${what} must be an integer between ${min} and ${max}`);
    return n;
  }
  number(what: string): number {
    const text = this.next(what);
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new SearchError(`ERR ${what} must be a number`);
    return n;
  }
}

export function parseQueryOptions(args: string[], def: IndexDef): QueryOptions {
  const opts: QueryOptions = { limit: 10, offset: 0, noContent: false };
  const w = new Words(args);
  while (w.more()) {
    const word = w.next('option').toUpperCase();
    if (word === 'LIMIT') opts.limit = w.int('LIMIT', 1, 1000);
    else if (word === 'OFFSET') opts.offset = w.int('OFFSET', 0, 10000);
    else if (word === 'NOCONTENT') opts.noContent = true;
    else if (word === 'ORDERBY') {
      const field = w.next('ORDERBY field');
      let desc = true;
      if (w.peek() === 'ASC' || w.peek() === 'DESC') desc = w.next('direction').toUpperCase() === 'DESC';
      requireFast(def, field, 'ORDERBY', false);
      opts.orderBy = { field, desc };
    } else if (word === 'SELECT') {
      const count = w.int('SELECT count', 0, 1024);
      opts.select = Array.from({ length: count }, () => w.next('SELECT field'));
    } else if (word === 'HIGHLIGHT') opts.highlight = parseHighlight(w, def);
    else if (word === 'SCOREFUNC') opts.scoreFunc = parseScoreFunc(w, def);
    else throw new SearchError(`ERR unknown option '${args[w.i - 1]}'`);
  }
  if (opts.noContent && (opts.select || opts.highlight)) throw new SearchError('ERR NOCONTENT cannot be combined with SELECT or HIGHLIGHT');
  if (opts.scoreFunc && opts.orderBy) throw new SearchError('ERR SCOREFUNC cannot be combined with ORDERBY');
  return opts;
}

function requireFast(def: IndexDef, name: string, what: string, numeric: boolean): void {
  const field = def.fields.find((f) => f.name === name);
  if (!field) throw new SearchError(`ERR unknown field '${name}' in ${what}`);
  if (!field.fast) throw new SearchError(`ERR ${what} needs a FAST field; '${name}' is not FAST`);
  if (numeric && !NUMERIC_TYPES.includes(field.type))
    throw new SearchError(`ERR ${what} needs a U64, I64 or F64 field; '${name}' is ${field.type}`);
}

function parseHighlight(w: Words, def: IndexDef): NonNullable<QueryOptions['highlight']> {
  if (w.next('FIELDS').toUpperCase() !== 'FIELDS') throw new SearchError('ERR HIGHLIGHT expects FIELDS <count> <field> ...');
  const count = w.int('HIGHLIGHT FIELDS count', 0, 1024);
  const fields = Array.from({ length: count }, () => w.next('HIGHLIGHT field'));
  for (const f of fields) if (!def.fields.some((d) => d.name === f)) throw new SearchError(`ERR unknown field '${f}' in HIGHLIGHT`);
  let open = '<em>';
  let close = '</em>';
  if (w.peek() === 'TAGS') {
    w.next('TAGS');
    open = w.next('TAGS open tag');
    close = w.next('TAGS close tag');
  }
  return { fields, open, close };
}

function parseScoreFunc(w: Words, def: IndexDef): ScoreFunc {
  // Defaults as the query guide and the SDK's tests describe them (multiplied with relevance).
  const sf: ScoreFunc = { fields: [], scoreMode: 'MULTIPLY', combineMode: 'MULTIPLY' };
  let current: FieldValueFn | undefined;
  for (;;) {
    const word = w.peek();
    if (word === 'FIELDVALUE') {
      w.next('FIELDVALUE');
      current = { field: w.next('FIELDVALUE field'), modifier: 'NONE', factor: 1, missing: 0 };
      requireFast(def, current.field, 'SCOREFUNC', true);
      sf.fields.push(current);
    } else if (word === 'SCOREMODE') {
      w.next('SCOREMODE');
      const mode = w.next('SCOREMODE').toUpperCase();
      if (mode !== 'SUM' && mode !== 'MULTIPLY' && mode !== 'REPLACE')
        throw new SearchError('ERR SCOREMODE must be SUM, MULTIPLY or REPLACE');
      sf.scoreMode = mode;
    } else if (word === 'COMBINEMODE') {
      w.next('COMBINEMODE');
      const mode = w.next('COMBINEMODE').toUpperCase();
      if (mode !== 'SUM' && mode !== 'MULTIPLY') throw new SearchError('ERR COMBINEMODE must be SUM or MULTIPLY');
      sf.combineMode = mode;
    } else if ((word === 'MODIFIER' || word === 'FACTOR' || word === 'MISSING') && current) {
      w.next(word);
      if (word === 'MODIFIER') {
        const m = w.next('MODIFIER').toUpperCase() as Modifier;
        if (!MODIFIERS.includes(m)) throw new SearchError(`ERR MODIFIER must be one of ${MODIFIERS.join(', ')}`);
        current.modifier = m;
      } else if (word === 'FACTOR') current.factor = w.number('FACTOR');
      else current.missing = w.number('MISSING');
    } else break;
  }
  if (sf.fields.length === 0) throw new SearchError('ERR SCOREFUNC needs at least one FIELDVALUE');
  return sf;
}

function modify(m: Modifier, v: number): number {
  switch (m) {
    case 'LOG':
      return Math.log10(v);
    case 'LOG1P':
      return Math.log10(1 + v);
    case 'LOG2P':
      return Math.log10(2 + v);
    case 'LN':
      return Math.log(v);
    case 'LN1P':
      return Math.log1p(v);
    case 'LN2P':
      return Math.log(2 + v);
    case 'SQUARE':
      return v * v;
    case 'SQRT':
      return Math.sqrt(v);
    case 'RECIPROCAL':
      return 1 / v;
    default:
      return v;
  }
}

/** One FIELDVALUE's contribution; a missing or unfit value uses MISSING (modified when it fits). */
export function fieldValueScore(fn: FieldValueFn, value: number | undefined): number {
  const valid = (x: number) => Number.isFinite(x);
  let v = value === undefined ? NaN : modify(fn.modifier, value);
  if (!valid(v)) {
    const m = modify(fn.modifier, fn.missing);
    v = valid(m) ? m : fn.missing;
  }
  return v * fn.factor;
}

export function applyScoreFunc(sf: ScoreFunc, score: number, valueOf: (field: string) => number | undefined): number {
  const parts = sf.fields.map((fn) => fieldValueScore(fn, valueOf(fn.field)));
  const combined = sf.combineMode === 'SUM' ? parts.reduce((a, b) => a + b, 0) : parts.reduce((a, b) => a * b, 1);
  if (sf.scoreMode === 'REPLACE') return combined;
  return sf.scoreMode === 'SUM' ? score + combined : score * combined;
}
