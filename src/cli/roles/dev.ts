// `respgate dev` (the default role): embedded redis-servers, the local platform, the proxy and the
// side ports in front of it, in one process.
import { ConfigError, generateToken, type PlatformConfig } from '../../config.js';
import { createLogger, type Logger } from '../../logger.js';
import { startPlatform, type RunningPlatform } from '../../platform/platform.js';
import { DEFAULT_INDEXES } from '../../platform/vector/config.js';
import { platformDatabases } from '../../proxy/databases.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { startQueueSideport } from '../../sideports/queue-port.js';
import type { RunningSideport } from '../../sideports/server.js';
import { startVectorSideport } from '../../sideports/vector-port.js';
import { sideportBanner, stackBanner } from '../banner.js';
import { devVectorIndexes } from './dev-vector.js';
import { listenerSettings } from '../listener-settings.js';
import { FLAG, type DevFlags } from '../options.js';
import { platformConfig } from '../platform-config.js';
import { proxyConfig, requirepassOf } from '../proxy-config.js';
import { waitForSignal } from '../signals.js';

export async function run(flags: DevFlags): Promise<void> {
  const config = platformConfig(flags);
  const sideportPlan = devSideportPlan(flags, config);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, log);
  let proxy: RunningProxy;
  try {
    // SELECT n reaches the platform's database n (<url>/db/<n>), like a redis-server's 16 databases.
    const databases = platformDatabases(platform.url, platform.databases);
    proxy = await startProxy({ ...proxyConfig(flags, platform.url, platform.token), databases }, log);
    await proxy.upstreamChecked;
    // The web console's Proxy page asks the proxy over RESP, as any client would.
    platform.attachProxy({ host: proxy.host, port: proxy.port, password: sideportPlan.requirepass });
  } catch (err) {
    await platform.stop();
    throw err;
  }
  let sideports: RunningSideport[];
  try {
    sideports = await startDevSideports(sideportPlan, platform, log);
  } catch (err) {
    await proxy.stop();
    await platform.stop();
    throw err;
  }
  const sideportLines = sideportBanner(sideports, sideportPlan.requirepass, sideportPlan.vectorIndexes.join(', '));
  const signalled = waitForSignal(); // before the banner: a SIGTERM right after it must stop us cleanly
  process.stdout.write(stackBanner(platform, flags.redisUrl, proxy, sideportPlan.requirepass, sideportLines) + '\n');
  await signalled;
  // SIGTERM: every RESP port finishes the replies it owes (server/listener.ts), side ports included.
  await Promise.all([...sideports.map((s) => s.shutdown()), proxy.shutdown()]);
  await platform.stop();
}

interface DevSideportPlan {
  host: string;
  requirepass?: string;
  allowUnauthenticated: boolean;
  timeoutMs: number;
  vectorPort?: number;
  /** The first is the default index; the others add dimensions (a key goes to its dimension's index). */
  vectorIndexes: string[];
  vectorToken: string;
  queuePort?: number;
  queueToken: string;
  accountEmail: string;
  accountKey: string;
  vectorListener: ReturnType<typeof listenerSettings>;
  queueListener: ReturnType<typeof listenerSettings>;
}

/** Reads the flags before the platform starts, and fixes the account credentials both sides will use. */
function devSideportPlan(f: DevFlags, config: PlatformConfig): DevSideportPlan {
  config.accountEmail ??= 'dev@respgate.local';
  config.accountKey ??= generateToken();
  const indexes = (config.vectorIndexes ?? DEFAULT_INDEXES).map((i) => i.name);
  const unknown = f.vectorIndex.find((name) => !indexes.includes(name));
  if (f.vectorPort !== 'off' && unknown !== undefined) {
    throw new ConfigError(
      `${FLAG.vectorIndex} '${unknown}' is not an index of the local platform; choose one of ${indexes.join(', ')} (or add it with ${FLAG.vectorConfig})`,
    );
  }
  return {
    host: f.host,
    requirepass: requirepassOf(f),
    allowUnauthenticated: f.allowUnauthenticated,
    timeoutMs: f.upstreamTimeout,
    vectorPort: f.vectorPort === 'off' ? undefined : f.vectorPort,
    vectorIndexes: [...new Set(f.vectorIndex)],
    vectorToken: config.vectorToken ?? config.token,
    queuePort: f.queuePort === 'off' ? undefined : f.queuePort,
    queueToken: config.queueToken ?? config.token,
    accountEmail: config.accountEmail,
    accountKey: config.accountKey,
    vectorListener: listenerSettings(f, 'vector'),
    queueListener: listenerSettings(f, 'queue'),
  };
}

async function startDevSideports(plan: DevSideportPlan, platform: RunningPlatform, log: Logger): Promise<RunningSideport[]> {
  const started: RunningSideport[] = [];
  const listener = {
    host: plan.host,
    requirepass: plan.requirepass,
    allowUnauthenticated: plan.allowUnauthenticated,
    timeoutMs: plan.timeoutMs,
  };
  try {
    if (plan.vectorPort !== undefined) {
      // In-process calls, and an index made for a new key of a dimension none has (dev-vector.ts, issue 21).
      const vector = {
        ...listener,
        ...plan.vectorListener,
        port: plan.vectorPort,
        ...devVectorIndexes(platform, plan.vectorIndexes, plan.vectorToken),
        addHint: `${FLAG.vectorIndex} <name> (an index of that dimension, added with ${FLAG.vectorConfig})`,
      };
      started.push(await startVectorSideport(vector, log));
    }
    if (plan.queuePort !== undefined) {
      const account = { url: `${platform.url}/account/v2`, email: plan.accountEmail, apiKey: plan.accountKey };
      started.push(
        await startQueueSideport(
          { ...listener, ...plan.queueListener, port: plan.queuePort, url: `${platform.url}/queue`, token: plan.queueToken, account },
          log,
        ),
      );
    }
    return started;
  } catch (err) {
    for (const s of started) await s.stop();
    throw err;
  }
}
