// A document of an index: a key's value as read from the data store (JSON text, a hash's fields, or a string
// holding a JSON object) and the values of the index's schema fields taken from it.
import { analyze, type Token } from './analyzer.js';
import { sourceOf, type FieldDef, type IndexDef } from './schema.js';

export type Source = { kind: 'json'; text: string; value: Record<string, unknown> } | { kind: 'hash'; pairs: Array<[string, string]> };

export interface TextValue {
  /** Each text of the field (a JSON array gives several), with its tokens. */
  texts: string[];
  tokens: Token[][];
  /** Number of tokens over all texts (BM25's field length). */
  length: number;
}

export type Scalar = number | boolean | string;

export interface Doc {
  key: string;
  /** Order of indexing: ties of score are returned in this order (the engine's document order). */
  seq: number;
  source: Source;
  text: Map<string, TextValue>;
  /** Numbers (U64/I64/F64, DATE as epoch milliseconds), booleans, keywords and facet paths. */
  scalars: Map<string, Scalar[]>;
}

/** Position gap between two texts of one field, so a phrase cannot span them. */
const ARRAY_GAP = 100;

/** The values at a dotted path of a JSON value; arrays on the way are flattened. */
export function valuesAt(value: unknown, path: string): unknown[] {
  let current: unknown[] = [value];
  for (const part of path.split('.')) {
    const next: unknown[] = [];
    for (const v of current) {
      for (const item of Array.isArray(v) ? v : [v]) {
        if (item !== null && typeof item === 'object' && !Array.isArray(item) && part in item)
          next.push((item as Record<string, unknown>)[part]);
      }
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v) => v !== null && v !== undefined);
}

export function rawValues(source: Source, path: string): unknown[] {
  if (source.kind === 'json') return valuesAt(source.value, path);
  return source.pairs.filter(([f]) => f === path).map(([, v]) => v);
}

/** A date as epoch milliseconds: RFC 3339 text or a number of milliseconds. */
export function parseDate(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A field value as the field's type indexes it, or undefined when it does not fit the type. */
export function scalarOf(field: FieldDef, v: unknown): Scalar | undefined {
  switch (field.type) {
    case 'U64':
    case 'I64':
    case 'F64': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) return undefined;
      if (field.type !== 'F64' && !Number.isInteger(n)) return undefined;
      if (field.type === 'U64' && n < 0) return undefined;
      return n;
    }
    case 'DATE':
      return parseDate(v);
    case 'BOOL':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      return undefined;
    case 'KEYWORD':
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
    case 'FACET':
      return typeof v === 'string' && v.startsWith('/') ? v : undefined;
    default:
      return undefined;
  }
}

export function buildDoc(def: IndexDef, key: string, seq: number, source: Source): Doc {
  const doc: Doc = { key, seq, source, text: new Map(), scalars: new Map() };
  for (const field of def.fields) {
    const raw = rawValues(source, sourceOf(field));
    if (field.type === 'TEXT') {
      const texts = raw.filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean').map(String);
      if (texts.length === 0) continue;
      const tokens: Token[][] = [];
      let position = 0;
      for (const t of texts) {
        const toks = analyze(t, field, def.language, position);
        tokens.push(toks);
        position += toks.length + ARRAY_GAP;
      }
      doc.text.set(field.name, { texts, tokens, length: tokens.reduce((n, t) => n + t.length, 0) });
      continue;
    }
    const values = raw.map((v) => scalarOf(field, v)).filter((v): v is Scalar => v !== undefined);
    if (values.length > 0) doc.scalars.set(field.name, values);
  }
  return doc;
}

/** A JSON value's text as the index returns it; a STRING key must hold a JSON object. */
export function jsonSource(text: string): Source | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return { kind: 'json', text, value: value as Record<string, unknown> };
  } catch {
    return undefined;
  }
}
