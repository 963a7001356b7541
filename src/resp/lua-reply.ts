// A reply that went through Lua's reply conversion (a transaction run as one upstream script:
// upstream/script-transaction.ts), turned back into the reply Redis sends for the command, by its
// reply shape: Lua turns a null array into a null bulk string, and a status reply that came through a
// JSON upstream arrives as a bulk string; RESP3 connections get the RESP3 form.
import type { Protocol } from './protocol.js';
import { toResp3 } from './resp3-converter.js';
import type { ReplyShape } from './reply-shape.js';

const NULL_ARRAY = Buffer.from('*-1\r\n');
const NULL_BULK = Buffer.from('$-1\r\n');
const NULL3 = Buffer.from('_\r\n');

/** The reply Redis sends for a command of reply shape `shape`, from its form after Lua's conversion. */
export function fromLuaReply(reply: Buffer, shape: ReplyShape, protocol: Protocol): Buffer {
  if (reply.equals(NULL_BULK)) {
    if (protocol === 3) return NULL3;
    return typeof shape !== 'string' && (shape.nil ?? 'array') === 'array' ? NULL_ARRAY : reply;
  }
  if (shape === 'status' && reply[0] === 0x24) {
    const start = reply.indexOf(10) + 1;
    reply = Buffer.concat([Buffer.from('+'), reply.subarray(start, reply.length - 2), Buffer.from('\r\n')]);
  }
  return protocol === 3 ? toResp3(reply, shape) : reply;
}
