// Server-sent event streams of Area B: /subscribe/{channel}, /psubscribe/{pattern}, /ssubscribe/{shardchannel}
// (a respgate extension: SSUBSCRIBE on the stream's connection, so SPUBLISH reaches it) and /monitor.
// Each stream has a Redis connection of its own, authenticated as the token's user, and both
// are closed together: when the HTTP client goes away, or when redis-server drops the connection.
// These connections are not lent by the principal's pool (its 64 exclusive connections serve
// transactions): a proxy holds one stream per subscribed channel, so streams are bounded only by
// the data store's maxclients.
//
// respgate extension: a request with `Respgate-Event-Encoding: base64` gets every field after the
// event type of /subscribe and /psubscribe events (channel, pattern, message) in base64, and the
// answer echoes the header; so binary channels and messages, commas and line breaks travel intact.
// Without the header the events are exactly those of the real service (the official SDK parses them).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeCommands } from '../../resp/request-writer.js';
import { parseLength } from '../../resp/reply-scanner.js';
import { errorText, RedisConnection } from '../redis/connection.js';
import { CredentialsRevokedError, StoreUnavailableError } from './executor.js';
import type { Principal } from './principals.js';

export type StreamKind = 'subscribe' | 'psubscribe' | 'ssubscribe' | 'monitor';

const KEEPALIVE_MS = 25_000;

/** Request header of the base64 event encoding (a respgate extension; echoed when honoured). */
export const EVENT_ENCODING_HEADER = 'respgate-event-encoding';

/** Open streams, for tests and metrics. */
export const openStreams = { count: 0 };

export async function startStream(
  req: IncomingMessage,
  res: ServerResponse,
  principal: Principal,
  kind: StreamKind,
  target: Buffer | undefined,
  headers: Record<string, string>,
  onError: (status: number, error: string) => void,
): Promise<void> {
  const asked = req.headers[EVENT_ENCODING_HEADER];
  if (asked !== undefined && String(asked).trim().toLowerCase() !== 'base64') {
    return onError(400, "ERR Respgate-Event-Encoding must be 'base64' (or absent for plain text events)");
  }
  // /monitor lines are ASCII already (Redis escapes every other byte), so the header changes nothing there.
  const base64 = asked !== undefined && kind !== 'monitor';
  let conn: RedisConnection;
  try {
    conn = await RedisConnection.open(principal.pool.endpoint);
  } catch (err) {
    const text = String((err as Error)?.message ?? err);
    if (/^(WRONGPASS|NOPERM)/.test(text)) throw new CredentialsRevokedError(text);
    throw new StoreUnavailableError(`ERR the data store is unavailable (${text}); retry when it is back`);
  }
  if (req.socket.destroyed) {
    // The client left while the connection was opening: its 'close' event has already fired.
    conn.close();
    return;
  }
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    openStreams.count--;
    clearInterval(keepalive);
    conn.close();
    res.end();
  };
  openStreams.count++;
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  req.socket.on('close', finish);
  res.on('close', finish);
  conn.onClose = finish;

  let first = true;
  conn.onPush = (reply) => {
    if (finished) return;
    if (first) {
      first = false;
      const err = errorText(reply);
      if (err) {
        finished = true;
        openStreams.count--;
        clearInterval(keepalive);
        conn.close();
        onError(400, err);
        return;
      }
      res.writeHead(200, {
        ...headers,
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
        ...(base64 ? { 'Respgate-Event-Encoding': 'base64' } : {}),
      });
      res.flushHeaders();
    }
    const line = kind === 'monitor' ? monitorEvent(reply) : pubsubEvent(reply, base64);
    if (line !== undefined) res.write(sseData(line));
  };
  const command = kind === 'monitor' ? ['MONITOR'] : [kind.toUpperCase(), target!];
  conn.writeRaw(encodeCommands([command]));
}

/** SSE framing; a payload with line breaks becomes several data lines of one event (per the SSE spec). */
function sseData(text: string): string {
  return text.includes('\n') || text.includes('\r')
    ? text
        .split(/\r\n|\r|\n/)
        .map((l) => `data: ${l}\n`)
        .join('') + '\n'
    : `data: ${text}\n\n`;
}

/** `+OK` → `OK`; `+1721284005.242090 [0 127.0.0.1:5000] "GET" "k"` → the same text without `+`. */
function monitorEvent(reply: Buffer): string | undefined {
  if (reply[0] !== 0x2b) return undefined;
  return reply.toString('utf8', 1, reply.length - 2);
}

/**
 * Pub/sub replies as comma-joined fields: subscribe,ch,1 / message,ch,text / pmessage,pat,ch,text /
 * ssubscribe,ch,1 / smessage,ch,text;
 * with `base64` every string after the type is base64 (subscribe,Y2g=,1 / message,Y2g=,dGV4dA==).
 */
function pubsubEvent(reply: Buffer, base64: boolean): string | undefined {
  if (reply[0] !== 0x2a) return undefined;
  const fields: string[] = [];
  let pos = reply.indexOf(13) + 2;
  while (pos < reply.length) {
    const lineEnd = reply.indexOf(13, pos);
    if (reply[pos] === 0x3a) {
      fields.push(reply.toString('latin1', pos + 1, lineEnd));
      pos = lineEnd + 2;
    } else {
      const len = parseLength(reply, pos + 1, lineEnd);
      const encoding = base64 && fields.length > 0 ? 'base64' : 'utf8';
      fields.push(len < 0 ? '' : reply.toString(encoding, lineEnd + 2, lineEnd + 2 + len));
      pos = lineEnd + 2 + Math.max(len, 0) + (len < 0 ? 0 : 2);
    }
  }
  return fields.join(',');
}
