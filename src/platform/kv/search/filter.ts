// The JSON filter language of SEARCH.QUERY / COUNT / AGGREGATE: field conditions (smart matching, $eq, $in,
// ranges, $phrase, $fuzzy, $regex, $boost) and boolean clauses ($must/$and, $should/$or, $mustNot), evaluated
// into matching documents with relevance scores. Terms that matched are kept per field for HIGHLIGHT.
import { queryTerms } from './analyzer.js';
import { parseDate, type Scalar } from './documents.js';
import type { SearchIndex } from './inverted-index.js';
import { SearchError } from './reply.js';
import { NUMERIC_TYPES, type FieldDef } from './schema.js';
import { constantScores, fuzzyTerms, phraseScores, termScores, type Scores } from './text-match.js';

const RANGE_OPS = ['$gt', '$gte', '$lt', '$lte'];
const TEXT_ONLY_OPS = ['$phrase', '$fuzzy', '$regex'];

/** Relative weights of smart matching's strategies (the service documents their order, not values). */
const SMART = { exact: 2, phrase: 4, slopPhrase: 2, terms: 1.5, fuzzy: 1, slop: 2 };

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function union(into: Scores, from: Scores, weight = 1): Scores {
  for (const [doc, s] of from) into.set(doc, (into.get(doc) ?? 0) + s * weight);
  return into;
}

function scaled(scores: Scores, factor: number): Scores {
  if (factor === 1) return scores;
  for (const [doc, s] of scores) scores.set(doc, s * factor);
  return scores;
}

export class FilterEvaluator {
  /** Per field, the terms that matched (for HIGHLIGHT). */
  readonly matchedTerms = new Map<string, Set<string>>();

  constructor(private readonly index: SearchIndex) {}

  /** Parses the filter text and evaluates it. */
  run(filterText: string): Scores {
    let filter: unknown;
    try {
      filter = JSON.parse(filterText);
    } catch {
      throw new SearchError('ERR invalid filter: not valid JSON');
    }
    if (!isObject(filter)) throw new SearchError('ERR invalid filter: expected a JSON object');
    return this.clause(filter);
  }

  /** An object of conditions: field keys and boolean operators, all required unless $should. */
  private clause(obj: Record<string, unknown>): Scores {
    const must: Scores[] = [];
    const should: Scores[] = [];
    const mustNot: Scores[] = [];
    let boost = 1;
    for (const [key, value] of Object.entries(obj)) {
      if (key === '$must' || key === '$and') must.push(...this.list(value, key, false));
      else if (key === '$should' || key === '$or') should.push(...this.list(value, key, true));
      else if (key === '$mustNot') mustNot.push(...this.list(value, key, true));
      else if (key === '$boost') {
        if (typeof value !== 'number') throw new SearchError('ERR $boost must be a number');
        boost = value;
      } else if (key.startsWith('$')) throw new SearchError(`ERR unknown operator '${key}'`);
      else must.push(this.field(key, value));
    }
    let result: Scores;
    if (must.length > 0) {
      const [first, ...rest] = must.sort((a, b) => a.size - b.size);
      result = new Map();
      for (const [doc, s] of first) {
        let total = s;
        let all = true;
        for (const m of rest) {
          const v = m.get(doc);
          if (v === undefined) {
            all = false;
            break;
          }
          total += v;
        }
        if (all) result.set(doc, total);
      }
      for (const s of should) for (const [doc, v] of s) if (result.has(doc)) result.set(doc, result.get(doc)! + v);
    } else if (should.length > 0) {
      result = new Map();
      for (const s of should) union(result, s);
    } else if (mustNot.length > 0) {
      return new Map(); // $mustNot alone has no documents to filter
    } else {
      result = new Map([...this.index.docs.values()].map((d) => [d, 1]));
    }
    for (const s of mustNot) for (const doc of s.keys()) result.delete(doc);
    return scaled(result, boost);
  }

  /** The clauses of a boolean operator: an array of objects, or an object (each of its conditions one clause when `split`). */
  private list(value: unknown, op: string, split: boolean): Scores[] {
    if (Array.isArray(value)) {
      return value.map((v) => {
        if (!isObject(v)) throw new SearchError(`ERR ${op} expects objects`);
        return this.clause(v);
      });
    }
    if (!isObject(value)) throw new SearchError(`ERR ${op} expects an object or an array of objects`);
    if (!split) return [this.clause(value)];
    const boost = value.$boost;
    return Object.entries(value)
      .filter(([k]) => k !== '$boost')
      .map(([k, v]) => this.clause(boost === undefined ? { [k]: v } : { [k]: v, $boost: boost }));
  }

  private fieldDef(name: string): FieldDef {
    const field = this.index.def.fields.find((f) => f.name === name);
    if (!field) throw new SearchError(`ERR unknown field '${name}' in filter`);
    return field;
  }

  /** One field's condition: a plain value (smart matching) or an object of operators (all required). */
  private field(name: string, value: unknown): Scores {
    const field = this.fieldDef(name);
    if (!isObject(value)) return this.smart(field, value);
    let boost = 1;
    const parts: Scores[] = [];
    const range: Record<string, unknown> = {};
    for (const [op, arg] of Object.entries(value)) {
      if (op === '$boost') {
        if (typeof arg !== 'number') throw new SearchError('ERR $boost must be a number');
        boost = arg;
      } else if (RANGE_OPS.includes(op)) range[op] = arg;
      else if (op === '$eq') parts.push(this.eq(field, arg));
      else if (op === '$in') {
        if (!Array.isArray(arg)) throw new SearchError(`ERR $in of field '${name}' expects an array`);
        parts.push(arg.reduce<Scores>((acc, v) => union(acc, this.eq(field, v)), new Map()));
      } else if (op === '$smart') parts.push(this.smart(field, arg));
      else if (TEXT_ONLY_OPS.includes(op)) parts.push(this.textOperator(field, op, arg));
      else throw new SearchError(`ERR unknown operator '${op}' for field '${name}'`);
    }
    if (Object.keys(range).length > 0) parts.push(this.range(field, range));
    if (parts.length === 0) throw new SearchError(`ERR no condition given for field '${name}'`);
    const [first, ...rest] = parts;
    const result: Scores = new Map();
    for (const [doc, s] of first) {
      if (rest.every((p) => p.has(doc)))
        result.set(
          doc,
          rest.reduce((t, p) => t + p.get(doc)!, s),
        );
    }
    return scaled(result, boost);
  }

  private note(field: string, terms: Iterable<string>): void {
    let set = this.matchedTerms.get(field);
    if (!set) this.matchedTerms.set(field, (set = new Set()));
    for (const t of terms) set.add(t);
  }

  private terms(field: FieldDef, text: string): string[] {
    return queryTerms(text, field, this.index.def.language);
  }

  /** $eq: a term (one word) or an exact phrase on TEXT; equality on every other type. */
  private eq(field: FieldDef, value: unknown): Scores {
    if (field.type !== 'TEXT') return this.scalarMatch(field, (v) => equalScalar(field, v, value));
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new SearchError(`ERR field '${field.name}' is TEXT: expected a string`);
    }
    const terms = this.terms(field, String(value));
    this.note(field.name, terms);
    if (terms.length === 1) return termScores(this.index, field.name, terms[0]);
    return phraseScores(this.index, field.name, terms, 0, false);
  }

  private smart(field: FieldDef, value: unknown): Scores {
    if (field.type !== 'TEXT') return this.eq(field, value);
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new SearchError(`ERR field '${field.name}' is TEXT: expected a string`);
    const text = String(value).trim();
    if (text.length > 1 && text.startsWith('"') && text.endsWith('"')) return this.eq(field, text.slice(1, -1));
    const terms = this.terms(field, text);
    if (terms.length === 0) return new Map();
    const words = field.noTokenize ? [text.toLowerCase()] : (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    this.note(field.name, terms);
    const out: Scores = new Map();
    if (terms.length === 1) {
      union(out, termScores(this.index, field.name, terms[0]), SMART.exact);
    } else {
      union(out, phraseScores(this.index, field.name, terms, 0, false), SMART.phrase);
      union(out, phraseScores(this.index, field.name, terms, SMART.slop, false), SMART.slopPhrase);
      for (const t of terms) union(out, termScores(this.index, field.name, t), SMART.terms);
    }
    // Typos are measured on the analysed term ("hedphones" → "hedphon" is 1 edit from "headphon") and on the
    // word as typed (a partial word is a prefix of the indexed term, not of its stem).
    terms.forEach((t, i) => {
      const last = i === terms.length - 1;
      for (const form of new Set([t, words[i] ?? t])) {
        union(out, this.fuzzy(field, form, 1, true, false), SMART.fuzzy);
        if (last) union(out, this.fuzzy(field, form, 1, true, true), SMART.fuzzy);
      }
    });
    return out;
  }

  private fuzzy(field: FieldDef, word: string, distance: number, transpositions: boolean, prefix: boolean): Scores {
    const matched = fuzzyTerms(this.index, field.name, word, distance, transpositions, prefix);
    this.note(field.name, matched);
    return constantScores(this.index, field.name, matched);
  }

  private textOperator(field: FieldDef, op: string, arg: unknown): Scores {
    if (field.type !== 'TEXT') throw new SearchError(`ERR ${op} is only supported on TEXT fields ('${field.name}' is ${field.type})`);
    if (op === '$regex') {
      if (typeof arg !== 'string') throw new SearchError('ERR $regex expects a pattern string');
      let re: RegExp;
      try {
        re = new RegExp(`^(?:${arg})$`, 'iu');
      } catch {
        throw new SearchError(`ERR invalid $regex pattern '${arg}'`);
      }
      const matched = [...(this.index.terms.get(field.name)?.keys() ?? [])].filter((t) => re.test(t));
      this.note(field.name, matched);
      return constantScores(this.index, field.name, matched);
    }
    const opts = typeof arg === 'string' ? { value: arg } : isObject(arg) ? arg : undefined;
    const value = opts?.value ?? opts?.query ?? opts?.term;
    if (typeof value !== 'string') throw new SearchError(`ERR ${op} expects a string or an object with 'value'`);
    if (op === '$phrase') return this.phrase(field, value, opts!);
    const distance = opts!.distance ?? 1;
    if (distance !== 0 && distance !== 1 && distance !== 2) throw new SearchError('ERR $fuzzy distance must be 0, 1 or 2');
    const transpositions = opts!.transpositionCostOne !== false;
    const prefix = opts!.prefix === true;
    const words = field.noTokenize ? [value.toLowerCase()] : (value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    if (words.length === 0) return new Map();
    const [first, ...rest] = words.map((w) => {
      const stemmed = this.terms(field, w)[0] ?? w;
      const scores = this.fuzzy(field, w, distance, transpositions, prefix);
      return stemmed === w ? scores : union(scores, this.fuzzy(field, stemmed, distance, transpositions, prefix));
    });
    const out: Scores = new Map();
    for (const [doc, s] of first)
      if (rest.every((r) => r.has(doc)))
        out.set(
          doc,
          rest.reduce((t, r) => t + r.get(doc)!, s),
        );
    return out;
  }

  private phrase(field: FieldDef, value: string, opts: Record<string, unknown>): Scores {
    const slop = opts.slop ?? 0;
    if (typeof slop !== 'number' || !Number.isInteger(slop) || slop < 0)
      throw new SearchError('ERR $phrase slop must be a non-negative integer');
    const prefix = opts.prefix === true;
    if (prefix && slop > 0) throw new SearchError('ERR $phrase accepts slop or prefix, not both');
    const terms = this.terms(field, value);
    this.note(field.name, terms);
    // The last word as typed (lower-cased) may also prefix the indexed terms.
    const typed = value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    if (terms.length === 1 && !prefix) return termScores(this.index, field.name, terms[0]);
    return phraseScores(this.index, field.name, terms, slop, prefix, typed[typed.length - 1]);
  }

  private range(field: FieldDef, range: Record<string, unknown>): Scores {
    if (!NUMERIC_TYPES.includes(field.type) && field.type !== 'DATE' && field.type !== 'KEYWORD') {
      throw new SearchError(`ERR range operators are not supported on ${field.type} field '${field.name}'`);
    }
    const bounds = Object.entries(range).map(([op, arg]) => [op, boundOf(field, op, arg)] as const);
    return this.scalarMatch(field, (v) =>
      bounds.every(([op, b]) => (op === '$gt' ? v > b : op === '$gte' ? v >= b : op === '$lt' ? v < b : v <= b)),
    );
  }

  /** Documents with a value of the field that passes `test`, scored 1 (a filter, as the service's range queries). */
  private scalarMatch(field: FieldDef, test: (v: Scalar) => boolean): Scores {
    const out: Scores = new Map();
    for (const doc of this.index.docs.values()) {
      if (doc.scalars.get(field.name)?.some(test)) out.set(doc, 1);
    }
    return out;
  }
}

function boundOf(field: FieldDef, op: string, arg: unknown): Scalar {
  if (field.type === 'KEYWORD') {
    if (typeof arg !== 'string' && typeof arg !== 'number') throw new SearchError(`ERR ${op} of field '${field.name}' expects a string`);
    return String(arg);
  }
  const n = field.type === 'DATE' ? parseDate(arg) : typeof arg === 'number' ? arg : undefined;
  if (n === undefined) throw new SearchError(`ERR ${op} of field '${field.name}' expects a ${field.type === 'DATE' ? 'date' : 'number'}`);
  return n;
}

/** Equality of an indexed value with a query value; a FACET path also matches its descendants. */
function equalScalar(field: FieldDef, indexed: Scalar, value: unknown): boolean {
  switch (field.type) {
    case 'BOOL':
      if (typeof value !== 'boolean' && value !== 'true' && value !== 'false')
        throw new SearchError(`ERR field '${field.name}' is BOOL: expected true or false`);
      return indexed === (value === true || value === 'true');
    case 'DATE': {
      const ms = parseDate(value);
      if (ms === undefined) throw new SearchError(`ERR field '${field.name}' is DATE: expected an RFC 3339 date`);
      return indexed === ms;
    }
    case 'KEYWORD':
      return indexed === String(value);
    case 'FACET':
      if (typeof value !== 'string' || !value.startsWith('/'))
        throw new SearchError(`ERR field '${field.name}' is FACET: expected a path starting with '/'`);
      return indexed === value || (typeof indexed === 'string' && indexed.startsWith(value.endsWith('/') ? value : `${value}/`));
    default: {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (Number.isNaN(n)) throw new SearchError(`ERR field '${field.name}' is ${field.type}: expected a number`);
      return indexed === n;
    }
  }
}
