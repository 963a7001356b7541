/**
 * Records Redis 8's replies to the vector-set cases of test/fixtures/vector-redis8/cases.ts into
 * test/fixtures/vector-redis8/replies.json, which test/sideports/vector-redis8-diff.test.ts replays
 * against the vector side port.
 *
 *   npx tsx scripts/record-vector-redis8.ts --redis-server /path/to/redis-8/src/redis-server [--out FILE]
 *
 * It starts the given binary (vector sets built in, Redis 8.0 or later) on a free port without
 * persistence, runs every scenario in RESP2 and then in RESP3 (FLUSHALL before each), and stops it.
 * It builds nothing: bring your own Redis 8 binary.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommand, SCENARIOS } from '../test/fixtures/vector-redis8/cases.js';
import { RawConnection, scenarioKeys, type Fixture } from '../test/fixtures/vector-redis8/diff.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function connectWhenUp(port: number, protocol: 2 | 3): Promise<RawConnection> {
  for (let i = 0; ; i++) {
    try {
      return await RawConnection.open(port, protocol);
    } catch (e) {
      if (i > 50) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function record(port: number, protocol: 2 | 3): Promise<string[][]> {
  const c = await connectWhenUp(port, protocol);
  const out: string[][] = [];
  try {
    for (const s of SCENARIOS) {
      await c.send([Buffer.from('FLUSHALL')]);
      const replies: string[] = [];
      for (const cs of s.cases) replies.push((await c.send(parseCommand(cs.cmd))).toString('latin1'));
      out.push(replies);
    }
  } finally {
    c.close();
  }
  return out;
}

async function main(): Promise<void> {
  const binary = option('--redis-server');
  if (!binary) throw new Error('usage: npx tsx scripts/record-vector-redis8.ts --redis-server <redis 8 redis-server> [--out FILE]');
  const out = option('--out') ?? path.join(here, '../test/fixtures/vector-redis8/replies.json');
  const port = await freePort();
  const server = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  try {
    const probe = await connectWhenUp(port, 2);
    const info = (await probe.send([Buffer.from('INFO'), Buffer.from('server')])).toString('latin1');
    probe.close();
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    const [r2, r3] = [await record(port, 2), await record(port, 3)];
    const fixture: Fixture = {
      source: {
        server: `Redis ${version} (${path.basename(binary)}), vector sets module built in`,
        recorded: new Date().toISOString(),
        command: `npx tsx scripts/record-vector-redis8.ts --redis-server ${binary}`,
        note: 'FLUSHALL before each scenario; every scenario run first in RESP2, then in RESP3 (HELLO 3) on one connection',
      },
      scenarios: SCENARIOS.map((s, i) => {
        const commands = s.cases.map((c) => parseCommand(c.cmd));
        return {
          name: s.name,
          keys: scenarioKeys(commands),
          cases: s.cases.map((c, j) => ({
            args: commands[j].map((a) => a.toString('latin1')),
            ...(c.mode && c.mode !== 'exact' ? { mode: c.mode } : {}),
            ...(c.loose ? { loose: c.loose } : {}),
            ...(c.why ? { why: c.why } : {}),
            resp2: r2[i][j],
            resp3: r3[i][j],
          })),
        };
      }),
    };
    writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
    const n = fixture.scenarios.reduce((k, s) => k + s.cases.length, 0);
    console.log(`recorded ${n} cases × 2 protocols from Redis ${version} into ${out}`);
  } finally {
    server.kill('SIGTERM');
  }
}

await main();
