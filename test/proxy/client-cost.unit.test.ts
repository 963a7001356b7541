// ClientCost in process: fair shares of a coalesced request, labels (name, lib-name, unnamed),
// bounded series with `other`, INFO's top N, and bad input to the INFO name encoding.
import { describe, expect, it } from 'vitest';
import {
  BLOCKING_POLLER,
  ClientCost,
  type CostOwner,
  clientCostLines,
  costLabel,
  infoName,
  requestBytes,
  UNNAMED,
} from '../../src/proxy/client-cost.js';

const b = (s: string) => Buffer.from(s);
const cmd = (...args: string[]) => args.map(b);
/** Charges commands given as parallel arrays (names, optional sizes), as items. */
function charge(
  cost: ClientCost,
  owners: readonly (CostOwner | undefined)[],
  names: readonly string[],
  commands: readonly Buffer[][],
  replies: readonly (Buffer | undefined)[],
  sizes?: readonly (number | undefined)[],
): void {
  cost.call(
    owners,
    commands.map((args, i) => ({ args, name: names[i], bytes: sizes?.[i] })),
    replies,
    () => 'unknown',
  );
}

describe('ClientCost', () => {
  it('labels a connection by its name, else its lib-name, else (unnamed); no owner is the blocking poller', () => {
    expect(costLabel({ name: 'api', libName: 'ioredis' })).toBe('api');
    expect(costLabel({ name: '', libName: 'redis-py' })).toBe('redis-py');
    expect(costLabel({ name: '', libName: '' })).toBe(UNNAMED);
    expect(costLabel(undefined)).toBe(BLOCKING_POLLER);
  });

  it('measures a command as a RESP multibulk', () => {
    expect(requestBytes(cmd('GET', 'k'))).toBe(Buffer.from('*2\r\n$3\r\nGET\r\n$1\r\nk\r\n').length);
    expect(requestBytes([b('SET'), b('key'), Buffer.alloc(1000)])).toBe(`*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1000\r\n`.length + 1000 + 2);
  });

  it('splits one coalesced request by its commands: shares add up to one request', () => {
    const cost = new ClientCost();
    const a = { name: 'a' };
    const c = { name: 'c' };
    const commands = [cmd('GET', 'x'), cmd('GET', 'y'), cmd('SET', 'z', 'v')];
    const replies = [b('$1\r\n1\r\n'), b('-ERR boom\r\n'), b('+OK\r\n')];
    charge(cost, [a, a, c], ['get', 'get', 'set'], commands, replies);
    const series = cost.clientSeries();
    expect(series.get('a')).toEqual({
      commands: 2,
      requests: 2 / 3,
      bytesSent: requestBytes(commands[0]) + requestBytes(commands[1]),
      bytesReceived: 7 + 11,
      errors: 1,
    });
    expect(series.get('c')).toMatchObject({ commands: 1, requests: 1 / 3, bytesReceived: 5, errors: 0 });
    expect(cost.commandSeries().get('get')).toMatchObject({ commands: 2, errors: 1 });
    const total = [...series.values()].reduce((n, s) => n + s.requests, 0);
    expect(total).toBeCloseTo(1, 12);
  });

  it('gives the first N names series and counts later ones as other, monotonically', () => {
    const cost = new ClientCost(2);
    for (const name of ['a', 'b', 'c', 'd', 'a']) charge(cost, [{ name }], ['ping'], [cmd('PING')], [b('+PONG\r\n')]);
    expect([...cost.clientSeries().keys()]).toEqual(['a', 'b', 'other']);
    expect(cost.clientSeries().get('other')?.commands).toBe(2);
    expect(cost.clientSeries().get('a')?.commands).toBe(2);
  });

  it('INFO lists the top N by commands then other, and resets without touching the series', () => {
    const cost = new ClientCost(1);
    charge(cost, [{ name: 'small' }], ['get'], [cmd('GET', 'k')], [b('$-1\r\n')]);
    for (let i = 0; i < 3; i++) charge(cost, [{ name: 'big' }], ['get'], [cmd('GET', 'k')], [b('$-1\r\n')]);
    const lines = Object.fromEntries(clientCostLines(cost));
    expect(lines.clientcost_clients).toBe('2');
    expect(lines.client_big).toMatch(/^commands=3,requests=3\.000,bytes_sent=\d+,bytes_received=15,errors=0$/);
    expect(lines.client_other).toMatch(/^commands=1,/);
    expect(lines.cmdcost_get).toMatch(/^commands=4,/);
    cost.resetInfo();
    expect(Object.fromEntries(clientCostLines(cost)).clientcost_clients).toBe('0');
    expect(cost.clientSeries().get('small')?.commands).toBe(1);
  });

  it('charges sizes measured earlier as the commands would measure now, and counts right across labels, commands and a reset', () => {
    const walked = new ClientCost();
    const given = new ClientCost();
    const a = { name: '' };
    const c = { name: '', libName: 'lib' };
    const commands = [cmd('GET', 'x'), cmd('GET', 'y'), cmd('SET', 'z', 'v'), cmd('GET', 'w'), cmd('GET', 'v')];
    const owners = [a, a, a, c, a];
    const names = ['get', 'get', 'set', 'get', 'get'];
    const replies = [b('$-1\r\n'), b('$-1\r\n'), b('+OK\r\n'), b('-ERR x\r\n'), b('$-1\r\n')];
    charge(walked, owners, names, commands, replies);
    charge(given, owners, names, commands, replies, commands.map(requestBytes));
    for (const cost of [walked, given]) {
      expect(cost.clientSeries().get(UNNAMED)).toMatchObject({ commands: 4, errors: 0 });
      expect(cost.clientSeries().get('lib')).toMatchObject({ commands: 1, errors: 1, bytesReceived: 8 });
      expect(cost.commandSeries().get('get')).toMatchObject({ commands: 4, errors: 1 });
      expect(cost.commandSeries().get('set')).toMatchObject({ commands: 1, bytesSent: requestBytes(commands[2]) });
    }
    expect([...given.clientSeries()]).toEqual([...walked.clientSeries()]);
    expect([...given.commandSeries()]).toEqual([...walked.commandSeries()]);
    // After CONFIG RESETSTAT, INFO counts from zero for the same label (no stale counters kept at hand).
    given.resetInfo();
    charge(given, [a], ['get'], [cmd('GET', 'x')], [b('$-1\r\n')], [requestBytes(cmd('GET', 'x'))]);
    expect(Object.fromEntries(clientCostLines(given))[`client_${infoName(UNNAMED)}`]).toMatch(/^commands=1,/);
    expect(given.clientSeries().get(UNNAMED)?.commands).toBe(5);
  });

  it("charges the batcher's items as call() charges the same commands, naming an item without a name by nameOf", () => {
    const byArrays = new ClientCost();
    const byItems = new ClientCost();
    const a = { name: 'a' };
    const c = { name: '', libName: 'lib' };
    const commands = [cmd('GET', 'x'), cmd('GET', 'y'), cmd('SET', 'z', 'v'), cmd('GET', 'w'), cmd('INCR', 'n')];
    const owners = [a, a, a, c, c];
    const names = ['get', 'get', 'set', 'get', 'incr'];
    const replies = [b('$-1\r\n'), b('$-1\r\n'), b('+OK\r\n'), b('-ERR x\r\n'), b(':1\r\n')];
    charge(byArrays, owners, names, commands, replies);
    // The last item has neither name nor size: nameOf names it, its size is measured.
    const items = commands.map((args, i) => (i < 4 ? { args, name: names[i], bytes: requestBytes(args) } : { args }));
    const asked: string[] = [];
    byItems.call(owners, items, replies, (args) => (asked.push(String(args[0])), 'incr'));
    expect(asked).toEqual(['INCR']);
    expect([...byItems.clientSeries()]).toEqual([...byArrays.clientSeries()]);
    expect([...byItems.commandSeries()]).toEqual([...byArrays.commandSeries()]);
    expect(byItems.commandSeries().get('get')).toMatchObject({ commands: 3, errors: 1 });
    expect(byItems.clientSeries().get('lib')).toMatchObject({ commands: 2, errors: 1 });
  });

  it('keeps INFO field separators out of names', () => {
    expect(infoName('svc:api,v=2 x')).toBe('svc_api_v_2_x');
    expect(infoName('node-redis(4.7)@host/a.b')).toBe('node-redis(4.7)@host/a.b');
  });
});
