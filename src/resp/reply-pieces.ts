// A reply whose bytes are in several Buffers, as they were read from the upstream: a large bulk
// reply (a 1 MiB GET) goes to the client from those very Buffers, in one writev, instead of being
// joined into a new 1 MiB Buffer first. That join was a copy per reply and, above all, 1 MiB of
// fresh memory per reply, which made V8 run a full garbage collection every few dozen replies
// (bench/README.md, large values).

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
  const first = pieces[0];
  if (first[0] !== 0x24) return undefined;
  const cr = first.indexOf(13, 1);
  if (cr < 2 || cr > 21 || cr + 1 >= first.length || first[cr + 1] !== 10) return undefined;
  for (let i = 1; i < cr; i++) if (first[i] < 0x30 || first[i] > 0x39) return undefined;
  const n = Number(first.toString('latin1', 1, cr));
  if (cr + 2 + n + 2 !== size) return undefined;
  if (byteFromEnd(pieces, 2) !== 13 || byteFromEnd(pieces, 1) !== 10) return undefined;
  return new ReplyPieces(pieces, size);
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

/** A Buffer that starts as the reply does (itself, or its first piece): enough to tell an error reply. */
export function replyHead(reply: Reply): Buffer {
  return reply instanceof ReplyPieces ? reply.pieces[0] : reply;
}
