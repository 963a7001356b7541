// The listeners of one RESP port: TCP, and TLS when configured (redis-server's tls-port), with the
// rules every port applies at the door and at the end: maxclients, the idle `timeout`, and the
// shutdown that lets each connection finish the replies it owes (SIGTERM).
import net from 'node:net';
import type tls from 'node:tls';
import type { TlsListenerConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { RespConnection } from './connection.js';

export interface ListenerOptions {
  host: string;
  port: number;
  tls?: TlsListenerConfig;
  /**
   * Redis maxclients (one more connection gets Redis' error and is closed) and timeout (seconds a
   * client may stay idle before it is closed; 0 = never), read live: CONFIG SET changes them.
   */
  settings: { readonly maxClients: number; readonly idleTimeoutSec: number };
  /** SIGTERM: how long the replies owed have to be written before the connections are closed. */
  shutdownGraceMs: number;
  /** The error when the port is taken, naming the flag that changes it. */
  busyText(port: number): string;
  log: Logger;
}

export interface Listeners<C extends RespConnection> {
  readonly port: number;
  /** The TLS port, when TLS is configured. */
  readonly tlsPort: number | undefined;
  /** The open connections. */
  readonly connections: ReadonlySet<C>;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Bytes read from and written to client connections so far, closed ones included (INFO total_net_…). */
  traffic(): { input: number; output: number };
  /** Stops accepting (the open connections stay). */
  close(): void;
  /** Closes the listeners and every connection at once. */
  stop(): void;
  /** Stops accepting, lets every connection write the replies it owes (at most shutdownGraceMs), then closes them. */
  shutdown(): Promise<void>;
}

const MAX_CLIENTS = Buffer.from('-ERR max number of clients reached\r\n');

/**
 * Starts the listeners; `create` makes the connection of an accepted socket, and must call `closed`
 * once its socket is gone.
 */
export async function startListeners<C extends RespConnection>(
  options: ListenerOptions,
  create: (socket: net.Socket, id: number, closed: (c: RespConnection) => void) => C,
): Promise<Listeners<C>> {
  const connections = new Set<C>();
  let accepted = 0;
  /** Bytes of connections already closed (open ones are read from their sockets). */
  const closedBytes = { input: 0, output: 0 };
  const closed = (c: RespConnection) => {
    connections.delete(c as C);
    closedBytes.input += c.socket.bytesRead;
    closedBytes.output += c.socket.bytesWritten;
  };
  const accept = (socket: net.Socket) => {
    if (connections.size >= options.settings.maxClients) {
      // Redis' text, then the connection closes (networking.c acceptCommonHandler).
      socket.on('error', () => undefined);
      socket.end(MAX_CLIENTS);
      return;
    }
    connections.add(create(socket, ++accepted, closed));
  };
  // Half-open: a client that ends its side still gets the replies it is owed (server/connection.ts).
  const listener = net.createServer({ allowHalfOpen: true }, accept);
  await listen(listener, options.port, options.host, options.busyText(options.port));
  const tlsListener = options.tls ? tlsServer(options.tls, accept, options.log) : undefined;
  if (tlsListener && options.tls) {
    try {
      await listen(tlsListener, options.tls.port, options.host, options.busyText(options.tls.port));
    } catch (err) {
      listener.close();
      throw err;
    }
  }
  // Always running: CONFIG SET timeout can turn the idle timeout on later.
  const { settings } = options;
  const idleTimer = setInterval(() => settings.idleTimeoutSec > 0 && closeIdle(connections, settings.idleTimeoutSec), 1000);
  idleTimer.unref();
  const close = () => {
    clearInterval(idleTimer);
    listener.close();
    tlsListener?.close();
  };
  return {
    port: (listener.address() as net.AddressInfo).port,
    tlsPort: tlsListener ? (tlsListener.address() as net.AddressInfo).port : undefined,
    connections,
    get accepted() {
      return accepted;
    },
    traffic: () => {
      let { input, output } = closedBytes;
      for (const c of connections) {
        input += c.socket.bytesRead;
        output += c.socket.bytesWritten;
      }
      return { input, output };
    },
    close,
    stop: () => {
      close();
      for (const c of connections) c.destroy();
    },
    shutdown: async () => {
      close();
      const deadline = Date.now() + options.shutdownGraceMs;
      for (const c of connections) c.drain();
      // Every connection closes once its owed replies are written; past the deadline, at once.
      while (connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const c of connections) c.destroy();
    },
  };
}

function listen(server: net.Server, port: number, host: string, busyText: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new Error(busyText) : err));
    server.listen(port, host, () => resolve());
  });
}

/** The TLS listener: redis-server's tls-port, tls-cert-file, tls-key-file, tls-ca-cert-file, tls-auth-clients. */
function tlsServer(t: TlsListenerConfig, accept: (socket: net.Socket) => void, log: Logger): tls.Server {
  // node:tls loads here, not with the module: ~6 ms of a start without TLS (bench/README.md, 2026-11-28).
  const server = process.getBuiltinModule('node:tls').createServer(
    {
      cert: t.cert,
      key: t.key,
      ca: t.ca,
      requestCert: t.authClients !== 'no',
      rejectUnauthorized: t.authClients === 'yes',
      allowHalfOpen: true,
    },
    accept,
  );
  // A failed handshake (plain text on the TLS port, a refused certificate) is the client's problem.
  server.on('tlsClientError', (err) => log.debug({ problem: err.message }, 'TLS handshake failed'));
  return server;
}

/** Redis `timeout`: idle clients are closed (a port says what is not idle: subscribers, MONITOR, blocked clients). */
function closeIdle(connections: Set<RespConnection>, idleTimeoutSec: number): void {
  const limit = Date.now() - idleTimeoutSec * 1000;
  for (const c of connections) {
    if (c.lastInteractionAt < limit && c.idle) c.destroy();
  }
}
