// A reply whose bytes are in several Buffers, as they were read from the upstream: a large bulk
// reply (a 1 MiB GET) goes to the client from those very Buffers, in one writev, instead of being
// joined into a new 1 MiB Buffer first. That join was a copy per reply and, above all, 1 MiB of
// fresh memory per reply, which made V8 run a full garbage collection every few dozen replies
// (bench/README.md, large values).
// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import { resp2End } from './resp2-splitter.js';
import { scanReply } from './reply-scanner.js';

/** Replies this large and up are kept in pieces. */
export const PIECES_FROM_BYTES = 64 * 1024;

export class ReplyPieces {
  constructor(
    readonly pieces: readonly Buffer[],
    /** Bytes in all pieces. */
    readonly length: number,
  ) {}

  /** The first byte: the reply's RESP type. */
  get type(): number {
    return this.pieces[0][0];
  }

  join(): Buffer {
    return Buffer.concat(this.pieces, this.length);
  }
}

/** A raw RESP reply: one Buffer, or pieces. */
export type Reply = Buffer | ReplyPieces;

export function joinReply(reply: Reply): Buffer {
  return reply instanceof ReplyPieces ? reply.join() : reply;
}

/**
 * `pieces` (`size` bytes in all) as one RESP2 bulk string reply in pieces, when they hold exactly one
 * (`$<n>\r\n`, n bytes, CRLF) of PIECES_FROM_BYTES or more; undefined otherwise (then the caller joins
 * and reads them as usual). The bytes of a bulk are not looked at: its length line says where it ends.
 */
export function bulkInPieces(pieces: readonly Buffer[], size: number): ReplyPieces | undefined {
  if (pieces.length < 2 || size < PIECES_FROM_BYTES) return undefined;
  if (bulkSize(pieces[0], 0) !== size) return undefined;
  if (byteFromEnd(pieces, 2) !== 13 || byteFromEnd(pieces, 1) !== 10) return undefined;
  return new ReplyPieces(pieces, size);
}

/**
 * The `count` replies of an answer that arrived in `pieces`, each checked to be RESP2 (resp2-splitter.ts),
 * without joining the pieces: a reply inside one piece is a view of it, a large bulk across pieces keeps
 * its pieces (ReplyPieces), any other reply across pieces is joined alone. Undefined when the pieces do
 * not hold exactly `count` RESP2 replies (the caller then joins them to say what is wrong).
 */
export function splitResp2Pieces(pieces: readonly Buffer[], count: number): Reply[] | undefined {
  const out = new Array<Reply>(count);
  let at: Place = { piece: 0, pos: 0 };
  for (let r = 0; r < count; r++) {
    at = skipEmpty(pieces, at);
    if (at.piece === pieces.length) return undefined;
    const piece = pieces[at.piece];
    const end = resp2End(piece, at.pos);
    if (end > 0) {
      out[r] = piece.subarray(at.pos, end);
      at = { piece: at.piece, pos: end };
      continue;
    }
    const across = replyAcross(pieces, at);
    if (!across) return undefined;
    out[r] = across.reply;
    at = across.next;
  }
  return skipEmpty(pieces, at).piece === pieces.length ? out : undefined;
}

/** A position in a list of pieces. */
interface Place {
  piece: number;
  pos: number;
}

function skipEmpty(pieces: readonly Buffer[], at: Place): Place {
  let { piece, pos } = at;
  while (piece < pieces.length && pos >= pieces[piece].length) {
    piece++;
    pos = 0;
  }
  return { piece, pos };
}

/** The reply that starts at `at` and goes on into later pieces, and where the next reply starts. */
function replyAcross(pieces: readonly Buffer[], at: Place): { reply: Reply; next: Place } | undefined {
  const first = pieces[at.piece].subarray(at.pos);
  const size = bulkSize(first, 0);
  if (size >= PIECES_FROM_BYTES) {
    // A large bulk: its pieces as they are (the last one cut where the bulk ends).
    const parts = [first];
    let have = first.length;
    let k = at.piece;
    while (have < size) {
      if (++k === pieces.length) return undefined;
      const take = Math.min(pieces[k].length, size - have);
      parts.push(take === pieces[k].length ? pieces[k] : pieces[k].subarray(0, take));
      have += take;
    }
    const reply = parts.length > 1 ? bulkInPieces(parts, size) : undefined;
    return reply && { reply, next: { piece: k, pos: parts[parts.length - 1].length } };
  }
  // Anything else (small, or an array): the bytes it spans joined, as few as scanReply says it needs.
  let joined = first;
  let k = at.piece;
  for (;;) {
    const end = resp2End(joined, 0);
    if (end > 0) return { reply: joined.subarray(0, end), next: { piece: k, pos: pieces[k].length - (joined.length - end) } };
    const need = scanReply(joined, 0);
    if (need >= 0) return undefined; // complete, but not RESP2
    const parts = [joined];
    let have = joined.length;
    do {
      if (++k === pieces.length) return undefined;
      parts.push(pieces[k]);
      have += pieces[k].length;
    } while (have < -need);
    joined = Buffer.concat(parts, have);
  }
}

/** Bytes of the bulk string reply at `pos` when its length line is complete (`$1048576\r\n`); -1 otherwise. */
function bulkSize(buf: Buffer, pos: number): number {
  if (buf[pos] !== 0x24) return -1;
  const cr = buf.indexOf(13, pos + 1);
  if (cr < pos + 2 || cr > pos + 21 || cr + 1 >= buf.length || buf[cr + 1] !== 10) return -1;
  for (let i = pos + 1; i < cr; i++) if (buf[i] < 0x30 || buf[i] > 0x39) return -1;
  return cr + 2 - pos + Number(buf.toString('latin1', pos + 1, cr)) + 2;
}

/** The `back`-th byte from the end of the pieces (1: the last). */
function byteFromEnd(pieces: readonly Buffer[], back: number): number | undefined {
  for (let i = pieces.length - 1; i >= 0; i--) {
    const piece = pieces[i];
    if (back <= piece.length) return piece[piece.length - back];
    back -= piece.length;
  }
  return undefined;
}

/** Where a reply is written: a socket, or anything with its write (and, optionally, cork and uncork). */
export interface ReplySink {
  write(data: Buffer): unknown;
  cork?(): void;
  uncork?(): void;
}

/** Writes a reply: one Buffer, or its pieces as they are, together (one writev on a socket). */
export function writeReply(sink: ReplySink, reply: Reply): void {
  if (!(reply instanceof ReplyPieces)) return void sink.write(reply);
  sink.cork?.();
  for (const piece of reply.pieces) sink.write(piece);
  sink.uncork?.();
}

/** A Buffer that starts as the reply does (itself, or its first piece): enough to tell an error reply. */
export function replyHead(reply: Reply): Buffer {
  return reply instanceof ReplyPieces ? reply.pieces[0] : reply;
}
