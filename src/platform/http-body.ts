// Reads a request body up to a size limit. Past the limit the rest is drained and counted, so the
// error can say how large the request really was.
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly actual: number) {
    super('request body too large');
  }
}

/** A body as the pieces it was read in (not joined), and its size. */
export interface BodyPieces {
  pieces: Buffer[];
  size: number;
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return joinBody(await readBodyPieces(req, limit));
}

/** The body as read: a large one (a 1 MiB value) can then be passed on without being joined first. */
export function readBodyPieces(req: IncomingMessage, limit: number): Promise<BodyPieces> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? -1);
    const pieces: Buffer[] = [];
    let size = 0;
    let tooLarge = declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) pieces.push(chunk);
    });
    req.on('end', () => (tooLarge ? reject(new BodyTooLargeError(Math.max(size, declared))) : resolve({ pieces, size })));
    req.on('error', reject);
  });
}

export function joinBody(body: BodyPieces): Buffer {
  return body.pieces.length === 1 ? body.pieces[0] : Buffer.concat(body.pieces, body.size);
}
