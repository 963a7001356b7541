// The parsers behind the console's Proxy page: CLIENT LIST lines, INFO fields, INFO commandstats and clientcost.
import { describe, expect, it } from 'vitest';
import { parseClientCost, parseClientList, parseCommandStats, parseInfo, parseLatencyStats } from '../../src/console/proxy-ops.js';

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

  it('reads latencystats lines into percentiles per command, subcommands included', () => {
    expect(
      parseLatencyStats(
        '# Latencystats\r\nlatency_percentiles_usec_get:p50=1.003,p99=3.007,p99.9=4.015\r\nlatency_percentiles_usec_client|list:p50=20.095,p99=20.095,p99.9=20.095\r\n',
      ),
    ).toEqual({
      get: { p50: 1.003, p99: 3.007, 'p99.9': 4.015 },
      'client|list': { p50: 20.095, p99: 20.095, 'p99.9': 20.095 },
    });
    expect(parseLatencyStats('# Latencystats\r\n')).toEqual({});
  });

  it('reads INFO clientcost into cost per client and per command, the console left out', () => {
    const text =
      '# Clientcost\r\nclientcost_clients:3\r\n' +
      'client_billing:commands=5,requests=4.500,bytes_sent=160,bytes_received=75,errors=1\r\n' +
      'client_respgate-console:commands=1,requests=1.000,bytes_sent=20,bytes_received=5,errors=0\r\n' +
      'client_other:commands=1,requests=0.333,bytes_sent=27,bytes_received=5,errors=0\r\n' +
      'cmdcost_get:commands=3,requests=2.500,bytes_sent=72,bytes_received=40,errors=0\r\n';
    expect(parseClientCost(text)).toEqual({
      clients: {
        billing: { commands: 5, requests: 4.5, bytes_sent: 160, bytes_received: 75, errors: 1 },
        other: { commands: 1, requests: 0.333, bytes_sent: 27, bytes_received: 5, errors: 0 },
      },
      commands: { get: { commands: 3, requests: 2.5, bytes_sent: 72, bytes_received: 40, errors: 0 } },
    });
    // A proxy without the section answers an empty INFO.
    expect(parseClientCost('')).toEqual({ clients: {}, commands: {} });
  });
});
