// What the two side-port roles (respgate vector, respgate queue) share: the upstream URL check, the
// operations port, the ready banner, and serving until a signal.
import { ConfigError } from '../../config.js';
import { startMetricsServer } from '../../metrics.js';
import type { RunningSideport } from '../../sideports/server.js';
import { sideportHelpLines, VERSION } from '../banner.js';
import type { SideportFlags } from '../options.js';
import { waitForSignal } from '../signals.js';

/** An http(s) REST URL from `flag` or its fallback environment variables, without a trailing slash. */
export function restUrl(value: string | undefined, flag: string, fallbackEnv: string): string {
  if (!value) throw new ConfigError(`no ${flag}: give ${flag} (or ${fallbackEnv}), or run \`respgate dev\` for a local platform`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${flag} is not a URL: '${value}' (expected https://<host>…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${flag} must be an http:// or https:// REST URL, got '${url.protocol}//…'`);
  return value.replace(/\/+$/, '');
}

/** The side port's --metrics-port server (off when the flag is absent) and its banner line. */
async function sideportOperations(s: RunningSideport, f: SideportFlags): Promise<{ line: string; stop(): Promise<void> }> {
  if (f.metricsPort === undefined) return { line: '', stop: async () => {} };
  const metrics = await startMetricsServer(s.host, f.metricsPort, s.readiness);
  return { line: `  metrics: http://${s.host}:${metrics.port}/metrics   health: /healthz, /readyz\n`, stop: () => metrics.stop() };
}

/** The help lines under a role's one-line banner (indented like the proxy role's). */
function roleHelpLines(s: RunningSideport, f: SideportFlags): string {
  return sideportHelpLines(s, Boolean(f.requirepass || f.requirepassFile))
    .map((line) => line.slice(2))
    .join('\n');
}

/** A started side-port role: its operations port, the ready banner, then serving until a signal. */
export async function serveSideportRole(s: RunningSideport, f: SideportFlags, ready: string): Promise<void> {
  const ops = await startOrStop(s, () => sideportOperations(s, f));
  const signalled = waitForSignal(); // before the banner: a SIGTERM right after it must stop us cleanly
  const tls = s.tlsPort !== undefined ? ` (TLS: rediss://${s.host}:${s.tlsPort})` : '';
  process.stdout.write(`respgate ${VERSION}: ${ready}${tls}\n${roleHelpLines(s, f)}\n${ops.line}`);
  await signalled;
  await ops.stop();
  await s.shutdown();
}

/** Runs `next`; when it fails (a busy metrics port), the side port stops so the process can exit. */
async function startOrStop<T>(s: RunningSideport, next: () => Promise<T>): Promise<T> {
  try {
    return await next();
  } catch (err) {
    await s.stop();
    throw err;
  }
}
