// A large bulk reply kept in the pieces it arrived in (resp/reply-pieces.ts), and the reply queue that
// writes such a reply from its pieces, in order, without joining them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bulkInPieces, joinReply, PIECES_FROM_BYTES, replyHead, ReplyPieces, splitResp2Pieces } from '../../src/resp/reply-pieces.js';
import { splitResp2Replies } from '../../src/resp/resp2-splitter.js';
import { ReplyQueue, type ReplyOutput } from '../../src/server/reply-queue.js';

/** `bytes` cut at `cuts`. */
function cut(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [0, ...cuts, bytes.length];
  return at.slice(1).map((to, i) => bytes.subarray(at[i], to));
}

const value = Buffer.alloc(PIECES_FROM_BYTES + 10, 'v');
value.write('\r\n$3\r\nabc\r\n', 100); // RESP-looking bytes inside a bulk are data
const bulk = Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')]);

describe('bulkInPieces', () => {
  it('keeps exactly one large bulk in its pieces, wherever they were cut', () => {
    for (const cuts of [[1000], [9, 40_000], [bulk.length - 1], [bulk.length - 2, bulk.length - 1], [8, 9, 10]]) {
      const pieces = cut(bulk, cuts);
      const reply = bulkInPieces(pieces, bulk.length);
      expect(reply, JSON.stringify(cuts)).toBeInstanceOf(ReplyPieces);
      expect(reply!.pieces).toBe(pieces);
      expect(reply!.length).toBe(bulk.length);
      expect(reply!.type).toBe(0x24);
      expect(joinReply(reply!).equals(bulk)).toBe(true);
      expect(replyHead(reply!)).toBe(pieces[0]);
    }
  });

  it('leaves anything else to be joined and read as usual', () => {
    const small = Buffer.from('$3\r\nabc\r\n');
    const twoReplies = Buffer.concat([bulk, Buffer.from('+OK\r\n')]);
    const array = Buffer.concat([Buffer.from('*1\r\n'), bulk]);
    const wrongLength = Buffer.concat([Buffer.from(`$${value.length + 1}\r\n`), value, Buffer.from('\r\n')]);
    const noCrlf = Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('xx')]);
    const notDigits = Buffer.concat([Buffer.from(`$+${value.length - 1}\r\n`), value, Buffer.from('\r\n')]);
    const cases: Array<[string, Buffer[], number]> = [
      ['one piece', [bulk], bulk.length],
      ['small', cut(small, [3]), small.length],
      ['two replies', cut(twoReplies, [1000]), twoReplies.length],
      ['an array', cut(array, [1000]), array.length],
      ['a wrong length', cut(wrongLength, [1000]), wrongLength.length],
      ['no CRLF at the end', cut(noCrlf, [1000]), noCrlf.length],
      ['a length that is not digits', cut(notDigits, [1000]), notDigits.length],
      ['a length line cut in two', cut(bulk, [3]), bulk.length],
      ['an error', cut(Buffer.concat([Buffer.from('-ERR '), value, Buffer.from('\r\n')]), [1000]), value.length + 7],
    ];
    for (const [what, pieces, size] of cases) expect(bulkInPieces(pieces, size), what).toBeUndefined();
  });
});

describe('splitResp2Pieces', () => {
  const big = (n: number, c: string) => Buffer.concat([Buffer.from(`$${n}\r\n`), Buffer.alloc(n, c), Buffer.from('\r\n')]);
  const replies = fc.oneof(
    fc
      .constantFrom('+OK\r\n', '-ERR no\r\n', ':42\r\n', '$-1\r\n', '*-1\r\n', '*0\r\n', '$0\r\n\r\n', '*2\r\n$1\r\na\r\n:1\r\n')
      .map((t) => Buffer.from(t)),
    fc.string({ maxLength: 300 }).map((t) => Buffer.from(`$${Buffer.byteLength(t)}\r\n${t}\r\n`)),
    fc.integer({ min: PIECES_FROM_BYTES - 10, max: 3 * PIECES_FROM_BYTES }).map((n) => big(n, 'b')),
    fc
      .integer({ min: 1000, max: 2 * PIECES_FROM_BYTES })
      .map((n) => Buffer.concat([Buffer.from('*2\r\n'), big(n, 'c'), Buffer.from(':7\r\n')])),
  );

  it('gives the replies splitResp2Replies finds in the joined answer, wherever the answer was cut', () => {
    fc.assert(
      fc.property(
        fc.array(replies, { minLength: 1, maxLength: 8 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (list, fractions) => {
          const body = Buffer.concat(list);
          const cuts = [...new Set(fractions.map((f) => Math.floor(f * body.length)))].sort((x, y) => x - y);
          const pieces = cut(body, cuts);
          const split = splitResp2Pieces(pieces, list.length);
          expect(split).toBeDefined();
          expect(split!.map((r) => joinReply(r).toString('latin1'))).toEqual(
            splitResp2Replies(body, list.length)!.map((r) => r.toString('latin1')),
          );
          // A large bulk that spans pieces stays in pieces; nothing else does.
          split!.forEach((r, i) => {
            if (r instanceof ReplyPieces) expect(list[i][0]).toBe(0x24);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses what is not exactly `count` RESP2 replies', () => {
    const body = Buffer.concat([Buffer.from('+OK\r\n'), bulk, Buffer.from(':1\r\n')]);
    const pieces = cut(body, [3, 5000, body.length - 2]);
    expect(splitResp2Pieces(pieces, 3)).toBeDefined();
    expect(splitResp2Pieces(pieces, 2)).toBeUndefined(); // bytes left over
    expect(splitResp2Pieces(pieces, 4)).toBeUndefined(); // a reply missing
    expect(splitResp2Pieces(cut(body.subarray(0, body.length - 1), [3, 5000]), 3)).toBeUndefined(); // cut short
    const resp3 = Buffer.concat([Buffer.from('%1\r\n+a\r\n'), bulk]);
    expect(splitResp2Pieces(cut(resp3, [4, 9000]), 2)).toBeUndefined(); // a RESP3 map
    const badEnd = Buffer.concat([bulk.subarray(0, bulk.length - 2), Buffer.from('xx')]);
    expect(splitResp2Pieces(cut(badEnd, [9000]), 1)).toBeUndefined();
  });
});

describe('ReplyQueue with a reply in pieces', () => {
  class Output implements ReplyOutput {
    /** Each write that reaches the "kernel": the Buffers of one writev. */
    writes: Buffer[][] = [];
    private held: Buffer[] = [];
    private corks = 0; // nested as net.Socket's
    write(data: Buffer): boolean {
      if (this.corks > 0) this.held.push(data);
      else this.writes.push([data]);
      return true;
    }
    cork(): void {
      this.corks++;
    }
    uncork(): void {
      if (this.corks > 0 && --this.corks === 0 && this.held.length > 0) {
        this.writes.push(this.held);
        this.held = [];
      }
    }
    end(done: () => void): void {
      done();
    }
    resume(): void {}
    destroy(): void {}
  }

  it('writes its pieces as they are, in order with the replies around it, in one corked write', () => {
    const out = new Output();
    const queue = new ReplyQueue(out, 10);
    const pieces = cut(bulk, [5000, 70_000]);
    queue.answer(Buffer.from('+OK\r\n'));
    const slot = queue.take();
    queue.answer(Buffer.from(':1\r\n'));
    queue.write();
    expect(out.writes.map((w) => w.map(String))).toEqual([['+OK\r\n']]);
    queue.fill(slot, new ReplyPieces(pieces, bulk.length));
    queue.write();
    expect(out.writes).toHaveLength(2);
    expect(out.writes[1].slice(0, 3)).toEqual(pieces); // the same Buffers, not copies
    expect(out.writes[1][0]).toBe(pieces[0]);
    expect(Buffer.concat(out.writes[1]).equals(Buffer.concat([bulk, Buffer.from(':1\r\n')]))).toBe(true);
    expect(queue.owed).toBe(0);
  });

  it('writes a reply in pieces alone, and writes nothing of it once silenced', () => {
    const out = new Output();
    const queue = new ReplyQueue(out, 10);
    const first = queue.take();
    queue.fill(first, new ReplyPieces(cut(bulk, [100]), bulk.length));
    queue.write();
    expect(Buffer.concat(out.writes[0]).equals(bulk)).toBe(true);
    const second = queue.take();
    queue.silence(second);
    queue.fill(second, new ReplyPieces(cut(bulk, [100]), bulk.length));
    queue.write();
    expect(Buffer.concat(out.writes.slice(1).flat()).length).toBe(0);
  });
});
