// MONITOR of one connection: the upstream's /monitor event stream turned back into what Redis sends,
// `+OK` once the stream is confirmed (its first event, `OK`), then one status reply per command in
// Redis' own format (`+1721284005.242090 [0 127.0.0.1:5000] "set" "k" "v"`). The lines describe the
// commands the upstream's Redis executes: commands the proxy answers itself (PING, ECHO, CLIENT, …)
// do not appear, and the address is that of the upstream's connection, not of the Redis client.
// RESET and QUIT leave it, a disconnect closes the stream; a dropped stream is opened again with
// backoff (commands executed in the gap are not shown).
import { monitorLine, ResilientEventStream } from '../upstream/event-stream.js';
import type { PushPort, PushUpstream } from './context.js';
import { errorReply, OK } from '../server/replies.js';

export class MonitorFeed {
  private readonly stream: ResilientEventStream;
  /** Fills MONITOR's reply position (once). */
  private readonly fill: (reply: Buffer) => void;

  constructor(
    port: PushPort,
    upstream: PushUpstream,
    /** The feed failed to start (refused, unreachable): the connection is no longer monitoring. */
    private readonly onStopped: () => void,
  ) {
    const fill = (this.fill = port.reserve());
    const { log } = upstream;
    const context = () => ({ conn: port.id, client: port.address, stream: 'monitor' });
    this.stream = new ResilientEventStream(
      upstream.client,
      { kind: 'monitor' },
      {
        onConfirmed: (again) => {
          if (again) log.warn(context(), 'upstream event stream re-established');
          else fill(OK);
        },
        onEvent: (data) => {
          const line = monitorLine(data);
          port.push(Buffer.from(`+${line}\r\n`));
        },
        onFailed: (error) => {
          fill(errorReply(error));
          this.onStopped();
        },
        onDropped: (reason, attempt, delayMs) =>
          log.warn(
            { ...context(), reason, attempt, retryInMs: delayMs },
            'upstream event stream dropped; reconnecting (commands executed until it is back are not shown)',
          ),
        onRefused: (error) => {
          log.error(
            { ...context(), error },
            'upstream refused the event stream (token revoked or permission removed): closing the client connection',
          );
          port.destroy();
        },
      },
      { confirmTimeoutMs: upstream.confirmTimeoutMs, credential: port.credential },
    );
  }

  /** RESET, QUIT, disconnect. A MONITOR still waiting for the upstream answers +OK (it came first). */
  stop(): void {
    this.stream.close();
    this.fill(OK);
  }
}
