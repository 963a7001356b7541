// The deadline of one upstream exchange, with stand-in dispatchers that control exactly when undici
// would start writing the request (onRequestStart) and what comes back.
import type { Dispatcher } from 'undici';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { exchange, MIN_BYTES_PER_SECOND, transferAllowanceMs } from '../../src/upstream/http-exchange.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Handler = Dispatcher.DispatchHandler;

/** A dispatcher that hands the handler to the test instead of sending anything. */
function standIn(): { dispatcher: Dispatcher; handler: () => Handler } {
  let handler: Handler | undefined;
  const dispatcher = {
    dispatch(_opts: Dispatcher.DispatchOptions, h: Handler) {
      handler = h;
      return true;
    },
  } as unknown as Dispatcher;
  return { dispatcher, handler: () => handler! };
}

function controller(): Dispatcher.DispatchController & { abortedWith: Error | undefined } {
  const c = {
    abortedWith: undefined as Error | undefined,
    aborted: false,
    paused: false,
    reason: null,
    abort(reason: Error) {
      c.abortedWith = reason;
    },
    pause() {},
    resume() {},
  };
  return c as unknown as Dispatcher.DispatchController & { abortedWith: Error | undefined };
}

const request = { path: '/pipeline', headers: {}, body: '[]' };

describe('exchange deadline', () => {
  it('reports a request still waiting for a connection as not sent, and never sends it later', async () => {
    const { dispatcher, handler } = standIn();
    const started = Date.now();
    const answer = await exchange(dispatcher, request, 100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(answer).toEqual({ ok: false, problem: 'timed out after 100 ms', notSent: true, timedOut: true, code: undefined });
    // The pool gets a connection afterwards: the request is abandoned before a byte is written.
    const late = controller();
    handler().onRequestStart!(late, undefined);
    expect(late.abortedWith?.message).toMatch(/abandoned/);
  });

  it('reports a request that was started as sent (outcome unknown) and aborts it', async () => {
    const { dispatcher, handler } = standIn();
    const pending = exchange(dispatcher, request, 100);
    const c = controller();
    handler().onRequestStart!(c, undefined);
    handler().onResponseStart!(c, 200, { 'content-type': 'application/octet-stream' }, 'OK');
    handler().onResponseData!(c, Buffer.from('+OK'));
    const answer = await pending;
    expect(answer).toMatchObject({ ok: false, notSent: false, timedOut: true });
    expect(c.abortedWith?.message).toMatch(/timed out after 100 ms/);
    // Late events are ignored.
    handler().onResponseEnd!(c, {});
  });

  it('counts the deadline from sending: a request that waited longer than it for a connection, while the pool made progress, still gets its full time', async () => {
    const { dispatcher, handler } = standIn();
    const progress = { at: performance.now() };
    const beat = setInterval(() => (progress.at = performance.now()), 20);
    const pending = exchange(dispatcher, request, 100, progress);
    await sleep(250); // waiting its turn: other requests of the pool are answered meanwhile
    clearInterval(beat);
    const c = controller();
    handler().onRequestStart!(c, undefined);
    await sleep(60);
    handler().onResponseStart!(c, 200, { 'content-type': 'application/octet-stream' }, 'OK');
    handler().onResponseData!(c, Buffer.from('+OK\r\n'));
    handler().onResponseEnd!(c, {});
    expect(await pending).toMatchObject({ ok: true, body: Buffer.from('+OK\r\n') });
    expect(c.abortedWith).toBeUndefined();
  });

  it('a waiting request times out when the pool made no progress for the whole deadline', async () => {
    const { dispatcher } = standIn();
    const progress = { at: performance.now() - 1000 };
    const started = performance.now();
    const answer = await exchange(dispatcher, request, 100, progress);
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(answer).toMatchObject({ ok: false, notSent: true, timedOut: true });
  });

  it('gives a sent request time for its bytes: a 1 MiB body 250 ms more, and answer bytes as they arrive', async () => {
    expect(transferAllowanceMs(MIN_BYTES_PER_SECOND)).toBe(1000);
    const { dispatcher, handler } = standIn();
    const body = Buffer.alloc(1024 * 1024);
    const pending = exchange(dispatcher, { ...request, body }, 100);
    const c = controller();
    handler().onRequestStart!(c, undefined);
    const sentAt = performance.now();
    await sleep(200); // past 100 ms, within 100 + 250
    expect(c.abortedWith).toBeUndefined();
    handler().onResponseStart!(c, 200, { 'content-type': 'application/octet-stream' }, 'OK');
    // 2 MiB of answer earn 500 ms more: still not timed out at 100 + 250 ms.
    handler().onResponseData!(c, Buffer.alloc(2 * 1024 * 1024));
    await sleep(250);
    expect(c.abortedWith).toBeUndefined();
    const answer = await pending; // no more bytes: times out at 100 + 250 + 500 ms after sending
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(840);
    expect(answer).toMatchObject({ ok: false, notSent: false, timedOut: true, problem: 'timed out after 100 ms' });
    expect(c.abortedWith?.message).toMatch(/timed out/);
  });

  it('collects a complete answer, skipping 1xx heads', async () => {
    const { dispatcher, handler } = standIn();
    const pending = exchange(dispatcher, request, 1000);
    const c = controller();
    handler().onRequestStart!(c, undefined);
    handler().onResponseStart!(c, 100, {}, 'Continue');
    handler().onResponseStart!(c, 200, { 'content-type': 'application/octet-stream' }, 'OK');
    handler().onResponseData!(c, Buffer.from('+O'));
    handler().onResponseData!(c, Buffer.from('K\r\n'));
    handler().onResponseEnd!(c, {});
    const answer = await pending;
    if (!answer.ok) throw new Error(answer.problem);
    expect(answer).toMatchObject({ status: 200, contentType: 'application/octet-stream', size: 5 });
    // The pieces as they arrived, and joined when the body is read.
    expect(answer.pieces.map(String)).toEqual(['+O', 'K\r\n']);
    expect(answer.body).toEqual(Buffer.from('+OK\r\n'));
    expect(answer.body).toBe(answer.body);
  });

  it('tells a connection error before sending from one after', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const a = standIn();
    const before = exchange(a.dispatcher, request, 1000);
    a.handler().onResponseError!(undefined as unknown as Dispatcher.DispatchController, refused);
    expect(await before).toEqual({
      ok: false,
      problem: 'connect ECONNREFUSED 127.0.0.1:1',
      notSent: true,
      timedOut: false,
      code: 'ECONNREFUSED',
    });

    const b = standIn();
    const after = exchange(b.dispatcher, request, 1000);
    const c = controller();
    b.handler().onRequestStart!(c, undefined);
    b.handler().onResponseError!(c, Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    expect(await after).toMatchObject({ ok: false, problem: 'other side closed', notSent: false, timedOut: false });
  });

  it('describes an AggregateError by its first cause', async () => {
    const { dispatcher, handler } = standIn();
    const pending = exchange(dispatcher, request, 1000);
    const err = Object.assign(
      new AggregateError([new Error('connect ECONNREFUSED ::1:8079'), new Error('connect ECONNREFUSED 127.0.0.1:8079')], ''),
      { code: 'ECONNREFUSED' },
    );
    handler().onResponseError!(undefined as unknown as Dispatcher.DispatchController, err);
    expect(await pending).toMatchObject({ problem: 'connect ECONNREFUSED ::1:8079', notSent: true });
  });

  it('turns a dispatcher that throws into a failed, unsent exchange', async () => {
    const dispatcher = {
      dispatch() {
        throw new Error('boom');
      },
    } as unknown as Dispatcher;
    expect(await exchange(dispatcher, request, 1000)).toMatchObject({ ok: false, problem: 'boom', notSent: true });
  });
});
