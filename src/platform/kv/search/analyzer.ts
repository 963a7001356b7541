// Text analysis of TEXT fields, as the service's engine does it: split on every character that is not a
// letter or a digit, drop tokens over 40 bytes, lower-case, then stem with the index's language (Snowball
// algorithms, the same family as the service's stemmers). NOTOKENIZE keeps the whole value as one token;
// NOSTEM skips the stemmer.
import { algorithms, newStemmer } from 'snowball-stemmers';
import type { FieldDef } from './schema.js';

export interface Token {
  term: string;
  position: number;
  /** UTF-16 offsets of the token in the original text (for highlighting). */
  start: number;
  end: number;
}

const MAX_TOKEN_BYTES = 40;
const STEM_CACHE = 200_000;
const WORD = /[\p{L}\p{N}]+/gu;

const stemmers = new Map<string, (word: string) => string>();

/** The stemmer of a language; Greek has none in the Snowball package used, so its words stay whole. */
export function stemmerFor(language: string): (word: string) => string {
  let stem = stemmers.get(language);
  if (!stem) {
    const algorithm = algorithms().includes(language) ? newStemmer(language) : undefined;
    // The Snowball port takes tens of microseconds a word; a vocabulary is small, so stems are cached.
    const cache = new Map<string, string>();
    stem = algorithm
      ? (w: string) => {
          let out = cache.get(w);
          if (out === undefined) {
            if (cache.size >= STEM_CACHE) cache.clear();
            cache.set(w, (out = algorithm.stem(w)));
          }
          return out;
        }
      : (w: string) => w;
    stemmers.set(language, stem);
  }
  return stem;
}

/** Splits text into words with their offsets (no lower-casing, no stemming). */
export function words(text: string): Array<{ word: string; start: number; end: number }> {
  const out: Array<{ word: string; start: number; end: number }> = [];
  for (const m of text.matchAll(WORD)) {
    if (Buffer.byteLength(m[0]) > MAX_TOKEN_BYTES) continue;
    out.push({ word: m[0], start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** The tokens a TEXT field indexes for `text`, positions from `firstPosition`. */
export function analyze(text: string, field: FieldDef, language: string, firstPosition = 0): Token[] {
  if (field.noTokenize) return [{ term: text.toLowerCase(), position: firstPosition, start: 0, end: text.length }];
  const stem = field.noStem ? (w: string) => w : stemmerFor(language);
  return words(text).map((w, i) => ({ term: stem(w.word.toLowerCase()), position: firstPosition + i, start: w.start, end: w.end }));
}

/** The terms of a query text on a TEXT field (the same analysis as indexing). */
export function queryTerms(text: string, field: FieldDef, language: string): string[] {
  return analyze(text, field, language).map((t) => t.term);
}
