// The deadline of one upstream exchange, with stand-in dispatchers that control exactly when undici
// would start writing the request (onRequestStart) and what comes back.
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { exchange } from '../../src/upstream/http-exchange.js';

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
    expect(await pending).toEqual({ ok: true, status: 200, contentType: 'application/octet-stream', body: Buffer.from('+OK\r\n') });
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
