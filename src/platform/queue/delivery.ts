// One HTTP delivery attempt to an endpoint (undici, keep-alive pool). Never throws: a network error
// or a timeout is an outcome without a response.
import { Agent, request } from 'undici';

export interface EndpointResponse {
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
}

export type AttemptOutcome = { response: EndpointResponse; error?: undefined } | { response?: undefined; error: string };

export class Deliverer {
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 512, pipelining: 1 });

  constructor(private readonly maxResponseBody: number) {}

  async attempt(
    url: string,
    method: string,
    headers: Record<string, string | string[]>,
    body: Buffer,
    timeoutMs: number,
  ): Promise<AttemptOutcome> {
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: method as 'POST',
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        // Past the limit the response body is truncated, as the service truncates callback bodies.
        if (size < this.maxResponseBody) chunks.push(chunk.subarray(0, this.maxResponseBody - size));
        size += chunk.length;
      }
      const out: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        out[canonicalHeader(name)] = Array.isArray(value) ? value : [value];
      }
      return { response: { status: res.statusCode, headers: out, body: Buffer.concat(chunks) } };
    } catch (err) {
      const e = err as Error & { code?: string };
      const why =
        e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
          ? `the endpoint did not answer within the timeout of ${timeoutMs} ms`
          : `${e.code ?? e.name}: ${e.message}`;
      return { error: why };
    }
  }

  /** `abandon`: cut the requests still in flight instead of waiting for them. */
  close(abandon = false): Promise<void> {
    return abandon ? this.agent.destroy() : this.agent.close();
  }
}

/** content-type, CONTENT-TYPE → Content-Type, as Go's http.Header (the service's) writes names. */
export function canonicalHeader(name: string): string {
  // Go leaves a name with a character outside the token set (a space...) as it is.
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}
