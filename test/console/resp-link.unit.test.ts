// The console's RESP2 reply decoder (src/console/resp-link.ts): every reply type the proxy's
// CLIENT LIST, INFO and SLOWLOG GET answers use, nested, and where the next reply begins.
import { describe, expect, it } from 'vitest';
import { ReplyError, decode } from '../../src/console/resp-link.js';

const at = (text: string, pos = 0) => decode(Buffer.from(text, 'latin1'), pos);

describe('decode', () => {
  it('reads status, integer, bulk and nil replies, and where each ends', () => {
    expect(at('+OK\r\n')).toEqual(['OK', 5]);
    expect(at(':-42\r\n')).toEqual([-42, 6]);
    expect(at('$5\r\na\r\nbc\r\n')).toEqual(['a\r\nbc', 11]);
    expect(at('$-1\r\n')).toEqual([null, 5]);
    expect(at('*-1\r\n')).toEqual([null, 5]);
    expect(at('+A\r\n:1\r\n', 4)).toEqual([1, 8]);
  });

  it('reads an error reply as a ReplyError with its text', () => {
    const [reply] = at('-WRONGPASS invalid username-password pair\r\n');
    expect(reply).toBeInstanceOf(ReplyError);
    expect((reply as ReplyError).message).toBe('WRONGPASS invalid username-password pair');
  });

  it('reads nested arrays (a SLOWLOG GET entry)', () => {
    const entry = '*1\r\n*6\r\n:3\r\n:1700000000\r\n:12\r\n*2\r\n$3\r\nset\r\n$1\r\nk\r\n$15\r\n127.0.0.1:50000\r\n$0\r\n\r\n';
    expect(at(entry)).toEqual([[[3, 1700000000, 12, ['set', 'k'], '127.0.0.1:50000', '']], entry.length]);
  });

  it('refuses a type byte RESP2 does not have', () => {
    expect(() => at('%1\r\n')).toThrow('unexpected RESP2 reply type byte 0x25');
  });
});
