// `respgate proxy`: the proxy alone, in front of a remote REST key-value database. Loaded only when
// this role starts, and it loads no platform, queue or vector module (test/startup.test.ts).
import { ProxyConsole } from '../../console/proxy-console.js';
import { createLogger } from '../../logger.js';
import { startMetricsServer } from '../../metrics.js';
import { startProxy } from '../../proxy/server.js';
import { proxyBanner } from '../banner.js';
import type { ProxyRoleFlags } from '../options.js';
import { databasesOf, proxyConfig, upstreamUrlOf } from '../proxy-config.js';
import { waitForSignal } from '../signals.js';
import { releaseAfterLoad, releasePolicy } from '../heap-release.js';
import { holdYoungGeneration, youngGenerationPolicy } from '../young-generation.js';

export async function run(flags: ProxyRoleFlags): Promise<void> {
  const url = upstreamUrlOf(flags.upstreamUrl || process.env.UPSTASH_REDIS_REST_URL);
  // No upstream token: pass-through, each client authenticates with its own token (docs/security.md).
  const token = flags.upstreamToken || process.env.UPSTASH_REDIS_REST_TOKEN || '';
  const log = createLogger(flags.logLevel);
  const semiSpaceMiB = youngGenerationPolicy();
  const releaseMs = releasePolicy();
  const config = { ...proxyConfig(flags, url, token), databases: databasesOf(flags.database) };
  const proxy = await startProxy(config, log);
  const readiness = async () => ({ ready: proxy.upstream.ready, problem: proxy.upstream.problem });
  // The Proxy page of the web console, on the operations port, behind the proxy's own AUTH (docs/console.md).
  const webConsole = new ProxyConsole({
    host: proxy.host,
    port: proxy.port,
    authRequired: config.requirepass !== undefined || token === '' || config.aclUsers === true,
    requirepass: config.requirepass !== undefined,
    aclUsers: config.aclUsers === true,
    upstream: { url, token },
  });
  const metrics =
    flags.metricsPort !== undefined
      ? await startMetricsServer(proxy.host, flags.metricsPort, readiness, {
          route: webConsole.handle.bind(webConsole),
          paths: '/console/',
        })
      : undefined;
  const upstreamOk = await proxy.upstreamChecked;
  // Serving from now on: V8's young generation grows no further than this (young-generation.ts).
  if (semiSpaceMiB !== undefined) holdYoungGeneration(semiSpaceMiB);
  // And gives back what a busy spell left once it is over (heap-release.ts).
  const released = releaseMs !== undefined ? releaseAfterLoad(releaseMs) : undefined;
  const signalled = waitForSignal(); // before the banner: a SIGTERM right after it must stop us cleanly
  process.stdout.write(proxyBanner(proxy, url, { given: token !== '', fromEnv: !flags.upstreamToken }, upstreamOk, metrics?.port));
  if (metrics)
    process.stdout.write(`  console: http://${proxy.host}:${metrics.port}/console/ (log in as a client of the proxy would AUTH)\n`);
  await signalled;
  await metrics?.stop();
  webConsole.close();
  released?.stop();
  await proxy.shutdown();
}
