// The queue side port: Q* commands over Area D and ACCOUNT over Area A.
import type { Logger } from '../logger.js';
import { AccountClient } from '../upstream/account-client.js';
import { QueueClient } from '../upstream/queue-client.js';
import { accountCommands } from './account-commands.js';
import { queueCommands } from './queue-commands.js';
import { startSideport, type RunningSideport, type SideportOptions } from './server.js';

export interface QueueSideportOptions {
  host: string;
  port: number;
  requirepass?: string;
  allowUnauthenticated?: boolean;
  /** The listener's own TLS port and certificate, and its limits (maxclients, timeout …): server/table-port.ts. */
  tls?: SideportOptions['tls'];
  limits?: SideportOptions['limits'];
  /** Area D base URL (…/queue on the local platform). */
  url: string;
  token: string;
  /** Area A; ACCOUNT commands answer an error naming the flags when absent. */
  account?: { url: string; email: string; apiKey: string };
  timeoutMs?: number;
}

export async function startQueueSideport(options: QueueSideportOptions, log: Logger): Promise<RunningSideport> {
  const queue = new QueueClient({ url: options.url, token: options.token, timeoutMs: options.timeoutMs });
  const account = options.account ? new AccountClient({ ...options.account, timeoutMs: options.timeoutMs }) : undefined;
  const close = async () => {
    await queue.close();
    await account?.close();
  };
  try {
    return await startSideport(
      {
        role: 'queue',
        host: options.host,
        port: options.port,
        requirepass: options.requirepass,
        allowUnauthenticated: options.allowUnauthenticated,
        tls: options.tls,
        limits: options.limits,
        commands: [...queueCommands(queue), ...accountCommands(account)],
        portFlag: '--queue-port',
        upstreamInfo: () => [
          `upstream_url:${new URL(options.url).origin}${new URL(options.url).pathname}`,
          `account_url:${options.account ? new URL(options.account.url).origin + new URL(options.account.url).pathname : '(none)'}`,
        ],
        onStop: close,
        checkUpstream: async () => void (await queue.listQueues()),
      },
      log,
    );
  } catch (err) {
    await close();
    throw err;
  }
}
