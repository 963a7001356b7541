// Matching on TEXT fields: term and phrase queries scored with BM25, fuzzy and regex queries over the
// field's term dictionary with a constant score (as the service's engine scores automaton queries).
import type { Doc } from './documents.js';
import type { Postings, SearchIndex } from './inverted-index.js';

export type Scores = Map<Doc, number>;

const K1 = 1.2;
const B = 0.75;

export function idf(index: SearchIndex, postings: Postings | undefined): number {
  const n = postings?.size ?? 0;
  const total = index.docs.size;
  return Math.log(1 + (total - n + 0.5) / (n + 0.5));
}

function bm25(tf: number, length: number, avg: number, weight: number): number {
  const norm = avg > 0 ? 1 - B + (B * length) / avg : 1;
  return (weight * (tf * (K1 + 1))) / (tf + K1 * norm);
}

function fieldLength(doc: Doc, field: string): number {
  return doc.text.get(field)?.length ?? 0;
}

export function termScores(index: SearchIndex, field: string, term: string): Scores {
  const postings = index.terms.get(field)?.get(term);
  const out: Scores = new Map();
  if (!postings) return out;
  const weight = idf(index, postings);
  const avg = index.averageLength(field);
  for (const [doc, positions] of postings) out.set(doc, bm25(positions.length, fieldLength(doc, field), avg, weight));
  return out;
}

/** Terms of the field's dictionary that start with `prefix`. */
export function termsWithPrefix(index: SearchIndex, field: string, prefix: string): string[] {
  return [...(index.terms.get(field)?.keys() ?? [])].filter((t) => t.startsWith(prefix));
}

/**
 * Documents where `terms` occur in order, each at most `slop` position moves from exact adjacency in
 * total; the last term may be any dictionary term it prefixes (`prefix`). Scored by BM25 on the phrase
 * frequency with the summed idf of the terms.
 */
export function phraseScores(
  index: SearchIndex,
  field: string,
  terms: string[],
  slop: number,
  prefix: boolean,
  lastAsTyped?: string,
): Scores {
  const dict = index.terms.get(field);
  const out: Scores = new Map();
  if (!dict || terms.length === 0) return out;
  const last = terms[terms.length - 1];
  // A prefix may be given stemmed ("mous" of "mouse") or as typed ("headpho"): terms starting with either.
  const lastTerms = prefix
    ? [...new Set([...termsWithPrefix(index, field, last), ...(lastAsTyped ? termsWithPrefix(index, field, lastAsTyped) : [])])]
    : [last];
  const lists: Postings[] = [];
  for (const t of terms.slice(0, -1)) {
    const p = dict.get(t);
    if (!p) return out;
    lists.push(p);
  }
  const lastPostings = new Map<Doc, number[]>();
  for (const t of lastTerms) {
    for (const [doc, positions] of dict.get(t) ?? []) lastPostings.set(doc, [...(lastPostings.get(doc) ?? []), ...positions]);
  }
  if (lastTerms.length > 1) for (const positions of lastPostings.values()) positions.sort((a, b) => a - b);
  if (lastPostings.size === 0) return out;
  lists.push(lastPostings);
  const weight = lists.reduce((w, p) => w + idf(index, p), 0);
  const avg = index.averageLength(field);
  const [first, ...rest] = lists;
  for (const [doc, starts] of first) {
    if (!rest.every((p) => p.has(doc))) continue;
    const freq = countPhrase(
      starts,
      rest.map((p) => p.get(doc)!),
      slop,
    );
    if (freq > 0) out.set(doc, bm25(freq, fieldLength(doc, field), avg, weight));
  }
  return out;
}

/** Occurrences of the phrase: from each start, the closest following position of each next term. */
function countPhrase(starts: number[], rest: number[][], slop: number): number {
  let count = 0;
  for (const start of starts) {
    let pos = start;
    let moves = 0;
    let ok = true;
    for (const positions of rest) {
      const next = firstAfter(positions, pos);
      if (next === undefined) {
        ok = false;
        break;
      }
      moves += next - pos - 1;
      pos = next;
    }
    if (ok && moves <= slop) count++;
  }
  return count;
}

/** The first of ascending `positions` greater than `pos` (binary search). */
function firstAfter(positions: number[], pos: number): number | undefined {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid] > pos) hi = mid;
    else lo = mid + 1;
  }
  return positions[lo];
}

/**
 * Edit distance between `a` and `b` (insertions, deletions, substitutions; an adjacent swap is one edit
 * when `transpositions`), or between `a` and the closest prefix of `b` when `prefix`.
 */
export function editDistance(a: string, b: string, transpositions: boolean, prefix: boolean): number {
  const x = [...a];
  const y = [...b];
  const rows: number[][] = [];
  for (let i = 0; i <= x.length; i++) {
    rows.push(new Array<number>(y.length + 1).fill(0));
    rows[i][0] = i;
  }
  for (let j = 0; j <= y.length; j++) rows[0][j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (transpositions && i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i][j] = d;
    }
  }
  return prefix ? Math.min(...rows[x.length]) : rows[x.length][y.length];
}

/** Dictionary terms within `distance` edits of `word` (or of a prefix of the term). */
export function fuzzyTerms(
  index: SearchIndex,
  field: string,
  word: string,
  distance: number,
  transpositions: boolean,
  prefix: boolean,
): string[] {
  const out: string[] = [];
  const len = [...word].length;
  for (const term of index.terms.get(field)?.keys() ?? []) {
    if (!prefix && Math.abs([...term].length - len) > distance) continue;
    if (editDistance(word, term, transpositions, prefix) <= distance) out.push(term);
  }
  return out;
}

/** Documents holding any of `terms`, each with the constant score `score`. */
export function constantScores(index: SearchIndex, field: string, terms: string[], score = 1): Scores {
  const out: Scores = new Map();
  const dict = index.terms.get(field);
  for (const t of terms) for (const doc of dict?.get(t)?.keys() ?? []) out.set(doc, score);
  return out;
}
