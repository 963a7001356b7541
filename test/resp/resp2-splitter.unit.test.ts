// isResp2 and splitResp2Replies decide whether upstream reply bytes may reach a client. It reads lengths and integers
// with byte loops (CPU per command, issue 14); these tests pin its verdicts, and compare it with the
// regular-expression version it replaced on generated replies, valid and broken.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitReplies } from '../../src/resp/reply-scanner.js';
import { isResp2, splitResp2Ranges, splitResp2Replies } from '../../src/resp/resp2-splitter.js';

/** The previous implementation, kept as the reference. */
function reference(reply: Buffer): boolean {
  let pos = 0;
  let pending = 1;
  while (pending > 0) {
    if (pos >= reply.length) return false;
    const type = reply[pos];
    const lineEnd = reply.indexOf(13, pos + 1);
    if (lineEnd < 0 || reply[lineEnd + 1] !== 10) return false;
    pending--;
    switch (type) {
      case 0x2b:
      case 0x2d:
        pos = lineEnd + 2;
        break;
      case 0x3a:
        if (!/^-?\d+$/.test(reply.toString('latin1', pos + 1, lineEnd))) return false;
        pos = lineEnd + 2;
        break;
      case 0x24:
      case 0x2a: {
        const text = reply.toString('latin1', pos + 1, lineEnd);
        if (!/^(-1|\d+)$/.test(text)) return false;
        const n = Number(text);
        pos = lineEnd + 2;
        if (type === 0x24) {
          if (n >= 0) {
            if (reply[pos + n] !== 13 || reply[pos + n + 1] !== 10) return false;
            pos += n + 2;
          }
        } else if (n > 0) pending += n;
        break;
      }
      default:
        return false;
    }
  }
  return pos === reply.length;
}

const b = (s: string) => Buffer.from(s, 'latin1');

describe('isResp2', () => {
  it('accepts RESP2 replies', () => {
    for (const s of [
      '+OK\r\n',
      '-ERR x\r\n',
      ':0\r\n',
      ':-12\r\n',
      ':007\r\n',
      '$-1\r\n',
      '$0\r\n\r\n',
      '$3\r\na\r\n\r\n',
      '*-1\r\n',
      '*0\r\n',
      '*2\r\n$1\r\na\r\n:1\r\n',
      '$02\r\nab\r\n',
    ])
      expect(isResp2(b(s)), s).toBe(true);
  });

  it('finds each line end as indexOf did: long lines, a CR without LF, no CR, a CR as the last byte', () => {
    const long = `+${'x'.repeat(5000)}\r\n`;
    for (const s of [long, `-ERR ${'y'.repeat(300)}\r\n`, '+a\rb\r\n', '+OK\r', '+OK', '$3\r\nab\r\n', '*2\r\n+a\r\n+b\r', '+\r\n'])
      expect(isResp2(b(s)), JSON.stringify(s.slice(0, 20))).toBe(reference(b(s)));
    const many = b(`*100\r\n${'$3\r\nxxx\r\n'.repeat(100)}`.repeat(3));
    expect(splitResp2Replies(many, 3)?.map((r) => r.length)).toEqual([906, 906, 906]);
    expect(splitResp2Replies(many.subarray(0, many.length - 1), 3)).toBeUndefined();
  });

  it('refuses RESP3 types, bad lengths and integers, and bytes before or after the reply', () => {
    for (const s of [
      '_\r\n',
      '%1\r\n+a\r\n+b\r\n',
      ',1.5\r\n',
      '#t\r\n',
      ':\r\n',
      ':-\r\n',
      ':1a\r\n',
      ': 1\r\n',
      '$-2\r\n',
      '$-01\r\n',
      '$\r\n',
      '$+1\r\na\r\n',
      '*-2\r\n',
      '$3\r\nab\r\n',
      '$1\r\nab\r\n',
      '+OK\r\n+OK\r\n',
      '*2\r\n:1\r\n',
      '+OK\r',
      '+OK\n',
      '',
    ])
      expect(isResp2(b(s)), JSON.stringify(s)).toBe(false);
  });

  it('gives the same verdict as the regular-expression version on generated replies', () => {
    const piece = fc.constantFrom('+', '-', ':', '$', '*', '_', '%', '1', '2', '-1', '0', '00', 'a', '\r\n', '\r', '\n', 'OK', '3');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const buf = b(pieces.join(''));
        expect(isResp2(buf)).toBe(reference(buf));
      }),
      { numRuns: 20000 },
    );
  });
});

describe('splitResp2Replies', () => {
  it('gives what splitReplies then isResp2 on each reply gave, on generated answers and counts', () => {
    const piece = fc.constantFrom(
      '+OK\r\n',
      '$-1\r\n',
      '$3\r\nabc\r\n',
      ':12\r\n',
      '*2\r\n',
      '*0\r\n',
      '-ERR x\r\n',
      '_\r\n',
      '$2\r\na',
      '\r\n',
      ':x\r\n',
      '%1\r\n',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), fc.nat(8), (pieces, count) => {
        const body = b(pieces.join(''));
        const split = splitReplies(body, count);
        const expected = split && split.every(isResp2) ? split : undefined;
        const got = splitResp2Replies(body, count);
        expect(got?.map((r) => r.toString('latin1'))).toEqual(expected?.map((r) => r.toString('latin1')));
      }),
      { numRuns: 20000 },
    );
  });
});

describe('splitResp2Ranges', () => {
  it('gives the ranges of what splitResp2Replies gives, or nothing when a reply is an error', () => {
    const piece = fc.constantFrom('+OK\r\n', '$-1\r\n', '$3\r\nabc\r\n', ':12\r\n', '*2\r\n', '-ERR x\r\n', '$2\r\na', '%1\r\n');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), fc.nat(8), (pieces, count) => {
        const body = b(pieces.join(''));
        const views = splitResp2Replies(body, count);
        const expected = views && !views.some((r) => r[0] === 0x2d) ? views.map((r) => r.toString('latin1')) : undefined;
        const got = splitResp2Ranges(body, count);
        expect(got?.body).toBe(got === undefined ? undefined : body);
        const replies = got?.ends.map((end, i) => body.toString('latin1', i === 0 ? 0 : got.ends[i - 1], end));
        expect(replies).toEqual(expected);
      }),
      { numRuns: 20000 },
    );
  });
});
