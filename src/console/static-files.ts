// The console's page files and answers, shared by the platform's /console and `respgate proxy`'s
// (docs/console.md). Neutral ground: imports nothing of src/platform/ or src/proxy/, so the proxy
// role can serve its part without loading the platform (test/startup.test.ts).
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The page files, shipped in the package beside this module (no CDN: the console works offline). */
export const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// No inline script or style, nothing from another origin: even a value that slipped past the
// page's escaping could not run (the page builds its DOM with textContent only).
export const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/**
 * GET/HEAD of a page file; `subpath` is what follows /console ('' or '/…'). Redirects /console to
 * /console/, and answers 404 for a name outside the static directory or of an unknown type.
 */
export async function serveConsoleFile(req: http.IncomingMessage, res: http.ServerResponse, subpath: string): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') return text(res, 405, 'the console serves GET only', { Allow: 'GET, HEAD' });
  if (subpath === '') {
    // Relative asset URLs resolve under /console/ only with the trailing slash.
    res.writeHead(308, { Location: '/console/' });
    return void res.end();
  }
  const name = subpath === '/' ? 'index.html' : decodeURIComponentSafe(subpath.slice(1));
  const file = name === undefined ? undefined : path.resolve(STATIC_DIR, name);
  const type = file && TYPES[path.extname(file)];
  if (!file || !type || !file.startsWith(STATIC_DIR)) return text(res, 404, `no such console file: ${subpath}`);
  let body: Buffer;
  try {
    body = await process.getBuiltinModule('node:fs/promises').readFile(file); // loaded on use: ~2.5 ms of a start
  } catch {
    return text(res, 404, `no such console file: ${subpath}`);
  }
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length, ...SECURITY_HEADERS });
  res.end(method === 'HEAD' ? undefined : body);
}

/** The `Authorization: Bearer` token of a request, or ''. */
export function bearerToken(req: http.IncomingMessage): string {
  const auth = req.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
}

function decodeURIComponentSafe(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export function json(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

export function text(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers, ...SECURITY_HEADERS });
  res.end(message);
}
