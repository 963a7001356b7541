// Chaos run at scale (the suite runs 400 writes: test/security/faults.test.ts): SETs from many
// connections through the proxy, while the fault server in front of the real platform answers each
// upstream request with a random fault (dropped before or after the command ran, 500, 429, reset
// mid-response, truncated body) or forwards it. Afterwards every key whose SET got +OK must hold its
// value upstream, and every SET answered "the command was not executed" must have done nothing.
//
// --runs N repeats the run (each with its own platform and proxy) and prints median and range.
//
//   npx tsx scripts/chaos-writes.ts --runs 3        # 20 000 writes, three times
//   npx tsx scripts/chaos-writes.ts --writes 2000
import { encodeCommands } from '../src/resp/request-writer.js';
import { startTestPlatform } from '../test/helpers/platform.js';
import { RawClient, startTestProxy } from '../test/helpers/stack.js';
import { resetMidBody, startFaultServer, truncatedBody, type FaultAction } from '../test/proxy/faults-server.js';
import { repeatRuns, runsArgument, type Figures } from './runs.js';

const i = process.argv.indexOf('--writes');
const WRITES = i > 0 ? Number(process.argv[i + 1]) : 20_000;
const CONNECTIONS = 20;
/** Commands per SET round of a connection, and the most per upstream call (so faults hit small calls). */
const PER_CALL = 10;

/** One run: its own platform, fault server and proxy; the figures of the check afterwards. */
async function chaosOnce(): Promise<Figures> {
  const platform = await startTestPlatform();
  const fault = await startFaultServer(platform.url);
  const proxy = await startTestProxy({ url: fault.url, token: platform.token }, { upstreamTimeoutMs: 2000, maxBatch: PER_CALL });
  const actions: FaultAction[] = [
    { kind: 'forward' },
    { kind: 'forward' },
    { kind: 'forward' },
    { kind: 'forward' },
    { kind: 'forward-then-drop' },
    { kind: 'drop' },
    { kind: 'answer', status: 500, body: '{"error":"ERR chaos"}' },
    { kind: 'answer', status: 503, contentType: 'text/plain', body: '' },
    { kind: 'answer', status: 429, body: '{"error":"ERR too many requests"}' },
    { kind: 'custom', forwardFirst: true, respond: resetMidBody },
    { kind: 'custom', forwardFirst: true, respond: truncatedBody },
  ];
  fault.decide = () => actions[Math.floor(Math.random() * actions.length)];
  const outcomes = new Map<string, { value: string; reply: string }>();
  const started = Date.now();
  try {
    const run = Date.now().toString(36);
    const per = Math.ceil(WRITES / CONNECTIONS / PER_CALL);
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, ci) => {
        const c = await RawClient.connect(proxy.port);
        for (let round = 0; round < per; round++) {
          const cmds = Array.from({ length: PER_CALL }, (_, k) => [
            'SET',
            `chaos:${run}:${ci}:${round}:${k}`,
            `v${ci}.${round}.${k}.${Math.random()}`,
          ]);
          c.write(encodeCommands(cmds));
          const replies = (await c.replies(cmds.length, 30_000)).map((r) => r.toString('latin1'));
          cmds.forEach((cmd, k) => outcomes.set(cmd[1], { value: cmd[2], reply: replies[k] }));
        }
        c.close();
      }),
    );
    fault.decide = () => ({ kind: 'forward' });
    const keys = [...outcomes.keys()];
    let acknowledged = 0,
      notExecuted = 0,
      unknown = 0,
      lost = 0,
      phantom = 0;
    for (let from = 0; from < keys.length; from += 1000) {
      const chunk = keys.slice(from, from + 1000);
      const res = await fetch(`${platform.url}/pipeline`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platform.token}` },
        body: JSON.stringify([['MGET', ...chunk]]),
      });
      const [{ result }] = (await res.json()) as [{ result: Array<string | null> }];
      chunk.forEach((k, j) => {
        const o = outcomes.get(k)!;
        if (o.reply === '+OK\r\n') {
          acknowledged++;
          if (result[j] !== o.value) lost++;
        } else if (o.reply.includes('was not executed')) {
          notExecuted++;
          if (result[j] !== null) phantom++;
        } else unknown++;
      });
    }
    if (lost > 0 || phantom > 0) process.exitCode = 1;
    return {
      SETs: outcomes.size,
      'upstream requests': fault.seen.length,
      'acknowledged (+OK), checked upstream': acknowledged,
      lost,
      '"not executed"': notExecuted,
      '"not executed" that ran anyway': phantom,
      '"outcome unknown"': unknown,
      'duration (ms)': Date.now() - started,
    };
  } finally {
    await proxy.stop();
    await fault.stop();
    await platform.stop();
  }
}

await repeatRuns(`chaos: ${WRITES} SETs from ${CONNECTIONS} connections under random upstream faults`, runsArgument(), () => chaosOnce());
