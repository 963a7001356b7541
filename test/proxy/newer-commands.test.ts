// Commands newer than Redis 7.0.15 reach the upstream through the proxy (the REST platform answers
// them: HGETDEL by emulation, the rest with its own error), instead of the proxy's unknown-command
// error; a command no table knows never leaves the proxy. What went upstream is read from the
// per-command cost counters of a live /metrics scrape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsText } from '../../src/metrics.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function upstreamCalls(command: string): Promise<number> {
  const line = (await metricsText()).body
    .split('\n')
    .find((l) => l.startsWith(`respgate_proxy_upstream_command_calls_total{command="${command}"} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('commands newer than Redis 7.0.15 through the proxy', () => {
  it('forwards them to the upstream, and keeps unknown ones in the proxy', async () => {
    const c = await RawClient.connect(stack.proxy.port);
    const replies = await c.call(
      ['HSET', 'newer:h', 'a', '1', 'b', '2'],
      ['HGETDEL', 'newer:h', 'FIELDS', '1', 'a'],
      ['HGETALL', 'newer:h'],
      ['WAITAOF', '0', '0', '0'],
      ['SEARCH.QUERY', 'idx', '{}'],
      ['FT.SEARCH', 'idx', '*'],
      ['HGETDEL', 'newer:h', 'FIELDS'],
    );
    expect(replies.slice(0, 3).map(String)).toEqual([':2\r\n', '*1\r\n$1\r\n1\r\n', '*2\r\n$1\r\nb\r\n$1\r\n2\r\n']);
    // Answered by the upstream (redis-server 7.0.15 behind the platform does not have WAITAOF; the platform's
    // Search answers SEARCH.QUERY of a missing index), not refused by the proxy.
    expect(String(replies[3])).toMatch(/^-/);
    expect(String(replies[4])).not.toMatch(/unknown command|not supported by respgate/);
    expect(await upstreamCalls('hgetdel')).toBe(1);
    expect(await upstreamCalls('waitaof')).toBe(1);
    expect(await upstreamCalls('search.query')).toBe(1);
    // Unknown to every table: Redis' own error from the proxy; a known command with too few arguments: its arity error.
    expect(String(replies[5])).toBe("-ERR unknown command 'FT.SEARCH', with args beginning with: 'idx' '*' \r\n");
    expect(String(replies[6])).toBe("-ERR wrong number of arguments for 'hgetdel' command\r\n");
    expect(await upstreamCalls('unknown')).toBe(0);
    c.close();
  });
});
