// In-process tests of what a transaction run as one upstream script does with its queued scripts
// (transaction-scripts.ts) and of the script bodies the proxy remembers (script-bodies.ts). The
// differential tests against redis-server are test/proxy/transaction-scripts.test.ts.
import { describe, expect, it } from 'vitest';
import { ScriptBodies, sha1hex } from '../../src/upstream/script-bodies.js';
import {
  NOSCRIPT,
  parseLongLong,
  planScriptSlots,
  resolveScriptSlots,
  shebangFlags,
  type ScriptPlan,
} from '../../src/upstream/transaction-scripts.js';

const b = (...args: string[]): Buffer[] => args.map((a) => Buffer.from(a));
const text = (command: Buffer[]): string[] => command.map((a) => a.toString());

function plan(commands: Buffer[][], bodies = new ScriptBodies()): ScriptPlan {
  const planned = planScriptSlots(commands, bodies);
  if ('error' in planned) throw new Error(planned.error);
  return planned;
}

describe('ScriptBodies', () => {
  it('learns EVAL, EVAL_RO and SCRIPT LOAD bodies in any case, by lowercase SHA-1, and nothing else', () => {
    const bodies = new ScriptBodies();
    bodies.learn(b('eval', 'return 1', '0'));
    bodies.learn(b('EVAL_RO', 'return 2', '0'));
    bodies.learn(b('Script', 'LOAD', 'return 3'));
    bodies.learn(b('EVALSHA', sha1hex('return 4'), '0'));
    bodies.learn(b('SET', 'return 5', 'x'));
    bodies.learn(b('SCRIPT', 'EXISTS', 'return 6'));
    for (const known of ['return 1', 'return 2', 'return 3']) expect(bodies.get(sha1hex(known))?.toString()).toBe(known);
    expect(bodies.get(sha1hex('return 3').toUpperCase())?.toString()).toBe('return 3');
    for (const unknown of ['return 4', 'return 5', 'return 6']) expect(bodies.get(sha1hex(unknown))).toBeUndefined();
  });

  it('keeps a copy (the argument may be a view into a read buffer that is reused)', () => {
    const bodies = new ScriptBodies();
    const read = Buffer.from('return 1');
    bodies.remember(read);
    read.fill(0x20);
    expect(bodies.get(sha1hex('return 1'))?.toString()).toBe('return 1');
  });

  it('is bounded: the least recently used bodies go first', () => {
    const bodies = new ScriptBodies();
    bodies.remember(Buffer.from('return "first"'));
    for (let i = 0; i < 2000; i++) {
      bodies.remember(Buffer.from(`return ${i}`));
      if (i === 1000) bodies.remember(Buffer.from('return "first"')); // used again: now recent
    }
    expect(bodies.get(sha1hex('return "first"'))).toBeDefined();
    expect(bodies.get(sha1hex('return 0'))).toBeUndefined();
    expect(bodies.get(sha1hex('return 1999'))).toBeDefined();
  });
});

describe('planScriptSlots', () => {
  it('plain commands stay commands; EVAL bodies are loaded first, EVALSHA scripts asked about (SCRIPT EXISTS before the loads)', () => {
    const bodies = new ScriptBodies();
    const p = plan(
      [b('SET', 'k', 'v'), b('EVALSHA', sha1hex('return 1').toUpperCase(), '1', 'k', 'a'), b('eval', 'return 1', '0')],
      bodies,
    );
    expect(p.slots[0]).toEqual({ kind: 'command', args: b('SET', 'k', 'v') });
    expect(p.slots[1]).toMatchObject({ kind: 'evalsha', sha: sha1hex('return 1'), numkeys: 1, loadedBefore: false, body: undefined });
    expect(p.slots[2]).toMatchObject({ kind: 'script', sha: sha1hex('return 1'), numkeys: 0, rest: [] });
    expect(p.preflight.map(text)).toEqual([
      ['SCRIPT', 'EXISTS', sha1hex('return 1')],
      ['SCRIPT', 'LOAD', 'return 1'],
    ]);
    expect(bodies.get(sha1hex('return 1'))?.toString()).toBe('return 1');
  });

  it('no scripts: no preflight', () => {
    expect(plan([b('GET', 'k'), b('LPOP', 'l')]).preflight).toEqual([]);
  });

  it('numkeys is checked as Redis checks it: integer first, then too many, then negative', () => {
    const errors = ['x', '01', '+1', '-0', ' 1', '9223372036854775808', '2', '9223372036854775807', '-1', '-9223372036854775808'].map(
      (n) => {
        const slot = plan([b('EVAL', 'return 1', n, 'a')]).slots[0];
        return slot.kind === 'error' ? slot.message : slot.kind;
      },
    );
    const notInteger = 'ERR value is not an integer or out of range';
    const tooMany = "ERR Number of keys can't be greater than number of args";
    const negative = "ERR Number of keys can't be negative";
    expect(errors).toEqual([notInteger, notInteger, notInteger, notInteger, notInteger, notInteger, tooMany, tooMany, negative, negative]);
    expect(parseLongLong(Buffer.from('-9223372036854775809'))).toBeUndefined();
    expect(parseLongLong(Buffer.from('0'))).toBe(0n);
  });

  it('an EVALSHA whose SHA-1 is not 40 characters answers NOSCRIPT without asking', () => {
    const p = plan([b('EVALSHA', 'abc', '0')]);
    expect(p.slots[0]).toEqual({ kind: 'error', message: NOSCRIPT });
    expect(p.preflight).toEqual([]);
  });

  it('SCRIPT, FUNCTION and the other commands a script may not call refuse the whole transaction', () => {
    for (const [command, name] of [
      [b('FUNCTION', 'DELETE', 'lib'), 'function|delete'],
      [b('SCRIPT', 'LOAD', 'return 1'), 'script|load'],
      [b('BLPOP', 'l', '0'), 'blpop'],
    ] as const) {
      const planned = planScriptSlots([b('SET', 'k', 'v'), command], new ScriptBodies());
      expect(planned).toEqual({
        error: `ERR command 2 of the transaction ('${name}') cannot run in it: a transaction with watched keys or binary arguments runs as one upstream script, and Redis does not let a script call '${name}' (the transaction was not sent)`,
      });
    }
  });
});

describe('resolveScriptSlots', () => {
  const ONE = 'return 1';
  const bodiesKnowing = (...known: string[]): ScriptBodies => {
    const bodies = new ScriptBodies();
    for (const k of known) bodies.remember(Buffer.from(k));
    return bodies;
  };

  it('a script the upstream has and the proxy knows runs from its body', () => {
    const p = plan([b('EVALSHA', sha1hex(ONE), '1', 'k', 'a')], bodiesKnowing(ONE));
    expect(resolveScriptSlots(p, [Buffer.from('*1\r\n:1\r\n')])).toEqual([
      { kind: 'script', sha: sha1hex(ONE), body: Buffer.from(ONE), numkeys: 1, rest: b('k', 'a'), readOnly: false },
    ]);
  });

  it('a script the upstream lacks answers NOSCRIPT, even when the proxy knows its body', () => {
    const p = plan([b('EVALSHA', sha1hex(ONE), '0')], bodiesKnowing(ONE));
    expect(resolveScriptSlots(p, [Buffer.from('*1\r\n:0\r\n')])).toEqual([{ kind: 'error', message: NOSCRIPT }]);
  });

  it('an EVAL earlier in the transaction loads the script for a later EVALSHA, not for an earlier one', () => {
    const p = plan([b('EVALSHA', sha1hex(ONE), '0'), b('EVAL', ONE, '0'), b('EVALSHA', sha1hex(ONE), '0')]);
    const slots = resolveScriptSlots(p, [Buffer.from('*1\r\n:0\r\n'), Buffer.from(`$40\r\n${sha1hex(ONE)}\r\n`)]);
    expect(Array.isArray(slots) && slots.map((s) => s.kind)).toEqual(['error', 'script', 'script']);
  });

  it('a script the upstream has but the proxy never saw refuses the whole transaction', () => {
    const p = plan([b('EVALSHA', sha1hex('return "elsewhere"'), '0')]);
    const resolved = resolveScriptSlots(p, [Buffer.from('*1\r\n:1\r\n')]);
    expect('error' in resolved && resolved.error).toMatch(
      /^ERR script [0-9a-f]{40} is loaded in the upstream, but respgate has not seen its body/,
    );
  });

  it('a failed or malformed SCRIPT EXISTS refuses the transaction with the reason', () => {
    const p = plan([b('EVALSHA', sha1hex(ONE), '0'), b('EVALSHA', sha1hex('x'), '0')], bodiesKnowing(ONE));
    expect(resolveScriptSlots(p, [Buffer.from('-NOPERM this user has no permissions to run the script|exists command\r\n')])).toEqual({
      error:
        'ERR respgate could not ask the upstream which scripts it has (SCRIPT EXISTS: NOPERM this user has no permissions to run the script|exists command)',
    });
    for (const bad of ['*1\r\n:1\r\n', '*2\r\n:1\r\n:2\r\n', '$1\r\nx\r\n', ''])
      expect(resolveScriptSlots(p, [Buffer.from(bad)])).toEqual({ error: 'ERR upstream sent a malformed answer to SCRIPT EXISTS' });
  });

  describe('FCALL', () => {
    const CODE = "#!lua name=lib\nredis.register_function('Bump', function(k) return 1 end)";
    const LIST = (flags: string) =>
      Buffer.from(
        `*1\r\n*6\r\n$12\r\nlibrary_name\r\n$3\r\nlib\r\n$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$4\r\nBump\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n${flags}$12\r\nlibrary_code\r\n$${CODE.length}\r\n${CODE}\r\n`,
      );

    it('asks FUNCTION LIST WITHCODE (after SCRIPT EXISTS) and runs the function from its library, found in any case', () => {
      const p = plan([b('EVALSHA', sha1hex(ONE), '0'), b('fcall', 'bump', '1', 'k', 'a')], bodiesKnowing(ONE));
      expect(p.preflight.map(text)).toEqual([
        ['SCRIPT', 'EXISTS', sha1hex(ONE)],
        ['FUNCTION', 'LIST', 'WITHCODE'],
      ]);
      const slots = resolveScriptSlots(p, [Buffer.from('*1\r\n:1\r\n'), LIST('*0\r\n')]);
      expect(Array.isArray(slots) && slots[1]).toEqual({
        kind: 'function',
        name: 'Bump',
        code: Buffer.from(CODE),
        numkeys: 1,
        rest: b('k', 'a'),
        readOnly: false,
      });
    });

    it('Redis’ errors in their slot, in its order: the function, numkeys, then FCALL_RO of a function that may write', () => {
      const messages = (list: Buffer, ...commands: Buffer[][]) => {
        const slots = resolveScriptSlots(plan(commands), [list]);
        return Array.isArray(slots) ? slots.map((s) => (s.kind === 'error' ? s.message : s.kind)) : slots;
      };
      expect(
        messages(
          LIST('*0\r\n'),
          b('FCALL', 'nosuch', 'x'),
          b('FCALL', 'bump', 'x'),
          b('FCALL', 'bump', '2', 'k'),
          b('FCALL', 'bump', '-1'),
          b('FCALL_RO', 'bump', '0'),
        ),
      ).toEqual([
        'ERR Function not found',
        'ERR Bad number of keys provided',
        "ERR Number of keys can't be greater than number of args",
        "ERR Number of keys can't be negative",
        'ERR Can not execute a script with write flag using *_ro command.',
      ]);
      expect(messages(LIST('*1\r\n+no-writes\r\n'), b('FCALL_RO', 'bump', '0'))).toEqual(['function']);
    });

    it('a failed or malformed FUNCTION LIST refuses the transaction', () => {
      const p = plan([b('FCALL', 'bump', '0')]);
      expect(resolveScriptSlots(p, [Buffer.from('-NOPERM no\r\n')])).toEqual({
        error: "ERR respgate could not read the upstream's functions (FUNCTION LIST: NOPERM no)",
      });
      expect(resolveScriptSlots(p, [Buffer.from(':1\r\n')])).toEqual({ error: 'ERR upstream sent a malformed answer to FUNCTION LIST' });
    });
  });
});

describe('shebangFlags (Redis 7.0 evalExtractShebangFlags)', () => {
  it('no shebang, flags, and each error', () => {
    expect(shebangFlags(Buffer.from('return 1'))).toBeUndefined();
    expect(shebangFlags(Buffer.from('#!lua\nreturn 1'))).toEqual([]);
    expect(shebangFlags(Buffer.from('#!lua flags=no-writes,allow-oom'))).toEqual(['no-writes', 'allow-oom']);
    expect(shebangFlags(Buffer.from('#!luajit\n'))).toEqual({ error: 'ERR Unexpected engine in script shebang: #!luajit' });
    expect(shebangFlags(Buffer.from('#!lua flags=nope\n'))).toEqual({ error: 'ERR Unexpected flag in script shebang: nope' });
    expect(shebangFlags(Buffer.from('#!lua name=x\n'))).toEqual({ error: 'ERR Unknown lua shebang option: name=x' });
  });

  it('EVAL_RO of a script whose shebang lacks no-writes answers Redis’ error; no-writes makes EVAL read-only', () => {
    const [ro, noWrites] = plan([b('EVAL_RO', '#!lua\nreturn 1', '0'), b('EVAL', '#!lua flags=no-writes\nreturn 1', '0')]).slots;
    expect(ro).toEqual({ kind: 'error', message: 'ERR Can not execute a script with write flag using *_ro command.' });
    expect(noWrites).toMatchObject({ kind: 'script', readOnly: true });
  });
});
