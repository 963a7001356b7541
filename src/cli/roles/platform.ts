// `respgate platform`: the local platform alone (REST API on --http-port).
import { createLogger } from '../../logger.js';
import { startPlatform } from '../../platform/platform.js';
import { stackBanner } from '../banner.js';
import type { PlatformFlags } from '../options.js';
import { platformConfig } from '../platform-config.js';
import { waitForSignal } from '../signals.js';

export async function run(flags: PlatformFlags): Promise<void> {
  const config = platformConfig(flags);
  const log = createLogger(config.logLevel);
  const platform = await startPlatform(config, log);
  const signalled = waitForSignal(); // before the banner: a SIGTERM right after it must stop us cleanly
  process.stdout.write(stackBanner(platform, flags.redisUrl) + '\n');
  await signalled;
  await platform.stop();
}
