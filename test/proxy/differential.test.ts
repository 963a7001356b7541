// Differential tests (issue 4): the scenarios of differential-cases.ts are sent to a direct
// redis-server (the oracle) and through the proxy (proxy → platform → another redis-server); the
// RESP2 replies must be byte-identical (or equal under the step's declared normalizer), both when the
// commands are sent one at a time and when a scenario is sent as one pipelined burst.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedOnBoth, RawClient, replayOnBoth, RESET_COMMANDS, startStack, type DifferentialSide, type Stack } from '../helpers/stack.js';
import { comparable, mismatch, printable, reportDifferences } from './differential-compare.js';
import {
  KNOWN_BUGS,
  KNOWN_DIFFERENCES,
  commandCount,
  judgeBug,
  scenarios,
  stepOf,
  type Arg,
  type Scenario,
  type Step,
} from './differential-cases.js';

/** The suite must not shrink silently. */
const MIN_COMMANDS = 300;

/** Run before each scenario on both sides, so each starts from an empty database (functions and scripts too). */

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

async function connect(): Promise<DifferentialSide> {
  const [oracle, proxy] = await Promise.all([RawClient.connect(stack.oracle.endpoint.port), RawClient.connect(stack.proxy.port)]);
  return { oracle, proxy };
}

function close(side: DifferentialSide): void {
  side.oracle.close();
  side.proxy.close();
}

/** Empties both databases; the replies to the reset commands must agree too. */
async function reset(): Promise<void> {
  const side = await connect();
  try {
    const [o, p] = await Promise.all([side.oracle.call(...RESET_COMMANDS), side.proxy.call(...RESET_COMMANDS)]);
    for (let i = 0; i < RESET_COMMANDS.length; i++) {
      expect(printable(p[i]), `reset ${RESET_COMMANDS[i].join(' ')} through the proxy`).toBe(printable(o[i]));
    }
  } finally {
    close(side);
  }
}

function describeArgs(args: Arg[]): string {
  return args.map((a) => printable(a, 200)).join(' ');
}

/** Undefined when the replies agree (or the known difference holds exactly); otherwise the failure text. */
function judge(scenario: Scenario, index: number, step: Step, oracle: Buffer, proxy: Buffer, mode: string): string | undefined {
  const where = `scenario "${scenario.name}" (${mode}), command #${index + 1}: ${describeArgs(step.args)}`;
  if (step.bug !== undefined) return judgeBug(where, step.bug, oracle, proxy);
  if (step.known !== undefined) {
    const known = KNOWN_DIFFERENCES[step.known];
    if (!known) return `${where}: unknown known-difference id ${step.known}`;
    const expected = typeof known.proxy === 'string' ? known.proxy : known.proxy(step.args[0].toString().toLowerCase());
    if (proxy.toString('latin1') !== expected) {
      return `${where}: known difference "${step.known}" (${known.why}) no longer holds.\n  expected proxy: ${printable(expected)}\n  actual proxy:   ${printable(proxy)}\n  oracle:         ${printable(oracle)}`;
    }
    if (oracle.equals(proxy))
      return `${where}: known difference "${step.known}" is gone (proxy now matches the oracle): remove it from KNOWN_DIFFERENCES`;
    return undefined;
  }
  const compare = step.compare ?? 'exact';
  return mismatch(where, oracle, proxy, compare, (reply) => comparable(reply, compare));
}

async function expectClosed(side: DifferentialSide, scenario: Scenario): Promise<void> {
  const [o, p] = await closedOnBoth(side);
  expect(o, `oracle closes after the last command of "${scenario.name}"`).toBe(true);
  expect(p, `proxy closes after the last command of "${scenario.name}"`).toBe(true);
}

async function runOneByOne(scenario: Scenario): Promise<void> {
  await reset();
  const side = await connect();
  try {
    const steps = scenario.commands.map(stepOf);
    const failures: string[] = [];
    for (let i = 0; i < steps.length; i++) {
      const [[o], [p]] = await Promise.all([side.oracle.call(steps[i].args), side.proxy.call(steps[i].args)]);
      const failure = judge(scenario, i, steps[i], o, p, 'one by one');
      if (failure) failures.push(failure);
    }
    reportDifferences(failures);
    if (scenario.closes) await expectClosed(side, scenario);
  } finally {
    close(side);
  }
}

async function runBurst(scenario: Scenario): Promise<void> {
  await reset();
  const side = await connect();
  try {
    const steps = scenario.commands.map(stepOf);
    const [o, p] = await replayOnBoth(
      side,
      steps.map((s) => s.args),
      true,
    );
    const failures: string[] = [];
    for (let i = 0; i < steps.length; i++) {
      const failure = judge(scenario, i, steps[i], o[i], p[i], 'pipelined burst');
      if (failure) failures.push(failure);
    }
    reportDifferences(failures);
    if (scenario.closes) await expectClosed(side, scenario);
  } finally {
    close(side);
  }
}

describe('differential: proxy vs direct redis-server (RESP2)', () => {
  it(`has at least ${MIN_COMMANDS} commands`, () => {
    expect(commandCount()).toBeGreaterThanOrEqual(MIN_COMMANDS);
    expect(new Set(scenarios.map((s) => s.name)).size, 'scenario names are unique').toBe(scenarios.length);
    for (const s of scenarios)
      for (const c of s.commands.map(stepOf)) if (c.known) expect(KNOWN_DIFFERENCES, c.known).toHaveProperty([c.known]);
    for (const s of scenarios) for (const c of s.commands.map(stepOf)) if (c.bug) expect(KNOWN_BUGS, c.bug).toHaveProperty([c.bug]);
  });

  for (const scenario of scenarios) {
    it(`${scenario.name} — one by one`, () => runOneByOne(scenario));
    it(`${scenario.name} — pipelined burst`, () => runBurst(scenario));
  }
});
