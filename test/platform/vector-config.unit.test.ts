// Index definitions from a --vector-config file: merged with the defaults, and clear errors for bad ones.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_INDEXES, loadVectorConfigFile, VectorConfigError } from '../../src/platform/vector/config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'respgate-vector-config-'));
function file(content: unknown): string {
  const p = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

describe('--vector-config', () => {
  it('adds indexes to the four defaults; one with a default name replaces it; defaults:false keeps only the file', () => {
    const merged = loadVectorConfigFile(
      file({
        indexes: [
          { name: 'docs', type: 'dense', dimension: 8, similarityFunction: 'dot_product' },
          { name: 'sparse', type: 'SPARSE' },
        ],
      }),
    );
    expect(merged.map((i) => i.name)).toEqual(['dense', 'dense-data', 'hybrid', 'docs', 'sparse']);
    expect(merged.find((i) => i.name === 'docs')).toEqual({ name: 'docs', type: 'DENSE', dimension: 8, similarityFunction: 'DOT_PRODUCT' });
    expect(merged.find((i) => i.name === 'sparse')).toEqual({ name: 'sparse', type: 'SPARSE' });
    expect(loadVectorConfigFile(file({ defaults: false, indexes: [{ name: 'only', type: 'SPARSE', sparseEmbedder: 'BM25' }] }))).toEqual([
      { name: 'only', type: 'SPARSE', sparseEmbedder: 'bm25' },
    ]);
    expect(DEFAULT_INDEXES.map((i) => i.name)).toEqual(['dense', 'dense-data', 'sparse', 'hybrid']);
  });

  const bad: Array<[string, unknown, string]> = [
    ['not JSON', '{', 'is not valid JSON'],
    ['no indexes array', { indexes: 3 }, 'must hold {"indexes": [ ... ]}'],
    ['bad name', { indexes: [{ name: 'a/b', type: 'DENSE', dimension: 2 }] }, 'indexes[0]: "name" must be 1-64 letters'],
    ['bad type', { indexes: [{ name: 'x', type: 'FLAT' }] }, '(index \'x\'): "type" must be DENSE, SPARSE or HYBRID'],
    ['no dimension', { indexes: [{ name: 'x', type: 'DENSE' }] }, '"dimension" must be a whole number from 1 to 16384'],
    [
      'bad metric',
      { indexes: [{ name: 'x', type: 'DENSE', dimension: 3, similarityFunction: 'L1' }] },
      '"similarityFunction" must be one of COSINE, EUCLIDEAN, DOT_PRODUCT',
    ],
    [
      'half-embedded hybrid',
      { indexes: [{ name: 'x', type: 'HYBRID', dimension: 3, denseEmbedder: 'local' }] },
      'a HYBRID index has both embedders',
    ],
    [
      'dense with a sparse embedder',
      { indexes: [{ name: 'x', type: 'DENSE', dimension: 3, sparseEmbedder: 'bm25' }] },
      'a DENSE index has no "sparseEmbedder"',
    ],
    [
      'twice the same name',
      {
        indexes: [
          { name: 'x', type: 'SPARSE' },
          { name: 'x', type: 'SPARSE' },
        ],
      },
      "index 'x' is defined twice",
    ],
  ];
  it.each(bad)('refuses %s', (_what, content, message) => {
    const p = file(content);
    expect(() => loadVectorConfigFile(p)).toThrow(VectorConfigError);
    expect(() => loadVectorConfigFile(p)).toThrow(message);
  });

  it('names a missing file', () => {
    expect(() => loadVectorConfigFile(path.join(dir, 'nope.json'))).toThrow(
      `--vector-config: cannot read ${path.join(dir, 'nope.json')} (ENOENT)`,
    );
  });
});
