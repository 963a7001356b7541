// The full path for proxy tests: a real platform (on embedded redis-servers), the real proxy in
// front of it, and a separate direct redis-server as the oracle for differential tests.
import net from 'node:net';
import { Redis as IORedis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { ProxyConfig } from '../../src/config.js';
import { platformDatabases } from '../../src/proxy/databases.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { tracked } from './cleanup.js';
import { startTestPlatform } from './platform.js';

export interface Stack {
  platform: RunningPlatform;
  proxy: RunningProxy;
  /** A direct redis-server (no password, one database, like the data store) for differential tests. */
  oracle: EmbeddedRedis;
  stop(): Promise<void>;
}

/**
 * `databases`: the platform's (its /db/<n> bases, each the proxy's database n, as in the dev stack) and
 * the oracle's; 1 by default, like the hosted service.
 */
export async function startStack(proxyOverrides: Partial<ProxyConfig> = {}, { databases = 1 } = {}): Promise<Stack> {
  const platform = await startTestPlatform({ databases });
  let proxy: RunningProxy | undefined;
  try {
    proxy = await startTestProxy(platform, { databases: platformDatabases(platform.url, platform.databases), ...proxyOverrides });
    const started = { proxy, oracle: tracked(await startEmbeddedRedis({ databases, password: null })) };
    return {
      platform,
      ...started,
      stop: async () => {
        await started.proxy.stop();
        await platform.stop();
        await started.oracle.stop();
      },
    };
  } catch (err) {
    // Nothing half-started stays behind.
    await proxy?.stop();
    await platform.stop();
    throw err;
  }
}

export async function startTestProxy(
  platform: { url: string; token: string },
  overrides: Partial<ProxyConfig> = {},
): Promise<RunningProxy> {
  const proxy = await startProxy(
    {
      host: '127.0.0.1',
      port: 0,
      upstreamUrl: platform.url,
      upstreamToken: platform.token,
      upstreamTimeoutMs: 5000,
      upstreamConnections: 8,
      maxBatch: 1000,
      maxBulkLength: 512 * 1024 * 1024,
      ...overrides,
    },
    createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
  );
  return tracked(proxy);
}

/** A raw RESP connection for tests: send bytes, read whole replies as bytes. */
export class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host }, () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** Sends commands as multibulk and returns each raw reply. */
  async call(...commands: (string | Buffer)[][]): Promise<Buffer[]> {
    this.write(encodeCommands(commands));
    return this.replies(commands.length);
  }

  /** Reads `n` complete replies (rejects after `ms`). */
  async replies(n: number, ms = 10_000): Promise<Buffer[]> {
    const out: Buffer[] = [];
    const deadline = Date.now() + ms;
    while (out.length < n) {
      const end = this.buf.length > 0 ? scanReply(this.buf, 0) : -1;
      if (end > 0) {
        out.push(this.buf.subarray(0, end));
        this.buf = this.buf.subarray(end);
        continue;
      }
      if (this.closed) throw new Error(`connection closed after ${out.length} of ${n} replies`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out after ${out.length} of ${n} replies; buffered: ${JSON.stringify(this.buf.toString('latin1').slice(0, 200))}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return out;
  }

  /** Everything the server sends until it closes the connection. */
  async untilClosed(ms = 5000): Promise<Buffer> {
    const deadline = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('connection still open');
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.buf;
  }

  /** What has been received and not read as replies yet (a MONITOR or message stream), as text. */
  peek(): string {
    return this.buf.toString('latin1');
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The two connections of a differential test: a direct redis-server (the oracle) and the proxy. */
export interface DifferentialSide {
  oracle: RawClient;
  proxy: RawClient;
}

/** What the differential tests send to both sides before a scenario: empty data, functions and scripts. */
export const RESET_COMMANDS: (string | Buffer)[][] = [['FLUSHALL'], ['FUNCTION', 'FLUSH'], ['SCRIPT', 'FLUSH']];

/** Whether each side closed its connection (after a QUIT or a protocol error), as [oracle, proxy]. */
export function closedOnBoth(side: DifferentialSide): Promise<[boolean, boolean]> {
  const closed = (c: RawClient) =>
    c.untilClosed().then(
      () => true,
      () => false,
    );
  return Promise.all([closed(side.oracle), closed(side.proxy)]);
}

/**
 * Sends the same commands to an oracle (a direct redis-server) and the proxy, as one burst (one write
 * each) or one at a time, and returns both sides' raw replies in order (the differential tests).
 */
export async function replayOnBoth(side: DifferentialSide, commands: (string | Buffer)[][], burst: boolean): Promise<[Buffer[], Buffer[]]> {
  if (burst) {
    const bytes = encodeCommands(commands);
    side.oracle.write(bytes);
    side.proxy.write(bytes);
    return Promise.all([side.oracle.replies(commands.length), side.proxy.replies(commands.length)]);
  }
  const o: Buffer[] = [];
  const p: Buffer[] = [];
  for (const args of commands) {
    const [[a], [b]] = await Promise.all([side.oracle.call(args), side.proxy.call(args)]);
    o.push(a);
    p.push(b);
  }
  return [o, p];
}

/** An ioredis client straight to the platform's data store (around the proxy): PUBSUB NUMSUB, CLIENT KILL, publishing. */
export async function connectDataStore(stack: Stack): Promise<IORedis> {
  const ds = stack.platform.dataStore;
  const store = new IORedis({ host: ds.host, port: ds.port, username: ds.username, password: ds.password, lazyConnect: true });
  await store.connect();
  return store;
}
