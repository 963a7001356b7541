// The vector benchmarks' platform: `respgate platform` as its own process (so its CPU and event loop
// are not the benchmark's), with only the vector indexes a benchmark defines, on a free port.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { startUntilReady } from './process-stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Starts the platform with `indexes` (a --vector-config list) and resolves once it says it is ready. */
export async function startPlatformProcess(
  token: string,
  indexes: Record<string, unknown>[],
  extraArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'respgate-bench-'));
  const config = path.join(dir, 'indexes.json');
  writeFileSync(config, JSON.stringify({ defaults: false, indexes }));
  const port = await freePort();
  const args = ['platform', '--http-port', String(port), '--token', token, '--vector-config', config, '--log-level', 'warn', ...extraArgs];
  const { child } = await startUntilReady(process.execPath, [path.join(root, 'bin/respgate'), ...args], /ready/);
  return { child, url: `http://127.0.0.1:${port}` };
}
