// The /pipeline fast path's pure pieces against the general path (branch plat16): readPlainPipeline
// (src/platform/kv/plain-pipeline.ts: one pass per string, each byte written where its RESP goes, the head
// before it guessed from the last command) against JSON.parse + encodeCommands, on any arguments JSON can
// carry; and replyEnd (src/platform/redis/connection.ts) against scanReply, on any replies, cut anywhere.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookupCommand } from '../../src/commands/table.js';
import { plainKindOf } from '../../src/platform/kv/executor.js';
import { readPlainPipeline, type PlainKind } from '../../src/platform/kv/plain-pipeline.js';
import { replyEnd } from '../../src/platform/redis/connection.js';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { encodeCommands } from '../../src/resp/request-writer.js';

const kindOf = (name: string): PlainKind => plainKindOf(lookupCommand(name));

/** What the general path would send: JSON.parse of the body's UTF-8 text, each string as a RESP bulk. */
function general(body: Buffer): Buffer {
  return encodeCommands(JSON.parse(body.toString('utf8')) as string[][]);
}

/** Whether the fast path must take these commands: plain names, and no argument that JSON must escape. */
function eligible(commands: string[][]): boolean {
  return commands.every((c) => c[0] !== '' && kindOf(c[0]) !== undefined && c.every((a) => JSON.stringify(a) === `"${a}"`));
}

/** Strings around the lengths where the RESP head changes (`$9`/`$10`, `$99`/`$100`) and the scan does (64). */
const sized = fc
  .tuple(
    fc.constantFrom(0, 1, 8, 9, 10, 11, 62, 63, 64, 65, 99, 100, 101, 300),
    fc.constantFrom('a', 'é', '🎉', '"', '\\', '\n', '\u0000', '\u007f'),
  )
  .chain(([length, special]) =>
    fc
      .tuple(fc.string({ minLength: length, maxLength: length }), fc.nat(length), fc.boolean())
      .map(([text, at, withSpecial]) => (withSpecial ? text.slice(0, at) + special + text.slice(at) : text)),
  );
/** Any Unicode text (lone surrogates aside: JSON.stringify escapes them), with its own escapes. */
const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const argument = fc.oneof(sized, anyText, fc.constantFrom('', 'k', 'xxx', 'key:000000001234'));
const name = fc.constantFrom('GET', 'SET', 'set', 'MSET', 'DEL', 'RPUSH', 'HSET', 'INCR', 'TYPE', 'SCAN', 'nosuch', '');
const command = fc.tuple(name, fc.array(argument, { maxLength: 24 })).map(([n, args]) => [n, ...args]);

describe('readPlainPipeline', () => {
  it('is the general path’s RESP for any commands JSON carries, and refuses exactly those it must', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 10 }), fc.constantFrom(undefined, 1, '\t'), (commands, space) => {
        const body = Buffer.from(JSON.stringify(commands, null, space));
        const plain = readPlainPipeline(body, kindOf);
        expect(plain !== undefined).toBe(eligible(commands));
        if (!plain) return;
        expect(plain.resp.equals(general(body))).toBe(true);
        expect(plain.count).toBe(commands.length);
        expect(plain.wrote).toBe(commands.some((c) => kindOf(c[0]) === 'write'));
      }),
      { numRuns: 600 },
    );
  });

  it('gets the head right when an argument’s length class changes from one command to the next', () => {
    // The room for `$N\r\n` is guessed from the argument at the same place in the command before.
    const lengths = [3, 16, 9, 10, 0, 63, 64, 99, 100, 1, 10, 9];
    const commands = lengths.map((n, i) => ['SET', 'k'.repeat(lengths[(i + 3) % lengths.length]), 'v'.repeat(n)]);
    const many = ['MSET', ...Array.from({ length: 121 }, (_, i) => 'x'.repeat(i % 13))]; // 122 arguments: `*122`
    for (const list of [commands, [...commands].reverse(), [many, ...commands, many, ['GET', 'k']]]) {
      const body = Buffer.from(JSON.stringify(list));
      expect(readPlainPipeline(body, kindOf)!.resp.equals(encodeCommands(list))).toBe(true);
    }
  });

  it('leaves escapes (\\u sequences too) and invalid UTF-8 to the general path, and takes any valid UTF-8 bytes', () => {
    for (const body of ['[["GET","\\u0041"]]', '[["\\u0053ET","a","b"]]', '[["SET","a","b\\/c"]]', '[["SET","a","\\ud83c\\udf89"]]']) {
      expect(readPlainPipeline(Buffer.from(body), kindOf), body).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 90 }), fc.nat(2), (bytes, where) => {
        // Raw bytes inside a string: the fast path takes them only if JSON.parse would read them as they are.
        const value = Buffer.from(bytes);
        const parts = [Buffer.from('[["SET","k'), Buffer.from('","'), Buffer.from('"],["GET","k"]]')];
        parts.splice(where === 0 ? 1 : 2, 0, value);
        const body = Buffer.concat(parts);
        const plain = readPlainPipeline(body, kindOf);
        let parsed: string[][] | undefined;
        try {
          parsed = JSON.parse(body.toString('utf8')) as string[][];
        } catch {
          parsed = undefined;
        }
        const asIs = parsed !== undefined && Buffer.from(body.toString('utf8')).equals(body) && eligible(parsed);
        expect(plain !== undefined).toBe(asIs);
        if (plain) expect(plain.resp.equals(encodeCommands(parsed!))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

/** One RESP2 or RESP3 reply of any kind, as bytes (with lengths and lines around replyEnd's limits). */
const reply: fc.Arbitrary<Buffer> = fc.letrec<{ reply: Buffer }>((tie) => ({
  reply: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('+OK\r\n', '$-1\r\n', '$0\r\n\r\n', '*-1\r\n', '_\r\n', ':0\r\n', '-ERR x\r\n', '$-12\r\n').map((r) => Buffer.from(r)),
    fc
      .tuple(fc.constantFrom('+', '-', ':'), fc.string({ maxLength: 90 }))
      .map(([type, text]) => Buffer.from(`${type}${text.replace(/[\r\n]/g, ' ')}\r\n`)),
    fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.concat([Buffer.from(`$${b.length}\r\n`), Buffer.from(b), Buffer.from('\r\n')])),
    fc.array(tie('reply'), { maxLength: 4 }).map((items) => Buffer.concat([Buffer.from(`*${items.length}\r\n`), ...items])),
    fc.array(tie('reply'), { maxLength: 2 }).map((items) => Buffer.concat([Buffer.from(`%${items.length}\r\n`), ...items, ...items])),
  ),
})).reply;

describe('replyEnd', () => {
  it('says what scanReply says at every reply start, whole or cut anywhere', () => {
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 5 }), (replies) => {
        const all = Buffer.concat(replies);
        const starts = replies.map((_, i) => replies.slice(0, i).reduce((n, r) => n + r.length, 0));
        for (let cut = 0; cut <= all.length; cut++) {
          const part = all.subarray(0, cut);
          for (const start of starts)
            expect(replyEnd(part, start), `${JSON.stringify(part.toString('latin1'))} at ${start}`).toBe(scanReply(part, start));
        }
        let pos = 0;
        for (const r of replies) {
          expect(replyEnd(all, pos)).toBe(pos + r.length);
          pos += r.length;
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reads long lengths and lines through scanReply', () => {
    const big = Buffer.from('$1234567890123\r\nxx');
    expect(replyEnd(big, 0)).toBe(scanReply(big, 0));
    const error = Buffer.from(`-ERR ${'e'.repeat(100)}\r\n+OK\r\n`);
    expect(replyEnd(error, 0)).toBe(error.length - 5);
  });
});
