// Small reply builders for replies the proxy makes itself (RESP2 where the shape is the same in RESP3).
import { ReplyWriter } from '../resp/reply-writer.js';

/** `-<text>\r\n`; line breaks inside the text would break the framing, so they become spaces. */
export function errorReply(text: string): Buffer {
  return Buffer.from(`-${text.replace(/[\r\n]+/g, ' ')}\r\n`);
}

export const OK = Buffer.from('+OK\r\n');

/** A writer for one reply at a time, in the given protocol. */
export function reply(protocol: 2 | 3, build: (w: ReplyWriter) => void): Buffer {
  const w = new ReplyWriter(protocol, 256);
  build(w);
  return w.toBuffer();
}
