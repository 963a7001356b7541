// SLOWLOG GET/LEN/RESET/HELP from the proxy's own record (slowlog.ts), with Redis 7.0.15's replies.
import { lower, parseLongLong } from '../../resp/args.js';
import { errorReply, OK, reply } from '../replies.js';
import type { Handler } from './handler.js';
import { helpReply, subcommandSyntaxError } from './help.js';

const SLOWLOG_HELP: readonly string[] = [
  'SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'GET [<count>]',
  '    Return top <count> entries from the slowlog (default: 10, -1 mean all).',
  '    Entries are made of:',
  '    id, timestamp, time in microseconds, arguments array, client IP and port,',
  '    client name',
  'LEN',
  '    Return the length of the slowlog.',
  'RESET',
  '    Reset the slowlog.',
  'HELP',
  '    Prints this help.',
];

const BAD_COUNT = errorReply('ERR count should be greater than or equal to -1');

export const slowlog: Handler = ({ conn, server }, args) => {
  const log = server.slowlog;
  switch (lower(args[1])) {
    case 'get': {
      if (args.length > 3) return subcommandSyntaxError(args);
      let count = 10;
      if (args.length === 3) {
        const n = parseLongLong(args[2]);
        if (n === undefined || n < -1n) return BAD_COUNT;
        count = Number(n);
      }
      const entries = log.get(count);
      return reply(conn.protocol, (w) => {
        w.arrayHeader(entries.length);
        for (const e of entries) {
          w.arrayHeader(6).integer(e.id).integer(e.timestamp).integer(e.durationUs);
          w.arrayHeader(e.args.length);
          for (const a of e.args) w.bulk(a);
          w.bulk(e.client).bulk(e.clientName);
        }
      });
    }
    case 'len':
      return reply(conn.protocol, (w) => w.integer(log.length));
    case 'reset':
      log.reset();
      return OK;
    case 'help':
      return helpReply(conn.protocol, SLOWLOG_HELP);
    default:
      return errorReply(`ERR unknown subcommand '${args[1].subarray(0, 128).toString('latin1')}'. Try SLOWLOG HELP.`);
  }
};
