// The blocking-command emulation on its own (src/proxy/blocking.ts): the plan of each command and
// Redis' timeout parsing, and the poll loop driven step by step, with the clock under the test's
// control (the poll function is the loop's own input: here each poll is answered by the test).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lookupCommand } from '../../src/commands/table.js';
import { runBlocking } from '../../src/proxy/blocking-hub.js';
import { parseSecondsTimeout, planBlocking, type BlockingPlan } from '../../src/proxy/blocking.js';

const b = (s: string) => Buffer.from(s);
const args = (...a: string[]) => a.map(b);
const NULL = b('*-1\r\n');
const text = (x: Buffer | unknown) => (Buffer.isBuffer(x) ? x.toString('latin1') : x);

function plan(...a: string[]): BlockingPlan {
  const p = planBlocking(lookupCommand(a[0])!, args(...a));
  if (Buffer.isBuffer(p)) throw new Error(`no plan: ${p.toString()}`);
  return p;
}

describe('parseSecondsTimeout (Redis getTimeoutFromObjectOrReply, seconds)', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    ['0.5', 500],
    ['1e1', 10_000],
    ['.25', 250],
    ['+2', 2000],
    ['-0.0001', 0],
    ['inf', 'ERR timeout is negative'],
    ['-1', 'ERR timeout is negative'],
    ['abc', 'ERR timeout is not a float or out of range'],
    ['', 'ERR timeout is not a float or out of range'],
    [' 1', 'ERR timeout is not a float or out of range'],
  ])('%j → %j', (input, expected) => {
    const r = parseSecondsTimeout(b(input));
    expect(Buffer.isBuffer(r) ? r.toString().slice(1, -2) : r).toBe(expected);
  });
});

describe('planBlocking', () => {
  it('polls the non-blocking form of each command', () => {
    expect(plan('BLMOVE', 's', 'd', 'LEFT', 'RIGHT', '1.5')).toMatchObject({
      poll: args('LMOVE', 's', 'd', 'LEFT', 'RIGHT'),
      timeoutMs: 1500,
    });
    expect(plan('BRPOPLPUSH', 's', 'd', '0')).toMatchObject({ poll: args('RPOPLPUSH', 's', 'd'), timeoutMs: 0 });
    expect(plan('BLMPOP', '2', '1', 'l', 'LEFT')).toMatchObject({ poll: args('LMPOP', '1', 'l', 'LEFT'), timeoutMs: 2000 });
    expect(plan('XREAD', 'COUNT', '2', 'BLOCK', '100', 'STREAMS', 's', '0')).toMatchObject({
      poll: args('XREAD', 'COUNT', '2', 'STREAMS', 's', '0'),
      timeoutMs: 100,
    });
    expect(plan('XREADGROUP', 'GROUP', 'g', 'c', 'CLAIM', '50', 'BLOCK', '100', 'STREAMS', 's', '>')).toMatchObject({
      poll: args('XREADGROUP', 'GROUP', 'g', 'c', 'CLAIM', '50', 'STREAMS', 's', '>'),
      timeoutMs: 100,
    });
    const blpop = plan('BLPOP', 'a', 'b', '1');
    expect(text(blpop.poll[0])).toBe('EVAL');
    expect(blpop.poll.slice(2).map(text)).toEqual(['2', 'a', 'b', 'LPOP', 'list']);
  });

  it('XREAD `$` is resolved by a first call, then polled from the last id', () => {
    const p = plan('XREAD', 'BLOCK', '0', 'STREAMS', 'a', 'b', '$', '5-0');
    expect(p.prepare!.commands.map((c) => c.map(text))).toEqual([['XREVRANGE', 'a', '+', '-', 'COUNT', '1']]);
    const poll = p.prepare!.apply([b('*1\r\n*2\r\n$3\r\n7-1\r\n*0\r\n')]);
    expect(poll.map(text)).toEqual(['XREAD', 'STREAMS', 'a', 'b', '7-1', '5-0']);
    expect(p.prepare!.apply([b('*0\r\n')]).map(text)).toEqual(['XREAD', 'STREAMS', 'a', 'b', '0-0', '5-0']);
  });

  it('answers the error Redis gives before blocking', () => {
    const err = (...a: string[]) => text(planBlocking(lookupCommand(a[0])!, args(...a)));
    expect(err('BLMOVE', 's', 'd', 'UP', 'LEFT', '1')).toBe('-ERR syntax error\r\n');
    expect(err('XREAD', 'BLOCK', '-1', 'STREAMS', 's', '0')).toBe('-ERR timeout is negative\r\n');
    expect(err('WAIT', '0', '0')).toMatch(/^-ERR blocking command 'wait' is not supported by respgate/);
  });
});

describe('runBlocking', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  /** A poll function answered by the test: each call waits until the test answers it. */
  function scripted() {
    const calls: { commands: Buffer[][]; answer: (replies: Buffer[]) => void }[] = [];
    const poll = (commands: Buffer[][]) => new Promise<Buffer[]>((answer) => calls.push({ commands, answer }));
    return { calls, poll };
  }
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('polls until data comes, the interval doubling from 10 ms up to the cap', async () => {
    const { calls, poll } = scripted();
    const done = vi.fn();
    runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), poll, 50, done);
    await settle();
    const at: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect(calls).toHaveLength(i + 1);
      at.push(Date.now());
      calls[i].answer([b('$-1\r\n')]);
      await settle();
      await vi.advanceTimersToNextTimerAsync();
    }
    expect(at.slice(1).map((t, i) => t - at[i])).toEqual([10, 20, 40, 50]);
    calls[5].answer([b('$1\r\nx\r\n')]);
    await settle();
    expect(done).toHaveBeenCalledOnce();
    expect(text(done.mock.calls[0][0])).toBe('$1\r\nx\r\n');
  });

  it('answers the timeout reply at the deadline, and an error reply at once', async () => {
    const { calls, poll } = scripted();
    const done = vi.fn();
    runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0.1'), poll, 1000, done);
    for (let guard = 0; done.mock.calls.length === 0 && guard < 20; guard++) {
      await settle();
      calls.at(-1)!.answer([NULL]);
      await settle();
      await vi.advanceTimersToNextTimerAsync();
    }
    expect(text(done.mock.calls[0][0])).toBe('*-1\r\n');
    expect(Date.now()).toBeGreaterThanOrEqual(100);

    const failed = vi.fn();
    const second = scripted();
    runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), second.poll, 100, failed);
    await settle();
    second.calls[0].answer([b('-WRONGTYPE x\r\n')]);
    await settle();
    expect(text(failed.mock.calls[0][0])).toBe('-WRONGTYPE x\r\n');
  });

  it('CLIENT UNBLOCK between polls answers now; during a poll, after it, and data taken by that poll wins', async () => {
    const between = scripted();
    const done1 = vi.fn();
    const run1 = runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), between.poll, 100, done1);
    await settle();
    between.calls[0].answer([NULL]);
    await settle();
    run1.unblock(b('-UNBLOCKED x\r\n'));
    expect(text(done1.mock.calls[0][0])).toBe('-UNBLOCKED x\r\n');

    const during = scripted();
    const done2 = vi.fn();
    const run2 = runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), during.poll, 100, done2);
    await settle();
    run2.unblock(); // the timeout reply, once the poll in flight is back empty
    expect(done2).not.toHaveBeenCalled();
    during.calls[0].answer([NULL]);
    await settle();
    expect(text(done2.mock.calls[0][0])).toBe('*-1\r\n');

    const data = scripted();
    const done3 = vi.fn();
    const run3 = runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), data.poll, 100, done3);
    await settle();
    run3.unblock();
    data.calls[0].answer([b('$1\r\ny\r\n')]); // popped upstream: never dropped
    await settle();
    expect(text(done3.mock.calls[0][0])).toBe('$1\r\ny\r\n');
  });

  it('cancel stops polling and never answers', async () => {
    const { calls, poll } = scripted();
    const done = vi.fn();
    const run = runBlocking(plan('BLMOVE', 's', 'd', 'LEFT', 'LEFT', '0'), poll, 100, done);
    await settle();
    calls[0].answer([NULL]);
    await settle();
    run.cancel();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
    expect(done).not.toHaveBeenCalled();
  });

  it('XREAD `$`: the prepare call first, then polls with the resolved id', async () => {
    const { calls, poll } = scripted();
    const done = vi.fn();
    runBlocking(plan('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'), poll, 100, done);
    await settle();
    expect(calls[0].commands[0].map(text)).toEqual(['XREVRANGE', 's', '+', '-', 'COUNT', '1']);
    calls[0].answer([b('*1\r\n*2\r\n$3\r\n9-9\r\n*0\r\n')]);
    await settle();
    expect(calls[1].commands[0].map(text)).toEqual(['XREAD', 'STREAMS', 's', '9-9']);
  });
});
