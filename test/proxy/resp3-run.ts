// Running the differential scenarios after HELLO 3 against a direct redis-server and a proxy
// (resp3-differential.test.ts with a resp2 upstream, resp3-json-upstream.test.ts with a JSON one).
import { expect } from 'vitest';
import { replyShape } from '../../src/commands/reply-types.js';
import { resolveCommand } from '../../src/commands/table.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';
import { closedOnBoth, RawClient, replayOnBoth, RESET_COMMANDS, type DifferentialSide } from '../helpers/stack.js';
import { judgeBug, KNOWN_DIFFERENCES, scenarios } from './differential-cases.js';
import { reportDifferences, mismatch } from './differential-compare.js';
import { KNOWN_DIFFERENCES_3, resp3Scenarios, type Scenario3, type Step3 } from './resp3-cases.js';
import { comparable3, printable } from './resp3-compare.js';

/** Pub/sub and MONITOR turn the connection into a stream (pubsub.test.ts covers them, RESP3 push frames included). */
const STREAM_COMMANDS = new Set(['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe', 'monitor']);

export const allScenarios: Scenario3[] = [...scenarios, ...resp3Scenarios];
export const stepsOf = (s: Scenario3): Step3[] => s.commands.map((c) => (Array.isArray(c) ? { args: c } : c));

/** The two servers compared: a direct redis-server and the proxy (ports). */
export interface Ports {
  oracle: number;
  proxy: number;
}

async function connect3(ports: Ports): Promise<DifferentialSide> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(ports.oracle), RawClient.connect(ports.proxy)]);
  const [[o], [p]] = await Promise.all([oracle.call(['HELLO', '3']), proxy.call(['HELLO', '3'])]);
  expect(comparable3(p, 'maskIntegers')).toBe(comparable3(o, 'maskIntegers'));
  return { oracle, proxy };
}

async function reset(ports: Ports): Promise<void> {
  const side = await connect3(ports);
  try {
    const [o, p] = await Promise.all([side.oracle.call(...RESET_COMMANDS), side.proxy.call(...RESET_COMMANDS)]);
    for (let i = 0; i < RESET_COMMANDS.length; i++) expect(printable(p[i])).toBe(printable(o[i]));
  } finally {
    side.oracle.close();
    side.proxy.close();
  }
}

/** The steps to run: up to (not including) the first pub/sub or MONITOR command. */
export function runnable(scenario: Scenario3): Step3[] {
  const steps = stepsOf(scenario);
  const stop = steps.findIndex((s) => {
    const spec = resolveCommand(s.args);
    return spec !== undefined && STREAM_COMMANDS.has(spec.container ?? spec.name);
  });
  return stop < 0 ? steps : steps.slice(0, stop);
}

/** The protocol after a command, from its reply: HELLO answers a map in RESP3, a flat array in RESP2; RESET goes to RESP2. */
function protocolAfter(step: Step3, reply: Buffer, before: 2 | 3): 2 | 3 {
  const name = resolveCommand(step.args)?.name;
  if (name === 'hello' && reply[0] === 0x25) return 3;
  if (name === 'hello' && reply[0] === 0x2a) return 2;
  if (name === 'reset' && reply.toString('latin1') === '+RESET\r\n') return 2;
  return before;
}

/**
 * A difference the caller pins (the JSON upstream's losses): the failure text, or null when the
 * pinned reply holds; undefined to judge the step as usual.
 */
export type Override = (step: Step3, protocol: 2 | 3, oracle: Buffer, proxy: Buffer) => string | null | undefined;

function judge(
  scenario: Scenario3,
  index: number,
  step: Step3,
  protocol: 2 | 3,
  oracle: Buffer,
  proxy: Buffer,
  mode: string,
  override: Override | undefined,
): string | undefined {
  const where = `scenario "${scenario.name}" (${mode}), command #${index + 1}: ${step.args.map((a) => printable(a, 100)).join(' ')}`;
  const pinned = override?.(step, protocol, oracle, proxy);
  if (pinned !== undefined) return pinned === null ? undefined : `${where}: ${pinned}`;
  if (step.bug !== undefined) return judgeBug(where, step.bug, oracle, proxy);
  if (step.known !== undefined) {
    const known3 = KNOWN_DIFFERENCES_3[step.known];
    const known2 = KNOWN_DIFFERENCES[step.known];
    if (!known3 && !known2) return `${where}: unknown known-difference id ${step.known}`;
    const actual = proxy.toString('latin1');
    if (known3) {
      const ok = typeof known3.proxy === 'string' ? actual === known3.proxy : known3.proxy(actual);
      if (!ok)
        return `${where}: known difference "${step.known}" (${known3.why}) no longer holds.\n  actual proxy: ${printable(proxy)}\n  oracle:       ${printable(oracle)}`;
    } else {
      // A RESP2 known difference, in the connection's protocol (its reply converted like any other).
      const spec = resolveCommand(step.args)!;
      const text = typeof known2.proxy === 'string' ? known2.proxy : known2.proxy(step.args[0].toString().toLowerCase());
      const expected = protocol === 3 ? toResp3(Buffer.from(text, 'latin1'), replyShape(spec, step.args)) : Buffer.from(text, 'latin1');
      if (!proxy.equals(expected))
        return `${where}: known difference "${step.known}" (${known2.why}) no longer holds.\n  expected proxy: ${printable(expected)}\n  actual proxy:   ${printable(proxy)}\n  oracle:         ${printable(oracle)}`;
    }
    if (oracle.equals(proxy)) return `${where}: known difference "${step.known}" is gone (proxy now matches the oracle)`;
    return undefined;
  }
  const compare = step.compare ?? 'exact';
  return mismatch(where, oracle, proxy, compare, (reply) => comparable3(reply, compare));
}

/** One scenario after HELLO 3 on both sides (one by one, or as one pipelined burst); fails on a difference. */
export async function run3(ports: Ports, scenario: Scenario3, burst: boolean, override?: Override): Promise<void> {
  await reset(ports);
  const side = await connect3(ports);
  try {
    const steps = runnable(scenario);
    const [o, p] = await replayOnBoth(
      side,
      steps.map((s) => s.args),
      burst,
    );
    const failures: string[] = [];
    let protocol: 2 | 3 = 3;
    for (let i = 0; i < steps.length; i++) {
      const failure = judge(scenario, i, steps[i], protocol, o[i], p[i], burst ? 'pipelined burst' : 'one by one', override);
      if (failure) failures.push(failure);
      protocol = protocolAfter(steps[i], o[i], protocol);
    }
    reportDifferences(failures);
    if (scenario.closes && steps.length === stepsOf(scenario).length) {
      expect(await closedOnBoth(side)).toEqual([true, true]);
    }
  } finally {
    side.oracle.close();
    side.proxy.close();
  }
}
