// The HTTP side of the queue routes: answers, bodies, and what a request says about itself.
import type http from 'node:http';
import { readBody } from '../http-body.js';
import { badRequest } from './errors.js';
import type { PublishResult } from './publisher.js';

/** What a route sees of one request. */
export interface Call {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  parts: string[];
  query: URLSearchParams;
  rawPath: string;
  rawQuery: string;
}

export function send(res: http.ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status, { 'Content-Length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export async function readJson(c: Call): Promise<Record<string, unknown>> {
  const text = (await readBody(c.req, 1024 * 1024)).toString('utf8');
  const value = text === '' ? {} : JSON.parse(text);
  if (typeof value !== 'object' || value === null) throw badRequest('the request body must be a JSON object');
  return value as Record<string, unknown>;
}

/** The publish response for a URL, as the service's docs show it: {messageId} (and deduplicated when it was). */
export function urlResult(r: PublishResult): Record<string, unknown> {
  return { messageId: r.messageId, ...(r.deduplicated ? { deduplicated: true } : {}) };
}

/**
 * The destination is the rest of the path, taken raw (a URL keeps its own slashes and escapes),
 * plus the query parameters that are not the service's own (they belong to the destination URL).
 */
export function destinationOf(c: Call, skip: number): string {
  const segments = c.rawPath.split('/').slice(1 + skip);
  let destination = segments.join('/');
  if (/^https?%3A/i.test(destination)) destination = decodeURIComponent(destination);
  // A proxy may have merged the scheme's double slash.
  destination = destination.replace(/^(https?):\/(?!\/)/i, '$1://');
  const own = /^(upstash-|service-|qstash_token$|queue_token$)/i;
  const extra = c.rawQuery.split('&').filter((p) => p !== '' && !own.test(decodeURIComponent(p.split('=')[0])));
  if (extra.length > 0 && /^https?:\/\//i.test(destination)) destination += (destination.includes('?') ? '&' : '?') + extra.join('&');
  return destination;
}

export function rawHeaderPairs(req: http.IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  return pairs;
}

export function callerIp(req: http.IncomingMessage): string {
  const ip = req.socket.remoteAddress ?? '';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
