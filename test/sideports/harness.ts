// Side ports for tests: the real local platform, the vector or queue side port in front of it over
// HTTP, and small real clients (raw socket for exact bytes, redis-cli).
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { createLogger } from '../../src/logger.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { scanReply } from '../../src/resp/reply-scanner.js';
import { startQueueSideport, type QueueSideportOptions } from '../../src/sideports/queue-port.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startVectorSideport, type VectorSideportOptions } from '../../src/sideports/vector-port.js';

const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

export function vectorPort(options: Partial<VectorSideportOptions> & { url: string; token: string }): Promise<RunningSideport> {
  return startVectorSideport({ host: '127.0.0.1', port: 0, timeoutMs: 5000, ...options }, log);
}

export function queuePort(options: Partial<QueueSideportOptions> & { url: string; token: string }): Promise<RunningSideport> {
  return startQueueSideport({ host: '127.0.0.1', port: 0, timeoutMs: 5000, ...options }, log);
}

/** Sends raw commands on a new connection and returns the exact bytes of the `count` replies. */
export async function raw(port: number, commands: (string | Buffer)[][], count = commands.length): Promise<Buffer[]> {
  const socket = net.connect(port, '127.0.0.1');
  try {
    return await new Promise<Buffer[]>((resolve, reject) => {
      let buf = Buffer.alloc(0);
      const timer = setTimeout(
        () => reject(new Error(`no ${count} replies within 5 s; got ${JSON.stringify(buf.toString('latin1'))}`)),
        5000,
      );
      socket.on('error', reject);
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        const out: Buffer[] = [];
        let pos = 0;
        while (out.length < count) {
          const next = scanReply(buf, pos);
          if (next < 0) return;
          out.push(buf.subarray(pos, next));
          pos = next;
        }
        clearTimeout(timer);
        resolve(out);
      });
      socket.write(encodeCommands(commands));
    });
  } finally {
    socket.destroy();
  }
}

/** Raw replies as latin1 text, for readable assertions. */
export async function rawText(port: number, commands: (string | Buffer)[][]): Promise<string[]> {
  return (await raw(port, commands)).map((b) => b.toString('latin1'));
}

const exec = promisify(execFile);

/** Runs redis-cli against a side port; returns its stdout. */
export async function redisCli(port: number, args: string[], extra: string[] = []): Promise<string> {
  const { stdout } = await exec('redis-cli', ['-p', String(port), ...extra, ...args], { timeout: 10_000 });
  return stdout;
}
