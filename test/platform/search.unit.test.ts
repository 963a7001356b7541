// The pure parts of Upstash Redis Search on the platform, in process: analysis, edit distance, the engine's
// order of tied $terms buckets, SEARCH.CREATE and SEARCH.QUERY option parsing, filters and aggregations over
// an in-memory index.
import { describe, expect, it } from 'vitest';
import { Aggregator } from '../../src/platform/kv/search/aggregate.js';
import { analyze } from '../../src/platform/kv/search/analyzer.js';
import { jsonSource } from '../../src/platform/kv/search/documents.js';
import { FilterEvaluator } from '../../src/platform/kv/search/filter.js';
import { SearchIndex } from '../../src/platform/kv/search/inverted-index.js';
import { highlightText } from '../../src/platform/kv/search/query.js';
import { applyScoreFunc, fieldValueScore, parseQueryOptions } from '../../src/platform/kv/search/query-options.js';
import { encodeReply, Double } from '../../src/platform/kv/search/reply.js';
import { parseCreate, type FieldDef } from '../../src/platform/kv/search/schema.js';
import { editDistance } from '../../src/platform/kv/search/text-match.js';
import { engineOrder } from '../../src/platform/kv/search/term-order.js';

const text = (extra: Partial<FieldDef> = {}): FieldDef => ({
  name: 't',
  type: 'TEXT',
  fast: false,
  noStem: false,
  noTokenize: false,
  ...extra,
});

function indexOf(docs: Array<Record<string, unknown>>): SearchIndex {
  const { def } = parseCreate(
    'idx ON JSON PREFIX 1 d: SCHEMA title TEXT body TEXT NOSTEM tag KEYWORD price F64 FAST when DATE FAST live BOOL FAST cat FACET'.split(
      ' ',
    ),
  );
  const index = new SearchIndex(def);
  docs.forEach((d, i) => index.put(`d:${i}`, jsonSource(JSON.stringify(d))!));
  return index;
}

const keys = (index: SearchIndex, filter: object) =>
  [...new FilterEvaluator(index).run(JSON.stringify(filter)).keys()].map((d) => d.key).sort();

describe('analysis', () => {
  it('splits on non-alphanumerics, lower-cases, stems; NOTOKENIZE and NOSTEM as documented', () => {
    expect(analyze('SKU-12345-BLK user@example.com', text(), 'english').map((t) => t.term)).toEqual([
      'sku',
      '12345',
      'blk',
      'user',
      'exampl',
      'com',
    ]);
    expect(analyze('Running studies', text(), 'english').map((t) => t.term)).toEqual(['run', 'studi']);
    expect(analyze('Running studies', text({ noStem: true }), 'english').map((t) => t.term)).toEqual(['running', 'studies']);
    expect(analyze('SKU-1 Black', text({ noTokenize: true }), 'english').map((t) => t.term)).toEqual(['sku-1 black']);
    expect(analyze(`a ${'x'.repeat(41)} b`, text(), 'english').map((t) => t.position)).toEqual([0, 1]);
    expect(analyze('kitaplar', text(), 'turkish').map((t) => t.term)).toEqual(['kitap']);
  });

  it('highlights the words whose terms matched, keeping the original text', () => {
    expect(highlightText('Runs and running, RUN!', text(), 'english', new Set(['run']), '<b>', '</b>')).toBe(
      '<b>Runs</b> and <b>running</b>, <b>RUN</b>!',
    );
  });
});

describe('edit distance', () => {
  it('counts a transposition as one edit only when asked; prefix mode measures against the closest prefix', () => {
    expect(editDistance('haedphone', 'headphone', true, false)).toBe(1);
    expect(editDistance('haedphone', 'headphone', false, false)).toBe(2);
    expect(editDistance('headpho', 'headphones', true, false)).toBe(3);
    expect(editDistance('haedpho', 'headphones', true, true)).toBe(1);
  });
});

describe("the engine's order of tied $terms buckets", () => {
  it('matches the order the service returns for F64 keys 0, 1, 2 (the SDK test expects 2, 0, 1)', () => {
    expect(engineOrder('F64', [0, 1, 2])).toEqual([2, 0, 1]);
    expect(engineOrder('KEYWORD', ['a', 'b'])).toBeUndefined();
    expect([...engineOrder('U64', [1, 2, 3, 4, 5, 6, 7, 8, 9])!].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('SEARCH.CREATE parsing', () => {
  it('takes the options in the SDK order and in the reference order', () => {
    const sdk = parseCreate(
      'p SKIPINITIALSCAN EXISTSOK ON JSON PREFIX 2 a: b: LANGUAGE german SCHEMA x TEXT NOSTEM FROM y n U64 FAST'.split(' '),
    );
    const ref = parseCreate(
      'p ON JSON PREFIX 2 a: b: LANGUAGE german SKIPINITIALSCAN EXISTSOK SCHEMA x TEXT FROM y NOSTEM n U64 FAST'.split(' '),
    );
    expect(sdk).toEqual(ref);
    expect(sdk).toMatchObject({
      skipInitialScan: true,
      existsOk: true,
      def: {
        dataType: 'JSON',
        prefixes: ['a:', 'b:'],
        language: 'german',
        fields: [
          { name: 'x', noStem: true, from: 'y' },
          { name: 'n', type: 'U64', fast: true },
        ],
      },
    });
  });

  it('refuses what the reference does not allow', () => {
    const bad = (line: string) => () => parseCreate(line.split(' '));
    expect(bad('p ON LIST PREFIX 1 a: SCHEMA x TEXT')).toThrow("ERR invalid data type 'LIST': expected JSON, HASH or STRING");
    expect(bad('p ON HASH SCHEMA x TEXT')).toThrow('ERR PREFIX <count> <prefix> ... is required');
    expect(bad('p ON HASH PREFIX 3 a:')).toThrow('ERR PREFIX count is larger than the prefixes given');
    expect(bad('p ON HASH PREFIX 2 a: a: SCHEMA x TEXT')).toThrow("ERR duplicate prefix 'a:'");
    expect(bad('p ON HASH PREFIX 1 a: LANGUAGE klingon SCHEMA x TEXT')).toThrow("ERR unsupported language 'klingon'");
    expect(bad('p ON HASH PREFIX 1 a: SCHEMA x VECTOR')).toThrow("ERR invalid type 'VECTOR' of field 'x'");
    expect(bad('p ON HASH PREFIX 1 a: SCHEMA x F64 NOSTEM')).toThrow("ERR NOSTEM is only allowed for TEXT fields ('x' is F64)");
    expect(bad('p ON HASH PREFIX 1 a: SCHEMA x TEXT x F64')).toThrow("ERR duplicate field 'x' in SCHEMA");
    expect(bad('p ON HASH PREFIX 1 a:')).toThrow('ERR SCHEMA with at least one field is required');
  });
});

describe('SEARCH.QUERY options and score functions', () => {
  const { def } = parseCreate('p ON HASH PREFIX 1 a: SCHEMA t TEXT n U64 FAST m F64'.split(' '));
  it('parses SCOREFUNC in the SDK order (SCOREMODE before FIELDVALUE)', () => {
    const opts = parseQueryOptions(
      'SCOREFUNC COMBINEMODE SUM SCOREMODE REPLACE FIELDVALUE n MODIFIER LOG1P FACTOR 2 MISSING 1 LIMIT 5'.split(' '),
      def,
    );
    expect(opts).toMatchObject({
      limit: 5,
      scoreFunc: { combineMode: 'SUM', scoreMode: 'REPLACE', fields: [{ field: 'n', modifier: 'LOG1P', factor: 2, missing: 1 }] },
    });
    expect(() => parseQueryOptions('SCOREFUNC FIELDVALUE m'.split(' '), def)).toThrow("ERR SCOREFUNC needs a FAST field; 'm' is not FAST");
    expect(() => parseQueryOptions('HIGHLIGHT FIELDS 1 zz'.split(' '), def)).toThrow("ERR unknown field 'zz' in HIGHLIGHT");
    expect(() => parseQueryOptions(['FROB'], def)).toThrow("ERR unknown option 'FROB'");
  });

  it('uses MISSING for absent or unfit values, as the query guide says', () => {
    const fn = { field: 'n', modifier: 'LOG' as const, factor: 3, missing: 100 };
    expect(fieldValueScore(fn, 1000)).toBeCloseTo(9);
    expect(fieldValueScore(fn, undefined)).toBeCloseTo(6);
    expect(fieldValueScore(fn, -5)).toBeCloseTo(6);
    expect(fieldValueScore({ ...fn, missing: -1 }, -5)).toBe(-3);
    const sf = { fields: [fn], scoreMode: 'SUM' as const, combineMode: 'MULTIPLY' as const };
    expect(applyScoreFunc(sf, 1, () => 10)).toBeCloseTo(4);
  });
});

describe('filters over an in-memory index', () => {
  const index = indexOf([
    {
      title: 'wireless noise cancelling headphones',
      body: 'running shoes',
      tag: 'b',
      price: 10,
      when: '2026-01-01T00:00:00Z',
      live: true,
      cat: '/a/b',
    },
    {
      title: 'wireless bluetooth noise headphones',
      body: 'runner',
      tag: 'c',
      price: 20,
      when: '2026-02-01T00:00:00Z',
      live: false,
      cat: '/a/c',
    },
    { title: 'cancelling noise', tag: 'a', price: 30, cat: '/z' },
  ]);

  it('phrases need order and adjacency; slop allows moves; prefix completes the last word', () => {
    expect(keys(index, { title: { $phrase: 'noise cancelling' } })).toEqual(['d:0']);
    expect(keys(index, { title: { $phrase: { value: 'wireless headphones', slop: 1 } } })).toEqual([]);
    expect(keys(index, { title: { $phrase: { value: 'wireless headphones', slop: 2 } } })).toEqual(['d:0', 'd:1']);
    expect(keys(index, { title: { $phrase: { value: 'headphones wireless', slop: 5 } } })).toEqual([]);
    expect(keys(index, { title: { $phrase: { value: 'noise cancel', prefix: true } } })).toEqual(['d:0']);
  });

  it('keywords compare as strings, dates as instants, facets match their descendants', () => {
    expect(keys(index, { tag: { $gte: 'b' } })).toEqual(['d:0', 'd:1']);
    expect(keys(index, { when: { $lt: '2026-01-15T00:00:00Z' } })).toEqual(['d:0']);
    expect(keys(index, { cat: '/a' })).toEqual(['d:0', 'd:1']);
    expect(keys(index, { body: { $eq: 'run' } })).toEqual([]); // NOSTEM: "running" stays whole
    expect(keys(index, { $should: { tag: 'a', price: 10 } })).toEqual(['d:0', 'd:2']);
  });

  it('aggregates: histogram fills empty buckets, dateHistogram keys, percentiles keys', () => {
    const docs = [...index.docs.values()];
    const agg = new Aggregator(index.def);
    expect(agg.run({ h: { $histogram: { field: 'price', interval: 10, offset: 5 } } }, docs)).toEqual([
      'h',
      [
        'buckets',
        [
          ['key', 5, 'docCount', 1],
          ['key', 15, 'docCount', 1],
          ['key', 25, 'docCount', 1],
        ],
      ],
    ]);
    expect(agg.run({ d: { $dateHistogram: { field: 'when', fixedInterval: '31d' } } }, docs.slice(0, 1))).toEqual([
      'd',
      ['buckets', [['key', 1765065600000, 'docCount', 1, 'keyAsString', '2025-12-07T00:00:00Z']]],
    ]);
    expect(agg.run({ p: { $percentiles: { field: 'price', percents: [50] } } }, docs)).toEqual(['p', ['values', ['50.0', new Double(20)]]]);
    expect(() => agg.run({ x: { $terms: { field: 'price' }, $aggs: { y: { $facet: { field: 'cat', path: '/' } } } } }, docs)).toThrow(
      'ERR $facet cannot be a sub-aggregation',
    );
  });
});

describe('replies', () => {
  it('encodes doubles as bulk strings and integers as integers', () => {
    expect(encodeReply(['a', 1, new Double(1.5), null, [new Double(2)]]).toString()).toBe(
      '*5\r\n$1\r\na\r\n:1\r\n$3\r\n1.5\r\n$-1\r\n*1\r\n$1\r\n2\r\n',
    );
  });
});
