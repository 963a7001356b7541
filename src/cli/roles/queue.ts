// `respgate queue`: the queue side port alone, in front of a remote queue API and optionally the
// account API.
import { ConfigError } from '../../config.js';
import { createLogger } from '../../logger.js';
import { startQueueSideport } from '../../sideports/queue-port.js';
import { ENV, FLAG, type QueueRoleFlags } from '../options.js';
import { listenerSettings } from '../listener-settings.js';
import { requirepassOf } from '../proxy-config.js';
import { restUrl, serveSideportRole } from './sideport.js';

export async function run(f: QueueRoleFlags): Promise<void> {
  const url = restUrl(f.queueUrl || process.env.QSTASH_URL, FLAG.queueUrl, `${ENV.queueUrl} / QSTASH_URL`);
  const token = f.queueToken || process.env.QSTASH_TOKEN;
  if (!token) throw new ConfigError(`no queue token: give ${FLAG.queueToken} (or ${ENV.queueToken} / QSTASH_TOKEN)`);
  if (Boolean(f.accountEmail) !== Boolean(f.accountKey))
    throw new ConfigError(
      `the account API needs both ${FLAG.accountEmail} and ${FLAG.accountKey} (or neither: ACCOUNT commands are then refused)`,
    );
  const account =
    f.accountEmail && f.accountKey
      ? { url: restUrl(f.accountUrl, FLAG.accountUrl, ENV.accountUrl), email: f.accountEmail, apiKey: f.accountKey }
      : undefined;
  const log = createLogger(f.logLevel);
  const s = await startQueueSideport(
    {
      host: f.host,
      port: f.queuePort,
      requirepass: requirepassOf(f),
      allowUnauthenticated: f.allowUnauthenticated,
      url,
      token,
      account,
      timeoutMs: f.upstreamTimeout,
      ...listenerSettings(f, 'queue'),
    },
    log,
  );
  const accountText = account ? ` (account API ${new URL(account.url).origin})` : '';
  await serveSideportRole(s, f, `queue side port ready on redis://${s.host}:${s.port} in front of ${new URL(url).origin}${accountText}`);
}
