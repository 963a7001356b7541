// Verifies the reply types (src/commands/reply-types.ts) on a real redis-server 7.0.15: every scenario of
// the differential suites runs once in RESP2 and once after HELLO 3, and for every reply of a command
// the proxy sends upstream:
// 1. converting the RESP2 bytes with the command's shape gives the RESP3 bytes Redis sent
//    (resp3-converter.ts; compared through the step's normalizer where the value is nondeterministic);
// 2. the JSON the REST platform makes of the RESP2 reply for /multi-exec (base64 strings) turns back
//    into exactly the RESP2 bytes, and into exactly the converted RESP3 bytes (json-to-resp.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyShape, commandsWithReplyTypes } from '../../src/commands/reply-types.js';
import { allCommandsAndSubcommands, lookupFullName, resolveCommand, routeOf } from '../../src/commands/table.js';
import { replyToJsonObject } from '../../src/platform/kv/json-reply.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';
import type { JsonItem } from '../../src/upstream/kv-client.js';
import { jsonItemToResp } from '../../src/upstream/json-to-resp.js';
import { RawClient } from '../helpers/stack.js';
import { scenarios, type Arg } from './differential-cases.js';
import { resp3Scenarios, type Scenario3, type Step3 } from './resp3-cases.js';
import { comparable3, printable } from './resp3-compare.js';

/** Commands that only a direct redis-server can run (the REST platform refuses or alters them): checked here only. */
const DIRECT_ONLY: Scenario3 = {
  name: 'direct only: ACL users and log, refused ACL file commands, script status replies, huge integers',
  commands: [
    ['ACL', 'SETUSER', 'resp3-carol', 'on', '>pw', '+get'],
    ['AUTH', 'resp3-carol', 'wrong'],
    { args: ['ACL', 'LOG'], compare: 'shape' },
    { args: ['ACL', 'LOG', '1'], compare: 'shape' },
    ['ACL', 'LIST'],
    ['ACL', 'USERS'],
    ['ACL', 'LOAD'],
    ['ACL', 'SAVE'],
    ['ACL', 'DELUSER', 'resp3-carol'],
    ['EVAL', "return {1, {err='inner'}, {ok='fine'}}", '0'],
    ['EVAL', "return redis.status_reply('FINE')", '0'],
    ['SET', 'big', '9223372036854775806'],
    ['INCR', 'big'],
  ],
};

const RESET: Arg[][] = [
  ['FLUSHALL'],
  ['FUNCTION', 'FLUSH'],
  ['SCRIPT', 'FLUSH'],
  ['ACL', 'LOG', 'RESET'],
  ['CONFIG', 'RESETSTAT'],
  ['SLOWLOG', 'RESET'],
  ['ACL', 'DELUSER', 'resp3-alice', 'resp3-bob', 'resp3-carol'],
];
/** Commands after which the connection is not in the protocol the pass is about (or not in command mode). */
const LEAVES_PROTOCOL = new Set(['hello', 'reset', 'quit', 'subscribe', 'psubscribe', 'ssubscribe', 'monitor']);
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

let redis: EmbeddedRedis;

beforeAll(async () => {
  redis = await startEmbeddedRedis({ databases: 1, password: null });
});

afterAll(async () => {
  await redis?.stop();
});

const allScenarios: Scenario3[] = [...scenarios, ...resp3Scenarios, DIRECT_ONLY];

async function runPass(scenario: Scenario3, protocol: 2 | 3): Promise<Buffer[]> {
  const client = await RawClient.connect(redis.endpoint.port);
  try {
    await client.call(...RESET);
    if (protocol === 3) await client.call(['HELLO', '3']);
    const steps = scenario.commands.map((c) => (Array.isArray(c) ? { args: c } : c));
    client.write(encodeCommands(steps.map((s) => s.args)));
    const out: Buffer[] = [];
    for (let i = 0; i < steps.length; i++) {
      try {
        out.push(...(await client.replies(1, 30_000)));
      } catch (err) {
        // QUIT, a protocol error: the server closed, and the rest has no reply. Anything else (a
        // timeout) is a failure, never a silently shorter comparison.
        if (client.closed) break;
        throw err;
      }
    }
    return out;
  } finally {
    client.close();
  }
}

/** The /multi-exec JSON item of a RESP2 reply, as the REST platform writes it (Upstash-Encoding: base64). */
function jsonItem(reply: Buffer): JsonItem {
  return JSON.parse(replyToJsonObject(reply, { base64: true })) as JsonItem;
}

/** Integers beyond 2^53 cannot survive JSON.parse (kv-client decodes /multi-exec with it). */
function hasHugeInteger(reply: Buffer): boolean {
  for (const m of reply.toString('latin1').matchAll(/(?:^|\r\n):(-?\d{16,})\r\n/g)) if (!Number.isSafeInteger(Number(m[1]))) return true;
  return false;
}

/** What a script's reply is after JSON: status replies other than OK nested in `any` become bulk strings. */
function scriptStatusesAsBulk(reply: Buffer): Buffer {
  return Buffer.from(
    reply
      .toString('latin1')
      .replace(
        /(^|\r\n)\+(?!OK\r\n)([^\r\n]*)(?=\r\n)/g,
        (_all, lead: string, text: string) => `${lead}$${Buffer.byteLength(text, 'latin1')}\r\n${text}`,
      ),
    'latin1',
  );
}

interface Checked {
  commands: Set<string>;
  conversions: number;
  jsonChecks: number;
  jsonSkippedHugeIntegers: number;
}

describe('reply types of Redis 7.0.15, checked on redis-server in RESP2 and RESP3', () => {
  const checked: Checked = { commands: new Set(), conversions: 0, jsonChecks: 0, jsonSkippedHugeIntegers: 0 };

  it('every command named in the reply-type table exists', () => {
    for (const name of commandsWithReplyTypes()) expect(lookupFullName(name), name).toBeDefined();
  });

  for (const scenario of allScenarios) {
    it(
      scenario.name,
      async () => {
        const r2 = await runPass(scenario, 2);
        const r3 = await runPass(scenario, 3);
        const failures: string[] = [];
        const steps: Step3[] = scenario.commands.map((c) => (Array.isArray(c) ? { args: c } : (c as Step3)));
        let inMulti = false;
        for (let i = 0; i < steps.length && i < r2.length && i < r3.length; i++) {
          const { args, compare = 'exact', known } = steps[i];
          const spec = resolveCommand(args);
          if (spec && LEAVES_PROTOCOL.has(spec.container ?? spec.name)) break;
          // Commands between MULTI and EXEC answer +QUEUED (transactions.test.ts checks EXEC's array).
          if (spec?.name === 'multi') inMulti = true;
          if (spec?.name === 'exec' || spec?.name === 'discard') inMulti = false;
          if (inMulti) continue;
          if (!spec || !['forward', 'blocking'].includes(routeOf(spec, args))) continue;
          if (known === 'script-resp3-types') continue; // documented: RESP3-only script types cannot be recovered
          const where = `#${i + 1} ${args.map((a) => printable(a, 60)).join(' ')}`;
          const shape = replyShape(spec, args);
          const converted = toResp3(r2[i], shape);
          checked.conversions++;
          checked.commands.add(spec.name);
          let a: string;
          let b: string;
          try {
            a = comparable3(converted, compare);
            b = comparable3(r3[i], compare);
          } catch (err) {
            failures.push(
              `${where}: cannot compare (${(err as Error).message})\n  converted: ${printable(converted)}\n  redis:     ${printable(r3[i])}`,
            );
            continue;
          }
          if (a !== b)
            failures.push(
              `${where}: RESP2→RESP3 conversion differs from redis-server's RESP3 reply (${compare})\n  resp2:     ${printable(r2[i], 600)}\n  converted: ${printable(converted, 600)}\n  redis:     ${printable(r3[i], 600)}`,
            );

          if (hasHugeInteger(r2[i])) {
            checked.jsonSkippedHugeIntegers++;
            continue;
          }
          const item = jsonItem(r2[i]);
          const expected2 = SCRIPT_COMMANDS.has(spec.name) ? scriptStatusesAsBulk(r2[i]) : r2[i];
          const expected3 = SCRIPT_COMMANDS.has(spec.name) ? toResp3(expected2, shape) : converted;
          const from2 = jsonItemToResp(item, shape, 2);
          const from3 = jsonItemToResp(item, shape, 3);
          checked.jsonChecks++;
          if (!from2.equals(expected2))
            failures.push(
              `${where}: /multi-exec JSON → RESP2 differs\n  json:     ${printable(JSON.stringify(item), 600)}\n  got:      ${printable(from2, 600)}\n  expected: ${printable(expected2, 600)}`,
            );
          if (!from3.equals(expected3))
            failures.push(
              `${where}: /multi-exec JSON → RESP3 differs\n  json:     ${printable(JSON.stringify(item), 600)}\n  got:      ${printable(from3, 600)}\n  expected: ${printable(expected3, 600)}`,
            );
        }
        if (failures.length) expect.fail(`${failures.length} difference(s):\n${failures.join('\n')}`);
      },
      60_000,
    );
  }

  it('covered every command the proxy forwards', () => {
    // The oracle is redis-server 7.0.15: the table's commands newer than it (Redis 7.2-8.8) and the module
    // commands (JSON.*, SEARCH.*) cannot run here.
    const version = (v: string) => v.split('.').reduce((n, x) => n * 1000 + Number(x), 0);
    const oracleHas = (s: { module?: string; since: string }) => s.module === undefined && version(s.since) <= version('7.0.15');
    const forwarded = allCommandsAndSubcommands()
      .filter((s) => !s.subcommands && s.route === 'forward' && oracleHas(s))
      .map((s) => s.name);
    const missing = forwarded.filter((n) => !checked.commands.has(n));
    expect(
      missing,
      `forwarded commands no scenario ran (${checked.conversions} replies converted, ${checked.jsonChecks} JSON checks)`,
    ).toEqual([]);
    expect(checked.jsonSkippedHugeIntegers).toBeLessThan(10);
  });
});
