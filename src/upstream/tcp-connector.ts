// The plain-TCP connections of the proxy's HTTP client (http1-pool.ts), opened as undici's connector
// opens them (a 64 KiB high-water mark, no Nagle delay, TCP keep-alive after 60 s, its connect-timeout
// error, word for word) but without undici: its connector loads ~10 of undici's modules with node:http
// and node:assert under them, 16-20 ms of a proxy's start spent right after it listens (the upstream
// check is its first connection), and their memory for good (bench/README.md, 2026-11-28). TLS keeps
// undici's connector, for its session cache. The one module of upstream/ that opens a socket: a
// connection to the upstream, never a client's (docs/decisions.md, 2026-11-28).
import net from 'node:net';

export interface TcpConnectOptions {
  /** The URL's hostname: an IPv6 address keeps its brackets there. */
  hostname: string;
  port: number;
  /** 0: none. */
  timeoutMs: number;
  /** net's `onread`: reads land where the caller says (returning nothing: the socket keeps reading). */
  onread?: { buffer: () => Buffer; callback: (bytes: number, buffer: Buffer) => void };
}

const KEEP_ALIVE_DELAY_MS = 60_000;

/** Opens a TCP connection; `callback` is called once, with the connected socket or the reason it did not connect. */
export function connectTcp(options: TcpConnectOptions, callback: (err: Error | undefined, socket?: net.Socket) => void): void {
  const { hostname, port, timeoutMs, onread } = options;
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  // highWaterMark: the streams' (undici's value); @types/node leaves it out of connect's options.
  const connectOptions = { highWaterMark: 64 * 1024, host, port, ...(onread ? { onread: onread as unknown as net.OnReadOpts } : {}) };
  const socket = net.connect(connectOptions);
  socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
  socket.setNoDelay(true);
  let settled = false;
  const settle = (err?: Error) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    socket.off('error', settle);
    callback(err, err ? undefined : socket);
  };
  // 0: no connect timeout, as with undici.
  const timer = timeoutMs ? setTimeout(() => socket.destroy(connectTimeoutError(socket, hostname, port, timeoutMs)), timeoutMs) : undefined;
  socket.once('connect', () => settle());
  socket.on('error', settle);
}

/** undici's ConnectTimeoutError, word for word. */
function connectTimeoutError(socket: net.Socket, hostname: string, port: number, timeoutMs: number): Error {
  const tried = (socket as { autoSelectFamilyAttemptedAddresses?: string[] }).autoSelectFamilyAttemptedAddresses;
  const where = Array.isArray(tried) ? `attempted addresses: ${tried.join(', ')}` : `attempted address: ${hostname}:${port}`;
  return Object.assign(new Error(`Connect Timeout Error (${where}, timeout: ${timeoutMs}ms)`), {
    name: 'ConnectTimeoutError',
    code: 'UND_ERR_CONNECT_TIMEOUT',
  });
}
