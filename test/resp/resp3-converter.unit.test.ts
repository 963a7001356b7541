// Unit tests of the RESP2→RESP3 converter and the /multi-exec JSON decoder on their own: edge cases
// (errors, type mismatches, malformed input) and properties over random replies and shapes. Their
// fidelity to Redis is checked against redis-server in resp3-reply-types.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { arrayOf, mapOf, pairsOf, setOf, tupleOf, type ReplyShape } from '../../src/resp/reply-shape.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';
import { jsonToResp } from '../../src/upstream/json-to-resp.js';

const b = (s: string) => Buffer.from(s, 'latin1');
const conv = (reply: string, shape: ReplyShape) => toResp3(b(reply), shape).toString('latin1');

describe('toResp3', () => {
  it('passes errors, integers and statuses through, and returns the same buffer when nothing changes', () => {
    const reply = b('*2\r\n$1\r\na\r\n:1\r\n');
    expect(toResp3(reply, 'any')).toBe(reply);
    expect(conv('-ERR x\r\n', mapOf())).toBe('-ERR x\r\n');
    expect(conv('+OK\r\n', 'double')).toBe('+OK\r\n');
    expect(conv(':5\r\n', setOf('bulk'))).toBe(':5\r\n');
  });

  it('turns every null into _, at any depth', () => {
    expect(conv('$-1\r\n', 'any')).toBe('_\r\n');
    expect(conv('*-1\r\n', mapOf())).toBe('_\r\n');
    expect(conv('*3\r\n$-1\r\n*2\r\n*-1\r\n$1\r\nx\r\n:0\r\n', 'any')).toBe('*3\r\n_\r\n*2\r\n_\r\n$1\r\nx\r\n:0\r\n');
    // "-1\r\n" inside a bulk string is data, not a null
    expect(conv('*1\r\n$4\r\n-1\r\n\r\n', 'any')).toBe('*1\r\n$4\r\n-1\r\n\r\n');
  });

  it('maps, sets, pairs, doubles, verbatim text, booleans', () => {
    expect(conv('*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n', mapOf('bulk'))).toBe(
      '%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n',
    );
    expect(conv('*2\r\n*2\r\n$1\r\nk\r\n*0\r\n*2\r\n$1\r\nl\r\n*-1\r\n', mapOf(arrayOf('any'), undefined, { resp2: 'nested' }))).toBe(
      '%2\r\n$1\r\nk\r\n*0\r\n$1\r\nl\r\n_\r\n',
    );
    expect(conv('*2\r\n$1\r\na\r\n$1\r\nb\r\n', setOf('bulk'))).toBe('~2\r\n$1\r\na\r\n$1\r\nb\r\n');
    expect(conv('*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$3\r\ninf\r\n', pairsOf('bulk', 'double'))).toBe(
      '*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,inf\r\n',
    );
    expect(conv('$2\r\nhi\r\n', 'verbatim')).toBe('=6\r\ntxt:hi\r\n');
    expect(conv(':1\r\n', 'bool')).toBe('#t\r\n');
    expect(conv(':0\r\n', 'bool')).toBe('#f\r\n');
    expect(conv(':2\r\n', 'bool')).toBe(':2\r\n');
    const fields = mapOf('any', { ratio: 'double' });
    expect(conv('*4\r\n$5\r\nratio\r\n$3\r\n0.5\r\n$5\r\nother\r\n$3\r\n0.5\r\n', fields)).toBe(
      '%2\r\n$5\r\nratio\r\n,0.5\r\n$5\r\nother\r\n$3\r\n0.5\r\n',
    );
  });

  it('falls back to copying (nulls converted) when the reply does not have the expected shape', () => {
    expect(conv('*3\r\n$1\r\na\r\n$1\r\nb\r\n$-1\r\n', mapOf())).toBe('*3\r\n$1\r\na\r\n$1\r\nb\r\n_\r\n');
    expect(conv('*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n', pairsOf('bulk', 'double'))).toBe('*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n');
    expect(conv('*1\r\n$1\r\na\r\n', mapOf('any', undefined, { resp2: 'nested' }))).toBe('*1\r\n$1\r\na\r\n');
  });

  it('leaves malformed or incomplete input alone', () => {
    for (const bad of ['*2\r\n$1\r\na\r\n', '$5\r\nab', '']) expect(conv(bad, mapOf())).toBe(bad);
  });

  // Random RESP2 replies and shapes: the output is always one complete reply, and with `any` it is the
  // input with its nulls replaced. Each reply is generated with its expected `any` conversion.
  const leaf: fc.Arbitrary<[string, string]> = fc.oneof(
    fc.string({ maxLength: 8 }).map((s): [string, string] => {
      const bulk = `$${Buffer.byteLength(s, 'latin1')}\r\n${s}\r\n`;
      return [bulk, bulk];
    }),
    fc.integer().map((n): [string, string] => [`:${n}\r\n`, `:${n}\r\n`]),
    fc.constantFrom<[string, string]>(
      ['$-1\r\n', '_\r\n'],
      ['*-1\r\n', '_\r\n'],
      ['+OK\r\n', '+OK\r\n'],
      ['-ERR e\r\n', '-ERR e\r\n'],
      ['$3\r\n1.5\r\n', '$3\r\n1.5\r\n'],
    ),
  );
  const pair: fc.Arbitrary<[string, string]> = fc.letrec<{ r: [string, string] }>((tie) => ({
    r: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc
        .array(tie('r'), { maxLength: 6 })
        .map((items): [string, string] => [
          `*${items.length}\r\n${items.map((i) => i[0]).join('')}`,
          `*${items.length}\r\n${items.map((i) => i[1]).join('')}`,
        ]),
    ),
  })).r;
  const reply = pair.map((p) => p[0]);
  const shape: fc.Arbitrary<ReplyShape> = fc.letrec<{ s: ReplyShape }>((tie) => ({
    s: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom<ReplyShape>('any', 'bulk', 'status', 'int', 'double', 'verbatim', 'bool'),
      tie('s').map((s) => arrayOf(s)),
      tie('s').map((s) => setOf(s)),
      tie('s').map((s) => mapOf(s)),
      tie('s').map((s) => mapOf(s, undefined, { resp2: 'nested' })),
      fc.tuple(tie('s'), tie('s')).map(([a, c]) => pairsOf(a, c)),
      fc.array(tie('s'), { maxLength: 3 }).map((items) => tupleOf(items)),
    ),
  })).s;

  it('always writes exactly one complete reply', () => {
    fc.assert(
      fc.property(reply, shape, (r, s) => {
        const out = toResp3(b(r), s);
        expect(scanReply(out, 0)).toBe(out.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('with shape `any`, changes nothing but the nulls', () => {
    fc.assert(
      fc.property(pair, ([r, expected]) => {
        expect(toResp3(b(r), 'any').toString('latin1')).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('jsonToResp', () => {
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');

  it('OK is the status reply; other strings are base64 of bulk strings, statuses, doubles or verbatim text by shape', () => {
    expect(jsonToResp('OK', 'bulk', 2).toString()).toBe('+OK\r\n');
    expect(jsonToResp(b64('OK'), 'any', 2).toString()).toBe('$2\r\nOK\r\n');
    expect(jsonToResp(b64('string'), 'status', 3).toString()).toBe('+string\r\n');
    expect(jsonToResp(b64('1.5'), 'double', 2).toString()).toBe('$3\r\n1.5\r\n');
    expect(jsonToResp(b64('1.5'), 'double', 3).toString()).toBe(',1.5\r\n');
    expect(jsonToResp(b64('hi'), 'verbatim', 3).toString()).toBe('=6\r\ntxt:hi\r\n');
    expect(jsonToResp('', 'bulk', 2).toString()).toBe('$0\r\n\r\n');
    const binary = Buffer.from([0, 255, 13, 10]);
    expect(jsonToResp(binary.toString('base64'), 'bulk', 2)).toEqual(Buffer.concat([b('$4\r\n'), binary, b('\r\n')]));
  });

  it('null is $-1 or *-1 by shape in RESP2, _ in RESP3; a string that is not base64 is a nested error', () => {
    expect(jsonToResp(null, 'bulk', 2).toString()).toBe('$-1\r\n');
    expect(jsonToResp(null, arrayOf('bulk'), 2).toString()).toBe('*-1\r\n');
    expect(jsonToResp(null, tupleOf(['bulk'], { nil: 'bulk' }), 2).toString()).toBe('$-1\r\n');
    expect(jsonToResp(null, arrayOf('bulk'), 3).toString()).toBe('_\r\n');
    expect(jsonToResp([1, 'ERR inner'], 'any', 2).toString()).toBe('*2\r\n:1\r\n-ERR inner\r\n');
  });

  it('maps, sets and pairs come as flat arrays and are restructured for RESP3 only', () => {
    const flat = [b64('a'), b64('1'), b64('b'), b64('2')];
    expect(jsonToResp(flat, mapOf('bulk'), 2).toString()).toBe('*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n');
    expect(jsonToResp(flat, mapOf('bulk'), 3).toString()).toBe('%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n');
    expect(jsonToResp(flat, pairsOf('bulk', 'double'), 3).toString()).toBe('*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n');
    expect(jsonToResp(flat, setOf('bulk'), 3).toString().startsWith('~4\r\n')).toBe(true);
    const nested = [[b64('s'), [[b64('1-1'), [b64('f'), b64('v')]]]]];
    const xread = mapOf(arrayOf(tupleOf(['bulk', arrayOf('bulk')])), undefined, { resp2: 'nested' });
    expect(jsonToResp(nested, xread, 2).toString()).toBe('*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n');
    expect(jsonToResp(nested, xread, 3).toString()).toBe('%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n');
  });
});
