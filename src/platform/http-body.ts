// Reads a request body up to a size limit. Past the limit the rest is drained and counted, so the
// error can say how large the request really was.
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly actual: number) {
    super('request body too large');
  }
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? -1);
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () =>
      tooLarge
        ? reject(new BodyTooLargeError(Math.max(size, declared)))
        : resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)),
    );
    req.on('error', reject);
  });
}
