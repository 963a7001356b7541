// `respgate proxy`: the proxy alone, in front of a remote REST key-value database. Loaded only when
// this role starts, and it loads no platform, queue or vector module (test/startup.test.ts).
import { createLogger } from '../../logger.js';
import { startMetricsServer } from '../../metrics.js';
import { startProxy } from '../../proxy/server.js';
import { proxyBanner } from '../banner.js';
import type { ProxyRoleFlags } from '../options.js';
import { proxyConfig, upstreamUrlOf } from '../proxy-config.js';
import { waitForSignal } from '../signals.js';

export async function run(flags: ProxyRoleFlags): Promise<void> {
  const url = upstreamUrlOf(flags.upstreamUrl || process.env.UPSTASH_REDIS_REST_URL);
  // No upstream token: pass-through, each client authenticates with its own token (docs/security.md).
  const token = flags.upstreamToken || process.env.UPSTASH_REDIS_REST_TOKEN || '';
  const log = createLogger(flags.logLevel);
  const proxy = await startProxy(proxyConfig(flags, url, token), log);
  const readiness = async () => ({ ready: proxy.upstream.ready, problem: proxy.upstream.problem });
  const metrics = flags.metricsPort !== undefined ? await startMetricsServer(proxy.host, flags.metricsPort, readiness) : undefined;
  const upstreamOk = await proxy.upstreamChecked;
  const signalled = waitForSignal(); // before the banner: a SIGTERM right after it must stop us cleanly
  process.stdout.write(proxyBanner(proxy, url, { given: token !== '', fromEnv: !flags.upstreamToken }, upstreamOk, metrics?.port));
  await signalled;
  await metrics?.stop();
  await proxy.shutdown();
}
