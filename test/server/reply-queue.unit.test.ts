// ReplyQueue in process, against a fake output that records each write: request order with replies
// that come later, one joined write per ready run, large replies written as they are (corked, not
// copied), CLIENT REPLY's silencing, and the close after the last reply.
import { describe, expect, it } from 'vitest';
import { emptyKeepingRoom, ReplyQueue, type ReplyOutput } from '../../src/server/reply-queue.js';
import { largeBuffers } from '../../src/resp/large-buffers.js';

class Recorder implements ReplyOutput {
  /** Each write() call's bytes, and whether it came while corked. */
  readonly writes: Array<{ data: Buffer; corked: boolean }> = [];
  corks = 0;
  ended = false;
  private corked = false;
  /** Each write() call's Buffer as it was passed (not copied). */
  readonly passed: Buffer[] = [];
  write(data: Buffer): boolean {
    this.passed.push(data);
    this.writes.push({ data: Buffer.from(data), corked: this.corked });
    return true;
  }
  cork(): void {
    this.corks++;
    this.corked = true;
  }
  uncork(): void {
    this.corked = false;
  }
  end(done: () => void): void {
    this.ended = true;
    done();
  }
  resume(): void {}
  destroy(): void {}
  get text(): string {
    return Buffer.concat(this.writes.map((w) => w.data)).toString('latin1');
  }
}

const b = (s: string) => Buffer.from(s, 'latin1');

describe('ReplyQueue', () => {
  it('writes replies in request order, holding later ones until an earlier one is filled', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const first = q.take();
    q.answer(b('+now\r\n'));
    const third = q.take();
    q.fill(third, b(':3\r\n'));
    q.write();
    expect(out.writes).toHaveLength(0);
    expect(q.owed).toBe(3);
    q.fill(first, b('$1\r\na\r\n'));
    q.write();
    // One joined write of the three, in order.
    expect(out.writes).toHaveLength(1);
    expect(out.text).toBe('$1\r\na\r\n+now\r\n:3\r\n');
    expect(q.owed).toBe(0);
  });

  it('writes one ready reply as it is, and a ready run up to the first missing reply', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const one = b('+OK\r\n');
    q.answer(one);
    q.write();
    expect(out.writes).toHaveLength(1);
    const a = q.take();
    const c = q.take();
    const d = q.take();
    q.fill(a, b(':1\r\n'));
    q.fill(c, b(':2\r\n'));
    q.write();
    expect(out.writes.map((w) => w.data.toString())).toEqual(['+OK\r\n', ':1\r\n:2\r\n']);
    q.fill(d, b(':3\r\n'));
    q.write();
    expect(out.text).toBe('+OK\r\n:1\r\n:2\r\n:3\r\n');
    // Positions stay valid after the queue emptied and trimmed itself.
    expect(q.nextPosition).toBe(4);
  });

  it('keeps positions across a long run of replies (trimmed past 1024 written)', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const slots = Array.from({ length: 1500 }, () => q.take());
    for (let i = 0; i < 1200; i++) q.fill(slots[i], b(`:${i}\r\n`));
    q.write();
    for (let i = 1200; i < 1500; i++) q.fill(slots[i], b(`:${i}\r\n`));
    q.write();
    const expected = Array.from({ length: 1500 }, (_, i) => `:${i}\r\n`).join('');
    expect(out.text).toBe(expected);
    expect(out.writes).toHaveLength(2);
  });

  it('empties a short array keeping it (the same array, length 0) and a long one too', () => {
    for (const n of [0, 1, 16, 64, 65, 5000]) {
      const a = Array.from({ length: n }, (_, i) => i);
      emptyKeepingRoom(a);
      expect(a).toEqual([]);
      a.push(7);
      expect(a).toEqual([7]);
    }
  });

  it('keeps positions when every reply is written one at a time (the -P 1 pattern)', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 10);
    for (let i = 0; i < 200; i++) {
      const slot = q.take();
      expect(slot).toBe(i);
      expect(q.nextPosition).toBe(i + 1);
      q.fill(slot, Buffer.from(`:${i}\r\n`));
      q.write();
      expect(q.owed).toBe(0);
    }
    expect(out.writes.length).toBe(200);
    expect(out.text).toBe(Array.from({ length: 200 }, (_, i) => `:${i}\r\n`).join(''));
  });

  it('writes a run that holds a large reply without copying it: each reply corked into one writev', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const big = Buffer.concat([b('$70000\r\n'), Buffer.alloc(70_000, 0x78), b('\r\n')]);
    q.answer(b('+OK\r\n'));
    q.answer(big);
    q.answer(b(':1\r\n'));
    q.write();
    expect(out.corks).toBe(1);
    expect(out.writes.map((w) => [w.data.length, w.corked])).toEqual([
      [5, true],
      [big.length, true],
      [4, true],
    ]);
  });

  it('joins small replies that add up to more than the large-reply size into one write', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const reply = Buffer.concat([b('$1000\r\n'), Buffer.alloc(1000, 0x61), b('\r\n')]);
    for (let i = 0; i < 100; i++) q.answer(reply);
    q.write();
    expect(out.corks).toBe(0);
    expect(out.writes).toHaveLength(1);
    expect(out.writes[0].data.equals(Buffer.concat(Array.from({ length: 100 }, () => reply)))).toBe(true);
  });

  it('silences replies from a position on (CLIENT REPLY OFF), answered or still to come', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    q.answer(b('+kept\r\n'));
    const from = q.nextPosition;
    q.answer(b('+dropped\r\n'));
    const later = q.take();
    q.silence(from);
    q.fill(later, b('+also dropped\r\n'));
    q.answer(b('+after\r\n'));
    q.write();
    expect(out.text).toBe('+kept\r\n+after\r\n');
  });

  it('writes ranges of an upstream answer (fillRange) among whole replies: joined, alone, large, silenced', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    // An answer in a larger buffer (as the upstream's read slab), a long bulk among short replies.
    const long = 'x'.repeat(100);
    const answer = b(`junk+OK\r\n:12\r\n$100\r\n${long}\r\n`).subarray(4);
    const [a, c, d, e] = [q.take(), q.take(), q.take(), q.take()];
    q.fillRange(a, answer, 0, 5);
    q.fill(c, b('+whole\r\n'));
    q.fillRange(d, answer, 5, 10);
    q.fillRange(e, answer, 10, answer.length);
    q.write();
    expect(out.writes).toHaveLength(1);
    expect(out.text).toBe(`+OK\r\n+whole\r\n:12\r\n$100\r\n${long}\r\n`);
    // One range alone: written as a view of its bytes.
    q.fillRange(q.take(), answer, 5, 10);
    q.write();
    expect(out.writes[1].data.toString()).toBe(':12\r\n');
    // A large range goes out corked, as it is.
    const big = Buffer.alloc(70 * 1024, 0x61);
    q.fillRange(q.take(), answer, 0, 5);
    q.fillRange(q.take(), big, 1, big.length - 1);
    q.write();
    expect(out.writes.slice(2).map((w) => [w.data.length, w.corked])).toEqual([
      [5, true],
      [big.length - 2, true],
    ]);
    // CLIENT REPLY OFF: a range still to come or already filled is not written (nothing of either).
    const silent = q.take();
    q.fillRange(q.take(), answer, 0, 5);
    q.silence(silent);
    q.fillRange(silent, answer, 5, 10);
    q.write();
    expect(out.writes.slice(4).map((w) => w.data.length)).toEqual([0]);
    expect(q.owed).toBe(0);
  });

  it('writes adjacent ranges of one answer as one view of it, not copied; any other run is joined', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    // In memory of its own (not node's shared pool, where the joined writes are made too).
    const slab = Buffer.allocUnsafeSlow(28);
    slab.write('junk+OK\r\n:12\r\n$3\r\nabc\r\n+OK\r\n', 'latin1');
    const answer = slab.subarray(4);
    const ends = [5, 10, 19, 24];
    // A connection's commands side by side in one call: one write, a view of the answer's memory.
    for (let i = 0; i < 4; i++) q.fillRange(q.take(), answer, i === 0 ? 0 : ends[i - 1], ends[i]);
    q.write();
    expect(out.writes).toHaveLength(1);
    expect(out.text).toBe(answer.toString('latin1'));
    expect(out.passed[0].buffer).toBe(answer.buffer);
    expect(out.passed[0].byteOffset).toBe(answer.byteOffset);
    // Ranges with a gap, of two answers, or beside a whole reply: joined into a Buffer of their own.
    const other = Buffer.from(answer);
    const runs: Array<Array<[Buffer, number, number] | Buffer>> = [
      [
        [answer, 0, 5],
        [answer, 10, 19],
      ],
      [
        [answer, 0, 5],
        [other, 5, 10],
      ],
      [[answer, 0, 5], b('+whole\r\n'), [answer, 5, 10]],
      [
        [answer, 5, 10],
        [answer, 0, 5],
      ],
    ];
    for (const run of runs) {
      const before = out.writes.length;
      for (const r of run) {
        if (Buffer.isBuffer(r)) q.answer(r);
        else q.fillRange(q.take(), r[0], r[1], r[2]);
      }
      q.write();
      expect(out.writes.length).toBe(before + 1);
      const want = run.map((r) => (Buffer.isBuffer(r) ? r : r[0].subarray(r[1], r[2])).toString('latin1')).join('');
      expect(out.writes[before].data.toString('latin1')).toBe(want);
      expect(out.passed[before].buffer).not.toBe(answer.buffer);
    }
    // Adjacent ranges that wait behind a missing reply go out as one view once it comes.
    const missing = q.take();
    q.fillRange(q.take(), answer, 0, 5);
    q.fillRange(q.take(), answer, 5, 10);
    q.write();
    q.fillRange(missing, other, 19, 24);
    q.write();
    expect(out.writes.at(-1)!.data.toString('latin1')).toBe('+OK\r\n+OK\r\n:12\r\n');
    expect(q.owed).toBe(0);
  });

  it('closes after the replies owed, and writes nothing once the peer is gone', () => {
    const out = new Recorder();
    const q = new ReplyQueue(out, 1000);
    const slot = q.take();
    q.closeAfterReplies();
    expect(out.ended).toBe(false);
    q.fill(slot, b('+bye\r\n'));
    q.write();
    expect(out.text).toBe('+bye\r\n');
    expect(out.ended).toBe(true);
    expect(q.ended).toBe(true);

    const gone = new Recorder();
    const q2 = new ReplyQueue(gone, 1000);
    q2.closedByPeer();
    q2.answer(b('+lost\r\n'));
    q2.write();
    expect(gone.writes).toHaveLength(0);
  });
});

describe('ReplyQueue: a reply in a buffer of the large-value pool', () => {
  /** Records each write and its completion callback, which the test calls. */
  class Deferred extends Recorder {
    readonly done: (((err?: Error | null) => void) | undefined)[] = [];
    write(data: Buffer, done?: (err?: Error | null) => void): boolean {
      this.done.push(done);
      return super.write(data);
    }
  }

  it('goes back to the pool once the socket has written it, not before; after a failed write it does not', () => {
    const out = new Deferred();
    const q = new ReplyQueue(out, 1000);
    const pooled = largeBuffers.take(1024 * 1024 + 15);
    pooled.write('$1048576\r\n', 'latin1');
    const plain = Buffer.alloc(200_000, 65); // large, not from the pool: nothing to give back
    q.answer(pooled);
    q.answer(plain);
    q.write();
    expect(out.writes).toHaveLength(2);
    expect(out.writes[0].data.equals(pooled)).toBe(true);
    expect(out.done[1]).toBeUndefined();
    expect(largeBuffers.owns(pooled)).toBe(true); // still being written
    const free = largeBuffers.freeByteCount;
    out.done[0]!(null);
    expect(largeBuffers.owns(pooled)).toBe(false);
    expect(largeBuffers.freeByteCount).toBeGreaterThan(free);
    // The next take of that size gets the same memory.
    const again = largeBuffers.take(1024 * 1024 + 15);
    expect(again.buffer).toBe(pooled.buffer);

    q.answer(again);
    q.write();
    out.done[2]!(new Error('EPIPE'));
    expect(largeBuffers.owns(again)).toBe(true); // left to the garbage collector, never reused
  });
});
