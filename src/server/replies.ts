// The replies the proxy makes itself: constant replies in one table (as twemproxy's RSP_STRING), and
// builders for the others (RESP2 where the shape is the same in RESP3).
import { errorReply, type Protocol } from '../resp/protocol.js';
import { ReplyWriter } from '../resp/reply-writer.js';

export { errorReply };

export const OK = Buffer.from('+OK\r\n');
export const PONG = Buffer.from('+PONG\r\n');
export const RESET = Buffer.from('+RESET\r\n');
export const QUEUED = Buffer.from('+QUEUED\r\n');
export const EMPTY_EXEC = Buffer.from('*0\r\n');
export const NULL_ARRAY = Buffer.from('*-1\r\n');
export const NULL_BULK = Buffer.from('$-1\r\n');
/** RESP3 null. */
export const NULL3 = Buffer.from('_\r\n');
export const EXECABORT = errorReply('EXECABORT Transaction discarded because of previous errors.');
export const NOAUTH = errorReply('NOAUTH Authentication required.');
export const WRONGPASS = errorReply('WRONGPASS invalid username-password pair or user is disabled.');
export const SYNTAX = errorReply('ERR syntax error');
export const NOT_INTEGER = errorReply('ERR value is not an integer or out of range');
export const INVALID_CLIENT_NAME = errorReply('ERR Client names cannot contain spaces, newlines or special characters.');
export const REPLICA_KEYSPACE = errorReply("ERR Replica can't interact with the keyspace");
export const NO_EVENT_STREAMS = errorReply('ERR pub/sub and MONITOR are not available: this proxy has no upstream for event streams');

/** A command the command table refuses, with its reason. */
export function refusal(spec: { name: string; refusal?: string }): Buffer {
  return errorReply(spec.refusal ?? `ERR command '${spec.name}' is not supported by respgate`);
}

/** A writer for one reply at a time, in the given protocol. */
export function reply(protocol: Protocol, build: (w: ReplyWriter) => void): Buffer {
  const w = new ReplyWriter(protocol, 256);
  build(w);
  return w.toBuffer();
}

/** Bulk in RESP2; verbatim text in RESP3, as Redis 7.0 answers CLIENT INFO/LIST and INFO. */
export function textReply(protocol: Protocol, text: string): Buffer {
  return reply(protocol, (w) => {
    if (protocol === 3) w.verbatim(text);
    else w.bulk(text);
  });
}
