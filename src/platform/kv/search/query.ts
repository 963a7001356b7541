// SEARCH.QUERY and SEARCH.COUNT on one index: filter, order, page, and each result as
// `[key, score, content]` (content `[["$", json]]` for JSON/STRING indexes, `[[field, value], …]` for hashes;
// `[key, score]` with NOCONTENT).
import { stemmerFor, words } from './analyzer.js';
import { valuesAt, type Doc, type Scalar } from './documents.js';
import { FilterEvaluator } from './filter.js';
import type { SearchIndex } from './inverted-index.js';
import { applyScoreFunc, parseQueryOptions, type QueryOptions } from './query-options.js';
import { Double, type ReplyValue } from './reply.js';
import { sourceOf, type FieldDef } from './schema.js';

function numeric(v: Scalar | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return typeof v === 'number' ? v : undefined;
}

export function runQuery(index: SearchIndex, filterText: string, args: string[]): ReplyValue {
  const opts = parseQueryOptions(args, index.def);
  const evaluator = new FilterEvaluator(index);
  const matches = evaluator.run(filterText);
  let ranked: Array<{ doc: Doc; score: number; sort?: Scalar }>;
  if (opts.orderBy) {
    const { field, desc } = opts.orderBy;
    ranked = [...matches.keys()].map((doc) => {
      const sort = doc.scalars.get(field)?.[0];
      return { doc, score: numeric(sort) ?? 0, sort };
    });
    ranked.sort((a, b) => {
      if (a.sort === undefined || b.sort === undefined)
        return a.sort === undefined ? (b.sort === undefined ? a.doc.seq - b.doc.seq : 1) : -1;
      if (a.sort === b.sort) return a.doc.seq - b.doc.seq;
      return (a.sort < b.sort ? -1 : 1) * (desc ? -1 : 1);
    });
  } else {
    const sf = opts.scoreFunc;
    ranked = [...matches].map(([doc, score]) => ({
      doc,
      score: sf ? applyScoreFunc(sf, score, (f) => numeric(doc.scalars.get(f)?.[0])) : score,
    }));
    ranked.sort((a, b) => b.score - a.score || a.doc.seq - b.doc.seq);
  }
  const page = ranked.slice(opts.offset, opts.offset + opts.limit);
  return page.map(({ doc, score }) => {
    const head: ReplyValue[] = [doc.key, new Double(score)];
    if (opts.noContent) return head;
    head.push(content(index, doc, opts, evaluator.matchedTerms));
    return head;
  });
}

export function runCount(index: SearchIndex, filterText: string): number {
  return new FilterEvaluator(index).run(filterText).size;
}

/** A document's content as the reply carries it, with SELECT and HIGHLIGHT applied. */
function content(index: SearchIndex, doc: Doc, opts: QueryOptions, matched: Map<string, Set<string>>): ReplyValue {
  const marks = highlighter(index, opts, matched);
  if (doc.source.kind === 'hash') {
    const pairs = doc.source.pairs.map(([f, v]): [string, string] => [f, marks.get(f)?.(v) ?? v]);
    const kept = opts.select ? pairs.filter(([f]) => opts.select!.includes(f)) : pairs;
    return kept.map(([f, v]) => [f, v]);
  }
  let value: unknown = doc.source.value;
  if (marks.size > 0) {
    value = structuredClone(value);
    for (const [path, mark] of marks) applyAt(value, path.split('.'), mark);
  }
  if (!opts.select) return [['$', marks.size > 0 ? JSON.stringify(value) : doc.source.text]];
  const out: ReplyValue[] = [];
  for (const path of opts.select) {
    const found = valuesAt(value, path);
    if (found.length === 0) continue;
    // A path inside arrays may hold several values; a plain path holds one.
    out.push([path, JSON.stringify(found.length === 1 ? found[0] : found)]);
  }
  return out;
}

/** Per document path, a function that wraps the matched words of a text in the highlight tags. */
function highlighter(index: SearchIndex, opts: QueryOptions, matched: Map<string, Set<string>>): Map<string, (text: string) => string> {
  const marks = new Map<string, (text: string) => string>();
  const hl = opts.highlight;
  if (!hl) return marks;
  for (const name of hl.fields) {
    const field = index.def.fields.find((f) => f.name === name)!;
    const terms = matched.get(name);
    if (field.type !== 'TEXT' || !terms || terms.size === 0) continue;
    marks.set(sourceOf(field), (text) => highlightText(text, field, index.def.language, terms, hl.open, hl.close));
  }
  return marks;
}

export function highlightText(text: string, field: FieldDef, language: string, terms: Set<string>, open: string, close: string): string {
  if (field.noTokenize) return terms.has(text.toLowerCase()) ? `${open}${text}${close}` : text;
  const stem = field.noStem ? (w: string) => w : stemmerFor(language);
  let out = '';
  let at = 0;
  for (const w of words(text)) {
    if (!terms.has(stem(w.word.toLowerCase()))) continue;
    out += `${text.slice(at, w.start)}${open}${w.word}${close}`;
    at = w.end;
  }
  return out + text.slice(at);
}

function applyAt(value: unknown, path: string[], mark: (text: string) => string): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (path.length === 0 && typeof v === 'string') value[i] = mark(v);
      else applyAt(v, path, mark);
    });
    return;
  }
  if (value === null || typeof value !== 'object' || path.length === 0) return;
  const obj = value as Record<string, unknown>;
  const [head, ...rest] = path;
  if (!(head in obj)) return;
  if (rest.length === 0 && typeof obj[head] === 'string') obj[head] = mark(obj[head]);
  else applyAt(obj[head], rest, mark);
}
