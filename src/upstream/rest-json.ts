// One JSON REST call to an Upstash-style area (vector, queue, account): an undici Pool per base URL,
// a hard deadline, and the service's `{"error": …}` bodies turned into RestError with the service's
// own text. Credentials go in headers only and never into an error message.
import { undiciPool, type Pool } from './undici-pool.js';

export interface RestClientOptions {
  /** Base URL of the area, e.g. http://127.0.0.1:8079/vector/dense or https://qstash.upstash.io */
  url: string;
  /** Full Authorization header value (`Bearer …` or `Basic …`). */
  authorization: string;
  timeoutMs: number;
  connections: number;
  /** The service's name in error texts, e.g. "vector service". */
  service: string;
}

export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL, already percent-encoded where needed, starting with '/'. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined | Array<string>>;
  /** A value sent as JSON, or raw bytes/text sent as they are. */
  json?: unknown;
  body?: Buffer | string;
  headers?: Record<string, string>;
}

/** The service answered with an error status (its text is in `message`), or could not be reached. */
export class RestError extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when no answer came (network error, deadline). */
    readonly status: number,
    /** Which service answered, e.g. "account service". */
    readonly service: string,
  ) {
    super(message);
  }
}

export class RestClient {
  private readonly pool: Pool;
  private readonly basePath: string;
  readonly origin: string;

  constructor(private readonly options: RestClientOptions) {
    const url = new URL(options.url);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new (undiciPool())(url.origin, { connections: options.connections, keepAliveTimeout: 10_000 });
  }

  /** Sends one request; resolves with the parsed JSON answer (or the text when it is not JSON). */
  async call<T = unknown>(req: RestRequest): Promise<T> {
    const headers: Record<string, string> = { authorization: this.options.authorization, ...req.headers };
    let body: string | Buffer | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] ??= 'application/json';
    }
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await this.pool.request({
        method: req.method,
        path: this.basePath + req.path + queryString(req.query),
        headers,
        body,
        signal,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const e = err as { name?: string; code?: string; message?: string };
      const what =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `no answer within ${this.options.timeoutMs} ms`
          : e.code
            ? `${e.code}`
            : (e.message ?? String(err));
      throw new RestError(`${this.origin} unreachable: ${what}`, 0, this.options.service);
    }
    let parsed: unknown = text;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
    } else parsed = null;
    if (status < 200 || status > 299) {
      const message =
        typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string'
          ? (parsed as { error: string }).error
          : typeof parsed === 'string' && parsed.length > 0
            ? parsed.slice(0, 300)
            : `HTTP ${status}`;
      throw new RestError(message, status, this.options.service);
    }
    return parsed as T;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function queryString(query: RestRequest['query']): string {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) p.append(k, x);
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Encodes one path segment (a namespace, a URL group name, a destination URL). */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

/** Where a Bearer-token area lives (vector index, queue). */
export interface BearerClientOptions {
  /** Base URL, e.g. http://127.0.0.1:8079/vector/dense or https://qstash.upstash.io */
  url: string;
  token: string;
  timeoutMs?: number;
  connections?: number;
}

/** A RestClient for an area authenticated with a Bearer token. */
export function bearerRestClient(service: string, options: BearerClientOptions): RestClient {
  return new RestClient({
    service,
    url: options.url,
    authorization: `Bearer ${options.token}`,
    timeoutMs: options.timeoutMs ?? 10_000,
    connections: options.connections ?? 8,
  });
}
