// Embedders turn the `data` text of upsert-data / query-data into vectors. No sentence-embedding model
// can be downloaded here, so the built-in dense embedder is LEXICAL (hashed words and character trigrams):
// texts sharing words score high, synonyms do not. For semantic search point an index at an
// OpenAI-compatible /v1/embeddings endpoint. BM25 gives sparse vectors, as the service's hosted BM25 does.
import type { SparseVector } from './scores.js';

export interface DenseEmbedder {
  /** Shown by /info as denseIndex.embeddingModel. */
  readonly model: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface SparseEmbedder {
  readonly model: string;
  /** Documents get BM25 term weights; queries get weight 1 per distinct term (IDF weighting applies at query time). */
  embed(texts: string[], role: 'document' | 'query'): SparseVector[];
}

/** Lower-cased words of letters and digits, in any script. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class LocalLexicalEmbedder implements DenseEmbedder {
  readonly model = 'respgate-lexical-v1';
  constructor(private readonly dimension: number) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimension);
    const add = (feature: string, weight: number) => {
      const h = fnv1a(feature);
      // the sign from another hash keeps unrelated features from adding up (feature hashing)
      v[h % this.dimension] += (fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1) * weight;
    };
    for (const w of words(text)) {
      add('w:' + w, 1);
      const padded = `^${w}$`;
      for (let i = 0; i + 3 <= padded.length; i++) add('t:' + padded.slice(i, i + 3), 0.5);
    }
    let n = 0;
    for (let i = 0; i < v.length; i++) n += v[i] * v[i];
    n = Math.sqrt(n);
    if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
    return v;
  }
}

/** BM25 with the service's constants: k1 = 1.2, b = 0.75, average document length 32. Terms hash to 31-bit indices. */
export class Bm25Embedder implements SparseEmbedder {
  readonly model = 'BM25';
  private static readonly K1 = 1.2;
  private static readonly B = 0.75;
  private static readonly AVG_LEN = 32;

  embed(texts: string[], role: 'document' | 'query'): SparseVector[] {
    return texts.map((text) => {
      const tf = new Map<number, number>();
      const ws = words(text);
      for (const w of ws) {
        const idx = fnv1a(w) & 0x7fffffff;
        tf.set(idx, (tf.get(idx) ?? 0) + 1);
      }
      const indices = [...tf.keys()].sort((a, b) => a - b);
      const { K1, B, AVG_LEN } = Bm25Embedder;
      const values = indices.map((i) => {
        if (role === 'query') return 1;
        const f = tf.get(i)!;
        return (f * (K1 + 1)) / (f + K1 * (1 - B + (B * ws.length) / AVG_LEN));
      });
      return { indices, values };
    });
  }
}

export class EmbedderError extends Error {}

/** A client of an OpenAI-compatible embeddings API (`POST <url>/embeddings`, body {model, input}). */
export class OpenAiEmbedder implements DenseEmbedder {
  private readonly endpoint: string;
  constructor(
    url: string,
    readonly model: string,
    private readonly apiKey: string | undefined,
    private readonly dimension: number,
    private readonly timeoutMs = 30_000,
  ) {
    const base = url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/embeddings') ? base : `${base}/embeddings`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(this.apiKey ? { Authorization: `Bearer ${this.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.model, input: texts }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new EmbedderError(
        `The embedding service at ${this.endpoint} could not be reached (${(err as Error).message}); check --vector-embeddings-url`,
      );
    }
    const text = await res.text();
    if (!res.ok) throw new EmbedderError(`The embedding service at ${this.endpoint} answered ${res.status}: ${text.slice(0, 200)}`);
    let body: { data?: Array<{ embedding?: number[]; index?: number }> };
    try {
      body = JSON.parse(text);
    } catch {
      throw new EmbedderError(`The embedding service at ${this.endpoint} did not answer JSON`);
    }
    if (!Array.isArray(body.data) || body.data.length !== texts.length) {
      throw new EmbedderError(
        `The embedding service at ${this.endpoint} returned ${body.data?.length ?? 'no'} embeddings for ${texts.length} texts`,
      );
    }
    const out = new Array<Float32Array>(texts.length);
    body.data.forEach((d, i) => {
      const e = d.embedding;
      if (!Array.isArray(e) || e.length !== this.dimension) {
        throw new EmbedderError(
          `The embedding model ${this.model} returned ${Array.isArray(e) ? e.length : 'no'} dimensions, but the index has ${this.dimension}`,
        );
      }
      out[d.index ?? i] = Float32Array.from(e);
    });
    return out;
  }
}
