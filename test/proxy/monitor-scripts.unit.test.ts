// MONITOR's script lines (proxy/monitor-scripts.ts): which upstream `lua` lines are shown, with which
// database, and how the proxy's later lines wait for them.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ScriptLines, scriptKey } from '../../src/proxy/monitor-scripts.js';

let out: string[];
let lines: ScriptLines;
const line = (text: string) => Buffer.from(`+T ${text}\r\n`, 'latin1');
const evalKey = (body: string, ...rest: string[]) => scriptKey('eval', ['"EVAL"', `"${body}"`, ...rest.map((r) => `"${r}"`)]);

beforeEach(() => {
  vi.useFakeTimers();
  out = [];
  lines = new ScriptLines(
    (l) => out.push(l.toString('latin1').replace(/\r\n$/, '')),
    () => 'T',
  );
});

afterEach(() => {
  lines.clear();
  vi.useRealTimers();
});

describe('ScriptLines', () => {
  it("shows a client's script's lua lines with the client's database, before the lines that came after the script", () => {
    lines.show(line('[3 c:1] "EVAL" "b" "1" "k"'), 3, evalKey('b', '1', 'k'));
    lines.show(line('[3 c:1] "PING"'), 3);
    expect(out).toEqual(['+T [3 c:1] "EVAL" "b" "1" "k"']);
    lines.upstream('1.000001 [0 127.0.0.1:9] "eval" "b" "1" "k"');
    lines.upstream('1.000002 [0 lua] "get" "k"');
    lines.upstream('1.000003 [0 127.0.0.1:9] "GET" "z"');
    expect(out).toEqual(['+T [3 c:1] "EVAL" "b" "1" "k"', '+T [3 lua] "get" "k"', '+T [3 c:1] "PING"']);
  });

  it("drops the lua lines of scripts no client of the proxy sent (its own WATCH and transaction scripts, other clients')", () => {
    lines.show(line('[0 c:1] "GET" "a"'), 0);
    lines.upstream('1.0 [0 127.0.0.1:9] "EVAL_RO" "fingerprint" "1" "k"');
    lines.upstream('1.0 [0 lua] "DUMP" "k"');
    lines.upstream('1.0 [0 127.0.0.1:9] "eval" "other" "0"');
    lines.upstream('1.0 [0 lua] "set" "x" "1"');
    expect(out).toEqual(['+T [0 c:1] "GET" "a"']);
  });

  it('scripts run upstream in another order than shown: each gets its own lua lines, in the order shown', () => {
    lines.show(line('[0 c:1] "EVAL" "one" "0"'), 0, evalKey('one', '0'));
    lines.show(line('[0 c:2] "EVAL" "two" "0"'), 0, evalKey('two', '0'));
    lines.upstream('1.0 [0 x:9] "EVAL" "two" "0"');
    lines.upstream('1.0 [0 lua] "incr" "two"');
    lines.upstream('1.0 [0 x:9] "EVAL" "one" "0"');
    lines.upstream('1.0 [0 lua] "incr" "one"');
    vi.advanceTimersByTime(20);
    expect(out).toEqual([
      '+T [0 c:1] "EVAL" "one" "0"',
      '+T [0 lua] "incr" "one"',
      '+T [0 c:2] "EVAL" "two" "0"',
      '+T [0 lua] "incr" "two"',
    ]);
  });

  it('a script whose upstream line never comes holds the later lines half a second at most', () => {
    lines.show(line('[0 c:1] "EVAL" "lost" "0"'), 0, evalKey('lost', '0'));
    lines.show(line('[0 c:1] "PING"'), 0);
    vi.advanceTimersByTime(499);
    expect(out).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(out).toEqual(['+T [0 c:1] "EVAL" "lost" "0"', '+T [0 c:1] "PING"']);
    // Its line coming late shows nothing more.
    lines.upstream('1.0 [0 x:9] "EVAL" "lost" "0"');
    lines.upstream('1.0 [0 lua] "get" "k"');
    expect(out).toHaveLength(2);
  });

  it('a script given up while behind another keeps nothing of its late upstream line', () => {
    lines.show(line('[0 c:1] "EVAL" "first" "0"'), 0, evalKey('first', '0'));
    vi.advanceTimersByTime(5);
    lines.show(line('[0 c:2] "EVAL" "second" "0"'), 0, evalKey('second', '0'));
    vi.advanceTimersByTime(493);
    lines.upstream('1.0 [0 x:9] "EVAL" "first" "0"'); // t=498: the first's lua lines until t=508
    vi.advanceTimersByTime(7); // t=505: the second is given up, still behind the first
    lines.upstream('1.0 [0 x:9] "EVAL" "second" "0"');
    lines.upstream('1.0 [0 lua] "get" "late"');
    vi.advanceTimersByTime(10);
    lines.show(line('[0 c:1] "PING"'), 0);
    expect(out).toEqual(['+T [0 c:1] "EVAL" "first" "0"', '+T [0 c:2] "EVAL" "second" "0"', '+T [0 c:1] "PING"']);
  });

  it('lua lines end 10 ms after their script, when no other upstream line ends them', () => {
    lines.show(line('[0 c:1] "EVAL" "b" "0"'), 0, evalKey('b', '0'));
    lines.show(line('[0 c:1] "PING"'), 0);
    lines.upstream('1.0 [0 x:9] "eval" "b" "0"');
    lines.upstream('1.0 [0 lua] "get" "k"');
    vi.advanceTimersByTime(10);
    lines.upstream('1.0 [0 lua] "get" "late"');
    expect(out).toEqual(['+T [0 c:1] "EVAL" "b" "0"', '+T [0 lua] "get" "k"', '+T [0 c:1] "PING"']);
  });

  it('ignores events that are not monitor lines', () => {
    lines.upstream('OK');
    lines.upstream('garbage [');
    lines.show(line('[0 c:1] "PING"'), 0);
    expect(out).toEqual(['+T [0 c:1] "PING"']);
  });
});
