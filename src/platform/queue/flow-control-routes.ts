// GET /v2/flowControl (?search=), GET /v2/flowControl/{key}, POST …/{key}/pause|resume|pin|unpin|
// resetRate and GET /v2/globalParallelism, with the shapes of the SDK's FlowControlApi and the
// service's openapi (mutations answer 200 with an empty body; an unknown key is 404).
import type { Engine } from './engine.js';
import { badRequest, notFound } from './errors.js';
import type { FlowControl } from './flow-control.js';
import { send, type Call } from './http-exchange.js';

export interface FlowControlRouteDeps {
  flow: FlowControl;
  engine: Engine;
  /** Worker concurrency of the default queue: the platform's global parallelism. */
  globalParallelism: number;
}

export async function flowControlRoute(
  d: FlowControlRouteDeps,
  c: Call,
  method: string,
  key: string | undefined,
  action: string | undefined,
) {
  if (key === undefined || key === '') {
    if (method !== 'GET') return false;
    const search = c.query.get('search') ?? undefined;
    const keys = await d.flow.keys(search);
    send(c.res, 200, await Promise.all(keys.map((k) => d.flow.info(k))));
    return true;
  }
  if (action === undefined && method === 'GET') {
    if (!(await d.flow.exists(key)))
      throw notFound(`flowControl key ${key} not found: publish with Upstash-Flow-Control-Key: ${key} first`);
    send(c.res, 200, await d.flow.info(key));
    return true;
  }
  if (method !== 'POST') return false;
  switch (action) {
    case 'pause':
    case 'resume':
      await d.engine.wake(key, await d.flow.setPaused(key, action === 'pause'));
      break;
    case 'pin':
      await d.engine.wake(key, await d.flow.pin(key, readPin(c.query)));
      break;
    case 'unpin':
      await d.flow.unpin(key, readUnpin(c.query));
      break;
    // `reset`: the older spelling of resetRate, still answered by the service.
    case 'resetRate':
    case 'reset':
      await d.engine.wake(key, await d.flow.resetRate(key));
      break;
    default:
      return false;
  }
  send(c.res, 200);
  return true;
}

export function globalParallelism(d: FlowControlRouteDeps, c: Call): void {
  send(c.res, 200, { parallelismMax: d.globalParallelism, parallelismCount: d.engine.deliveriesInFlight });
}

function readPin(q: URLSearchParams): { parallelism?: number; rate?: number; periodS?: number } {
  const number = (name: string, what: string) => {
    const text = q.get(name);
    if (text === null || text === '') return undefined;
    if (!/^\d+$/.test(text) || Number(text) < 1) throw badRequest(`invalid ${name} '${text}': it must be ${what}`);
    return Number(text);
  };
  const pin = {
    parallelism: number('parallelism', 'a whole number >= 1'),
    rate: number('rate', 'a whole number >= 1'),
    periodS: number('period', 'a whole number of seconds >= 1'),
  };
  if (pin.parallelism === undefined && pin.rate === undefined && pin.periodS === undefined)
    throw badRequest(
      'nothing to pin: give parallelism, rate and/or period (seconds) as query parameters, e.g. ?parallelism=3&rate=20&period=60',
    );
  return pin;
}

function readUnpin(q: URLSearchParams): { parallelism: boolean; rate: boolean } {
  const flag = (name: string) => {
    const text = q.get(name);
    if (text === null || text === '' || text === 'false') return false;
    if (text === 'true') return true;
    throw badRequest(`invalid ${name} '${text}': use true or false`);
  };
  const which = { parallelism: flag('parallelism'), rate: flag('rate') };
  if (!which.parallelism && !which.rate) throw badRequest('nothing to unpin: give parallelism=true and/or rate=true as query parameters');
  return which;
}
