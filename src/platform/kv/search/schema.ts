// An index definition (SEARCH.CREATE): what keys it covers and how each schema field is indexed; and its
// SEARCH.DESCRIBE form. Definitions are kept as JSON in the internal store (engine.ts).
import { SearchError, type ReplyValue } from './reply.js';

export type DataType = 'JSON' | 'HASH' | 'STRING';
export type FieldType = 'TEXT' | 'U64' | 'I64' | 'F64' | 'BOOL' | 'DATE' | 'KEYWORD' | 'FACET';

export interface FieldDef {
  /** The name queries use (may be a dotted path). */
  name: string;
  type: FieldType;
  fast: boolean;
  noStem: boolean;
  noTokenize: boolean;
  /** The document field the value is read from, when it is not `name` (FROM). */
  from?: string;
}

export interface IndexDef {
  name: string;
  dataType: DataType;
  prefixes: string[];
  language: string;
  fields: FieldDef[];
}

export const LANGUAGES = [
  'arabic',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hungarian',
  'italian',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
];

const FIELD_TYPES: readonly FieldType[] = ['TEXT', 'U64', 'I64', 'F64', 'BOOL', 'DATE', 'KEYWORD', 'FACET'];
const FAST_TYPES: readonly FieldType[] = ['U64', 'I64', 'F64', 'BOOL', 'DATE', 'KEYWORD'];
export const NUMERIC_TYPES: readonly FieldType[] = ['U64', 'I64', 'F64'];

export interface CreateRequest {
  def: IndexDef;
  skipInitialScan: boolean;
  existsOk: boolean;
}

/** SEARCH.CREATE's arguments after the command name. */
export function parseCreate(args: string[]): CreateRequest {
  const name = args[0];
  let dataType: DataType | undefined;
  let prefixes: string[] | undefined;
  let language = 'english';
  let skipInitialScan = false;
  let existsOk = false;
  let i = 1;
  for (; i < args.length; i++) {
    const word = args[i].toUpperCase();
    if (word === 'SCHEMA') break;
    if (word === 'ON') {
      const t = (args[++i] ?? '').toUpperCase();
      if (t !== 'JSON' && t !== 'HASH' && t !== 'STRING')
        throw new SearchError(`ERR invalid data type '${args[i] ?? ''}': expected JSON, HASH or STRING`);
      dataType = t;
    } else if (word === 'PREFIX') {
      const count = Number(args[++i]);
      if (!Number.isInteger(count) || count < 1) throw new SearchError('ERR PREFIX needs a count of at least 1 followed by the prefixes');
      prefixes = args.slice(i + 1, i + 1 + count);
      if (prefixes.length !== count) throw new SearchError('ERR PREFIX count is larger than the prefixes given');
      i += count;
    } else if (word === 'LANGUAGE') {
      language = (args[++i] ?? '').toLowerCase();
      if (!LANGUAGES.includes(language))
        throw new SearchError(`ERR unsupported language '${args[i] ?? ''}'; supported: ${LANGUAGES.join(', ')}`);
    } else if (word === 'SKIPINITIALSCAN') skipInitialScan = true;
    else if (word === 'EXISTSOK') existsOk = true;
    else throw new SearchError(`ERR unexpected argument '${args[i]}' before SCHEMA`);
  }
  if (!dataType) throw new SearchError('ERR ON <JSON|HASH|STRING> is required');
  if (!prefixes) throw new SearchError('ERR PREFIX <count> <prefix> ... is required');
  checkPrefixes(prefixes);
  if (i >= args.length) throw new SearchError('ERR SCHEMA with at least one field is required');
  const fields = parseFields(args.slice(i + 1));
  return { def: { name, dataType, prefixes, language, fields }, skipInitialScan, existsOk };
}

function checkPrefixes(prefixes: string[]): void {
  for (let a = 0; a < prefixes.length; a++) {
    for (let b = 0; b < prefixes.length; b++) {
      if (a === b) continue;
      if (prefixes[a] === prefixes[b]) throw new SearchError(`ERR duplicate prefix '${prefixes[a]}'`);
      if (prefixes[b].startsWith(prefixes[a])) throw new SearchError(`ERR prefix '${prefixes[a]}' overlaps prefix '${prefixes[b]}'`);
    }
  }
}

function parseFields(words: string[]): FieldDef[] {
  if (words.length === 0) throw new SearchError('ERR SCHEMA with at least one field is required');
  const fields: FieldDef[] = [];
  let i = 0;
  while (i < words.length) {
    const name = words[i];
    const type = (words[i + 1] ?? '').toUpperCase() as FieldType;
    if (!FIELD_TYPES.includes(type)) throw new SearchError(`ERR invalid type '${words[i + 1] ?? ''}' of field '${name}'`);
    const field: FieldDef = { name, type, fast: false, noStem: false, noTokenize: false };
    i += 2;
    for (; i < words.length; i++) {
      const opt = words[i].toUpperCase();
      if (opt === 'FAST') {
        if (!FAST_TYPES.includes(type)) throw new SearchError(`ERR FAST is not allowed for field '${name}' of type ${type}`);
        field.fast = true;
      } else if (opt === 'NOSTEM' || opt === 'NOTOKENIZE') {
        if (type !== 'TEXT') throw new SearchError(`ERR ${opt} is only allowed for TEXT fields ('${name}' is ${type})`);
        if (opt === 'NOSTEM') field.noStem = true;
        else field.noTokenize = true;
      } else if (opt === 'FROM') {
        if (i + 1 >= words.length) throw new SearchError(`ERR FROM of field '${name}' needs a source field`);
        field.from = words[++i];
      } else break;
    }
    if (fields.some((f) => f.name === name)) throw new SearchError(`ERR duplicate field '${name}' in SCHEMA`);
    fields.push(field);
  }
  return fields;
}

/** The document path a field reads. */
export function sourceOf(field: FieldDef): string {
  return field.from ?? field.name;
}

/** Whether two definitions index the same way (EXISTSOK). */
export function sameDefinition(a: IndexDef, b: IndexDef): boolean {
  return JSON.stringify({ ...a, name: '' }) === JSON.stringify({ ...b, name: '' });
}

/** SEARCH.DESCRIBE's schema entries: `[name, TYPE, FAST?, NOSTEM?, NOTOKENIZE?, FROM src?]`. */
export function describeSchema(def: IndexDef): ReplyValue[] {
  return def.fields.map((f) => {
    const entry: ReplyValue[] = [f.name, f.type];
    if (f.fast) entry.push('FAST');
    if (f.noStem) entry.push('NOSTEM');
    if (f.noTokenize) entry.push('NOTOKENIZE');
    if (f.from !== undefined) entry.push('FROM', f.from);
    return entry;
  });
}

export function keyMatches(def: IndexDef, key: string): boolean {
  return def.prefixes.some((p) => key.startsWith(p));
}
