// The vector side port: the vector-set commands in front of one Area C index.
import type { Logger } from '../logger.js';
import { VectorClient, type LocalVectorApi } from '../upstream/vector-client.js';
import { startSideport, type RunningSideport, type SideportOptions } from './server.js';
import { vectorCommands } from './vector/commands.js';

export interface VectorSideportOptions {
  host: string;
  port: number;
  requirepass?: string;
  allowUnauthenticated?: boolean;
  /** The listener's own TLS port and certificate, and its limits (maxclients, timeout …): server/table-port.ts. */
  tls?: SideportOptions['tls'];
  limits?: SideportOptions['limits'];
  /** The index's REST URL (…/vector/<index> on the local platform). */
  url: string;
  token: string;
  /** The dev stack: the index's operations called in-process instead of over HTTP (upstream/vector-client.ts). */
  local?: LocalVectorApi;
  /** More indexes, of other dimensions: a key lives in the index of its first VADD's dimension. */
  more?: { url: string; token: string; local?: LocalVectorApi }[];
  /** How an index of another dimension is added (named in VADD's error for a dimension no index has). */
  addHint?: string;
  /** The dev stack: makes an index for a new key of a dimension no index has (its URL, token, local calls). */
  createIndex?: (dimension: number) => Promise<{ url: string; token: string; local?: LocalVectorApi }>;
  timeoutMs?: number;
}

export async function startVectorSideport(options: VectorSideportOptions, log: Logger): Promise<RunningSideport> {
  const client = (i: { url: string; token: string; local?: LocalVectorApi }) =>
    new VectorClient({ url: i.url, token: i.token, timeoutMs: options.timeoutMs, local: i.local });
  const create = options.createIndex;
  // Clients of indexes created later join `clients` (the router appends them), so closeAll closes them too.
  const clients = [{ url: options.url, token: options.token, local: options.local }, ...(options.more ?? [])].map(client);
  const closeAll = async () => void (await Promise.all(clients.map((c) => c.close())));
  try {
    return await startSideport(
      {
        role: 'vector',
        host: options.host,
        port: options.port,
        requirepass: options.requirepass,
        allowUnauthenticated: options.allowUnauthenticated,
        tls: options.tls,
        limits: options.limits,
        commands: vectorCommands(clients, options.addHint, create && (async (dim) => client(await create(dim)))),
        portFlag: '--vector-port',
        upstreamInfo: () => [
          `upstream_url:${new URL(options.url).origin}${new URL(options.url).pathname}`,
          ...(options.more ?? []).map((i, k) => `upstream_url_${k + 2}:${new URL(i.url).origin}${new URL(i.url).pathname}`),
        ],
        onStop: closeAll,
        checkUpstream: async () => void (await Promise.all(clients.map((c) => c.info()))),
      },
      log,
    );
  } catch (err) {
    await closeAll();
    throw err;
  }
}
