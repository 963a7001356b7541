// What the benchmarks that time whole round trips through a local proxy (blocking, WATCH) share: the
// local platform with its embedded redis-servers, a proxy configuration with the default limits, and
// a small RESP client (one command at a time or several in flight, each reply returned as latin1
// text, split by the proxy's own reply scanner).
import net from 'node:net';
import { DEFAULTS, generateToken, PROXY_DEFAULTS, type ProxyConfig } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { startPlatform, type RunningPlatform } from '../src/platform/platform.js';
import { scanReply } from '../src/resp/reply-scanner.js';

/** The local platform on a free port, with its own embedded redis-servers. */
export function startBenchPlatform(log: Logger): Promise<RunningPlatform> {
  return startPlatform(
    {
      host: '127.0.0.1',
      httpPort: 0,
      token: generateToken(),
      readonlyToken: generateToken(),
      redisServerBinary: 'redis-server',
      maxRequestSize: DEFAULTS.maxRequestSize,
      dailyRequestLimit: 0,
      logLevel: 'warn',
    },
    log,
  );
}

/** A proxy on a free loopback port in front of `upstreamUrl`, with the default limits. */
export function benchProxyConfig(upstreamUrl: string, upstreamToken: string, extra: Partial<ProxyConfig> = {}): ProxyConfig {
  const { upstreamTimeoutMs, upstreamConnections, maxBatch, maxBulkLength } = PROXY_DEFAULTS;
  return {
    host: '127.0.0.1',
    port: 0,
    upstreamUrl,
    upstreamToken,
    upstreamTimeoutMs,
    upstreamConnections,
    maxBatch,
    maxBulkLength,
    ...extra,
  };
}

export class Conn {
  private buf = Buffer.alloc(0);
  private readonly waiting: ((reply: string) => void)[] = [];
  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (;;) {
        const end = this.buf.length > 0 ? scanReply(this.buf, 0) : -1;
        if (end < 0) break;
        const reply = this.buf.subarray(0, end).toString('latin1');
        this.buf = this.buf.subarray(end);
        this.waiting.shift()?.(reply);
      }
    });
  }
  static connect(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(new Conn(s)));
      s.setNoDelay(true);
      s.once('error', reject);
    });
  }
  call(...args: string[]): Promise<string> {
    this.socket.write(`*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join(''));
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  close(): void {
    this.socket.destroy();
  }
}
