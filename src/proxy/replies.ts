// Small reply builders for replies the proxy makes itself (RESP2 where the shape is the same in RESP3).
import { errorReply, type Protocol } from '../resp/protocol.js';
import { ReplyWriter } from '../resp/reply-writer.js';

export { errorReply };

export const OK = Buffer.from('+OK\r\n');

/** A writer for one reply at a time, in the given protocol. */
export function reply(protocol: Protocol, build: (w: ReplyWriter) => void): Buffer {
  const w = new ReplyWriter(protocol, 256);
  build(w);
  return w.toBuffer();
}
