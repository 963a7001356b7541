// Embedders: the OpenAI-compatible adapter against a small real HTTP server, and the built-in lexical one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Index } from '@upstash/vector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { Bm25Embedder, LocalLexicalEmbedder } from '../../src/platform/vector/embedders.js';
import { startTestPlatform } from '../helpers/platform.js';

/** A stand-in embeddings API: 3 dimensions = counts of 'a', 'b', 'c' in the text; 'wrong-dim' gives 2. */
let server: http.Server;
let baseUrl: string;
const seen: Array<{ auth?: string; model: string; input: string[] }> = [];
let p: RunningPlatform;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      seen.push({ auth: req.headers.authorization, model, input });
      if (req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error":"not found"}');
        return;
      }
      const count = (t: string, ch: string) => t.split(ch).length - 1;
      const data = input.map((t, index) => ({
        index,
        object: 'embedding',
        embedding: model === 'wrong-dim' ? [1, 2] : [count(t, 'a'), count(t, 'b'), count(t, 'c')],
      }));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  p = await startTestPlatform({
    vectorEmbeddingsUrl: baseUrl,
    vectorEmbeddingsKey: 'sk-test',
    vectorEmbeddingsModel: 'abc-counter',
    vectorIndexes: [
      { name: 'remote', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE', denseEmbedder: 'openai' },
      {
        name: 'remote-bad',
        type: 'DENSE',
        dimension: 3,
        similarityFunction: 'COSINE',
        denseEmbedder: 'openai',
        embeddingsModel: 'wrong-dim',
      },
      {
        name: 'remote-down',
        type: 'DENSE',
        dimension: 3,
        similarityFunction: 'COSINE',
        denseEmbedder: 'openai',
        embeddingsUrl: 'http://127.0.0.1:1/v1',
      },
    ],
  });
});
afterAll(async () => {
  await p?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

const open = (name: string) => new Index({ url: `${p.url}/vector/${name}`, token: p.token, retry: false });

describe('OpenAI-compatible embedder', () => {
  it('embeds upsert-data and query-data through the endpoint, with the model and key', async () => {
    const ix = open('remote');
    await ix.upsert([
      { id: 'as', data: 'aaaa' },
      { id: 'bs', data: 'bbbb' },
      { id: 'cs', data: 'cccc' },
    ]);
    expect(seen.at(-1)).toEqual({ auth: 'Bearer sk-test', model: 'abc-counter', input: ['aaaa', 'bbbb', 'cccc'] });
    const res = await ix.query({ data: 'bb', topK: 3, includeData: true });
    expect(res[0]).toEqual({ id: 'bs', score: 1, data: 'bbbb' });
    expect(res[1].score).toBeCloseTo(0.5, 6); // orthogonal: (1 + 0) / 2
    expect((await ix.info()).denseIndex?.embeddingModel).toBe('abc-counter');
  });

  it('a wrong dimension or an unreachable endpoint is a clear 502', async () => {
    await expect(open('remote-bad').upsert({ id: 'x', data: 'abc' })).rejects.toThrow(
      'The embedding model wrong-dim returned 2 dimensions, but the index has 3',
    );
    await expect(open('remote-down').query({ data: 'abc', topK: 1 })).rejects.toThrow(
      /^The embedding service at http:\/\/127.0.0.1:1\/v1\/embeddings could not be reached/,
    );
  });
});

describe('built-in embedders', () => {
  it('the lexical embedder is deterministic, unit length, and ranks shared words first', async () => {
    const e = new LocalLexicalEmbedder(384);
    const [a, a2, b] = await e.embed(['Hello world', 'hello, WORLD!', 'completely different']);
    expect(Array.from(a)).toEqual(Array.from(a2));
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i], 0);
    const [q] = await e.embed(['world news']);
    expect(cos(q, a)).toBeGreaterThan(cos(q, b));
  });

  it('BM25 documents get saturated term weights, queries weight 1 per distinct term', () => {
    const bm25 = new Bm25Embedder();
    const [doc] = bm25.embed(['apple apple banana'], 'document');
    const [query] = bm25.embed(['banana apple apple'], 'query');
    expect(doc.indices).toEqual(query.indices);
    expect(query.values).toEqual([1, 1]);
    // tf 2 and 1 in a 3-word document: tf·2.2 / (tf + 1.2·(0.25 + 0.75·3/32))
    const norm = 1.2 * (0.25 + (0.75 * 3) / 32);
    const expected = new Map([
      [2, (2 * 2.2) / (2 + norm)],
      [1, 2.2 / (1 + norm)],
    ]);
    expect([...doc.values].sort()).toEqual([...expected.values()].sort());
  });
});
