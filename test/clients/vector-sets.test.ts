// Programs written for Redis 8 vector sets run unchanged against the dev stack's vector side port
// (`respgate dev`, as a user starts it): test/clients/vector-sets/program.mjs with node-redis' own
// vector-set commands (vAdd with REDUCE and Q8, vSim with arithmetic FILTERs, vEmbRaw, vLinks, vInfo) in
// RESP2 and RESP3, and program.py with Debian's redis-py 4.3.4 (execute_command: its vector-set API
// came in redis-py 6). Each prints one line per call; the lines must be those the same program printed
// against a real Redis 8.8.0 (redis8-node.txt, redis8-python.txt, recorded with
// `node program.mjs <port> 2` and `/usr/bin/python3 program.py <port>` against
// /tmp/redis8/src/redis-server --port <port> on 2026-11-27).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/cleanup.js';
import { startRespgate, stopRespgate } from '../helpers/respgate-cli.js';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vector-sets');
const expected = (file: string) => readFileSync(path.join(here, file), 'utf8');

let child: ChildProcess;
let port: number;

beforeAll(async () => {
  const found = spawnSync('/usr/bin/python3', ['-c', 'import redis'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`redis-py is not installed (python3-redis): ${found.stderr}`);
  // The programs reduce 8 dimensions to 4: the dev stack gets an index of 4 dimensions.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-vsets-'));
  const config = path.join(dir, 'vectors.json');
  writeFileSync(config, JSON.stringify({ indexes: [{ name: 'four', type: 'DENSE', dimension: 4, similarityFunction: 'COSINE' }] }));
  const started = await startRespgate(
    ['dev', '--port', '0', '--http-port', '0', '--queue-port', 'off', '--vector-config', config, '--vector-index', 'four'],
    /Press Ctrl\+C/,
    { RESPGATE_VECTOR_PORT: '0' },
  );
  child = started.child;
  port = Number(/Vector side port \(VSIM…\)\s+redis:\/\/127\.0\.0\.1:(\d+)/.exec(started.output)![1]);
});
afterAll(async () => {
  if (child) await stopRespgate(child);
});

describe('programs for Redis 8 vector sets against the dev stack', () => {
  it.each([2, 3])('node-redis, RESP%i: the same output as against Redis 8.8.0', async (resp) => {
    const run = await runProcess(process.execPath, [path.join(here, 'program.mjs'), String(port), String(resp)], {
      env: process.env,
      cwd: here,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(expected('redis8-node.txt'));
  });

  it('redis-py (execute_command, RESP2): the same output as against Redis 8.8.0', async () => {
    const run = await runProcess('/usr/bin/python3', [path.join(here, 'program.py'), String(port)], { env: process.env, cwd: here });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(expected('redis8-python.txt'));
  });
});
