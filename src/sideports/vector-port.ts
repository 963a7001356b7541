// The vector side port: the vector-set commands in front of one Area C index.
import type { Logger } from '../logger.js';
import { VectorClient } from '../upstream/vector-client.js';
import { startSideport, type RunningSideport } from './server.js';
import { vectorCommands } from './vector/commands.js';

export interface VectorSideportOptions {
  host: string;
  port: number;
  requirepass?: string;
  allowUnauthenticated?: boolean;
  /** The index's REST URL (…/vector/<index> on the local platform). */
  url: string;
  token: string;
  timeoutMs?: number;
}

export async function startVectorSideport(options: VectorSideportOptions, log: Logger): Promise<RunningSideport> {
  const client = new VectorClient({ url: options.url, token: options.token, timeoutMs: options.timeoutMs });
  try {
    return await startSideport(
      {
        role: 'vector',
        host: options.host,
        port: options.port,
        requirepass: options.requirepass,
        allowUnauthenticated: options.allowUnauthenticated,
        commands: vectorCommands(client),
        portFlag: '--vector-port',
        upstreamInfo: () => [`upstream_url:${new URL(options.url).origin}${new URL(options.url).pathname}`],
        onStop: () => client.close(),
        checkUpstream: async () => void (await client.info()),
      },
      log,
    );
  } catch (err) {
    await client.close();
    throw err;
  }
}
