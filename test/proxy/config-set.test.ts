// CONFIG SET through the proxy: parameters that only tune encodings are accepted (+OK) and change
// nothing upstream; their errors are redis-server's; a parameter set to the value CONFIG GET shows
// is +OK; every other change keeps the refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
const clients: RawClient[] = [];
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await stack?.stop();
});

async function replies(port: number, ...commands: string[][]): Promise<string[]> {
  const c = await RawClient.connect(port);
  clients.push(c);
  return (await c.call(...commands)).map((r) => r.toString('latin1'));
}

const REFUSAL =
  "-ERR command 'config|set' is not supported by respgate: the upstream's configuration is managed by the service; configure respgate with its flags\r\n";

describe('CONFIG SET', () => {
  it('encoding parameters answer as redis-server does', async () => {
    const commands = [
      ['CONFIG', 'SET', 'hash-max-ziplist-entries', '64'],
      ['CONFIG', 'SET', 'zset-max-listpack-entries', '0', 'zset-max-ziplist-value', '128'],
      ['CONFIG', 'SET', 'list-max-ziplist-size', '-2', 'list-compress-depth', '1', 'set-max-intset-entries', '512'],
      ['CONFIG', 'SET', 'stream-node-max-entries', '10', 'stream-node-max-bytes', '4kb', 'hll-sparse-max-bytes', '3000'],
      ['CONFIG', 'SET', 'hash-max-listpack-value', 'abc'],
      ['CONFIG', 'SET', 'stream-node-max-entries', '1x'],
      ['CONFIG', 'SET', 'hash-max-ziplist-entries', '1', 'hash-max-ziplist-entries', '2'],
      ['CONFIG', 'SET', 'hash-max-ziplist-entries', '1', 'list-compress-depth'],
      // Other parameters set to the value CONFIG GET shows: nothing changes.
      ['CONFIG', 'SET', 'save', ''],
      ['CONFIG', 'SET', 'appendonly', 'no', 'maxmemory', '0', 'zset-max-ziplist-entries', '128'],
    ];
    expect(await replies(stack.proxy.port, ...commands)).toEqual(await replies(stack.oracle.endpoint.port, ...commands));
  });

  it('other parameters, alone or mixed with encoding ones, are refused; the upstream is unchanged', async () => {
    expect(
      await replies(
        stack.proxy.port,
        ['CONFIG', 'SET', 'maxmemory', '1'],
        ['CONFIG', 'SET', 'hash-max-ziplist-entries', '1', 'maxmemory-policy', 'allkeys-lru'],
        ['CONFIG', 'SET', 'save', '3600 1'],
      ),
    ).toEqual([REFUSAL, REFUSAL, REFUSAL]);
    expect(
      await replies(
        stack.proxy.port,
        ['CONFIG', 'SET', 'hash-max-listpack-entries', '1'],
        ['HSET', 'h', 'a', '1', 'b', '2'],
        ['OBJECT', 'ENCODING', 'h'],
      ),
    ).toEqual(['+OK\r\n', ':2\r\n', '$8\r\nlistpack\r\n']);
  });
});

// Found by Redis' own suite (unit/keyspace): a DB index that is no integer is Redis' parse error,
// not the REST refusal of other databases.
describe('COPY … DB', () => {
  it('answers as redis-server for an index that is no integer, and for a database the proxy does not have', async () => {
    const commands = [
      ['SET', 'copy:a', 'v'],
      ['COPY', 'copy:a', 'copy:b', 'DB', 'notanumber'],
      ['COPY', 'copy:a', 'copy:b', 'DB', '0'],
      ['COPY', 'copy:a', 'copy:c', 'DB', '00'],
      ['GET', 'copy:b'],
    ];
    expect(await replies(stack.proxy.port, ...commands)).toEqual(await replies(stack.oracle.endpoint.port, ...commands));
    // A database the proxy does not have: Redis' range error, as from a redis-server with one database.
    const other = [['COPY', 'copy:a', 'copy:d', 'DB', '1']];
    expect(await replies(stack.proxy.port, ...other)).toEqual(await replies(stack.oracle.endpoint.port, ...other));
  });
});
