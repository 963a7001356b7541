// The parsers behind the console's Proxy page: CLIENT LIST lines, INFO fields, INFO commandstats.
import { describe, expect, it } from 'vitest';
import { parseClientList, parseCommandStats, parseInfo } from '../../src/platform/console/proxy-ops.js';

describe('proxy-ops parsers', () => {
  it('reads CLIENT LIST lines into fields, empty values and = inside values kept', () => {
    expect(parseClientList('id=3 addr=127.0.0.1:5000 name= cmd=client|list\nid=4 addr=[::1]:6 name=w=1 flags=N\n')).toEqual([
      { id: '3', addr: '127.0.0.1:5000', name: '', cmd: 'client|list' },
      { id: '4', addr: '[::1]:6', name: 'w=1', flags: 'N' },
    ]);
    expect(parseClientList('')).toEqual([]);
  });

  it('reads INFO fields and skips section headers', () => {
    expect(parseInfo('# Stats\r\ntotal_commands_processed:12\r\ninstantaneous_ops_per_sec:0\r\n\r\n')).toEqual({
      total_commands_processed: '12',
      instantaneous_ops_per_sec: '0',
    });
  });

  it('reads commandstats lines into numbers per command, subcommands included', () => {
    expect(
      parseCommandStats(
        '# Commandstats\r\ncmdstat_set:calls=6,usec=120,usec_per_call=20.00,rejected_calls=0,failed_calls=1\r\ncmdstat_client|list:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n',
      ),
    ).toEqual({
      set: { calls: 6, usec: 120, usec_per_call: 20, rejected_calls: 0, failed_calls: 1 },
      'client|list': { calls: 1, usec: 5, usec_per_call: 5, rejected_calls: 0, failed_calls: 0 },
    });
  });
});
