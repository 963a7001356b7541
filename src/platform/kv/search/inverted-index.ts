// The contents of one index in memory: its documents by key and, per TEXT field, an inverted index
// (term → documents → positions) with the statistics BM25 needs. Rebuilt from the data store at start
// (sync.ts), so only the definition is persisted.
import { buildDoc, type Doc, type Source } from './documents.js';
import type { IndexDef } from './schema.js';

export type Postings = Map<Doc, number[]>;

export class SearchIndex {
  readonly docs = new Map<string, Doc>();
  /** Per TEXT field: term → postings. */
  readonly terms = new Map<string, Map<string, Postings>>();
  /** Per TEXT field: total tokens over all documents. */
  private readonly totalLength = new Map<string, number>();
  private seq = 0;

  constructor(readonly def: IndexDef) {
    for (const f of def.fields) if (f.type === 'TEXT') this.terms.set(f.name, new Map());
  }

  /** Adds or replaces the document of `key`. */
  put(key: string, source: Source): void {
    this.remove(key);
    const doc = buildDoc(this.def, key, ++this.seq, source);
    this.docs.set(key, doc);
    for (const [field, value] of doc.text) {
      const dict = this.terms.get(field)!;
      for (const tokens of value.tokens) {
        for (const t of tokens) {
          let postings = dict.get(t.term);
          if (!postings) dict.set(t.term, (postings = new Map()));
          let positions = postings.get(doc);
          if (!positions) postings.set(doc, (positions = []));
          positions.push(t.position);
        }
      }
      this.totalLength.set(field, (this.totalLength.get(field) ?? 0) + value.length);
    }
  }

  remove(key: string): void {
    const doc = this.docs.get(key);
    if (!doc) return;
    this.docs.delete(key);
    for (const [field, value] of doc.text) {
      const dict = this.terms.get(field)!;
      for (const tokens of value.tokens) {
        for (const t of tokens) {
          const postings = dict.get(t.term);
          if (!postings) continue;
          postings.delete(doc);
          if (postings.size === 0) dict.delete(t.term);
        }
      }
      this.totalLength.set(field, (this.totalLength.get(field) ?? 0) - value.length);
    }
  }

  clear(): void {
    for (const key of [...this.docs.keys()]) this.remove(key);
  }

  /** Average field length over all documents (BM25; documents without the field count as 0, as Tantivy). */
  averageLength(field: string): number {
    const n = this.docs.size;
    return n === 0 ? 0 : (this.totalLength.get(field) ?? 0) / n;
  }

  /** A rough size in bytes of the indexed data (SEARCH.DESCRIBE indexSize). */
  sizeInBytes(): number {
    let size = 0;
    for (const doc of this.docs.values()) {
      size +=
        doc.key.length +
        (doc.source.kind === 'json' ? doc.source.text.length : doc.source.pairs.reduce((n, [f, v]) => n + f.length + v.length, 0));
    }
    return size;
  }
}
