// WAIT numreplicas timeout: no replica acknowledgement is observable through a REST upstream, so the
// answer is 0 replicas at once (a standalone Redis answers WAIT 0 … with 0 too; with numreplicas > 0
// Redis would hold the client until the timeout, which would only delay the same answer).
import { parseLongLong } from '../../resp/args.js';
import { errorReply, NOT_INTEGER, reply } from '../../server/replies.js';
import type { Handler } from '../../server/commands/handler.js';

export const wait: Handler = ({ conn }, args) => {
  if (parseLongLong(args[1]) === undefined) return NOT_INTEGER;
  const timeout = parseLongLong(args[2]);
  if (timeout === undefined) return errorReply('ERR timeout is not an integer or out of range');
  if (timeout < 0n) return errorReply('ERR timeout is negative');
  return reply(conn.protocol, (w) => w.integer(0));
};
