// HTTP face of the vector area: /vector/<index>/<operation>[/<namespace>], bearer tokens (Standard and
// Read Only), methods, JSON bodies and the service's error shape {"error": "...", "status": n}.
import type http from 'node:http';
import { platformRequests } from '../../metrics.js';
import { safeEqual } from '../../safe-equal.js';
import { readBody, BodyTooLargeError } from '../http-body.js';
import { VectorError, type VectorIndex } from './vector-index.js';

export interface IndexTokens {
  token: string;
  readonlyToken: string;
}

type Access = 'read' | 'write';

interface Operation {
  access: Access;
  /** Methods the service documents for it; POST is always accepted too (the official SDK sends POST). */
  methods: string[];
  /** Whether a trailing /<namespace> is allowed. */
  namespaced: boolean;
  run(index: VectorIndex, namespace: string, body: unknown, query: URLSearchParams): unknown;
}

/** Writes that add or change vectors: while one is in flight, /info counts it as pending. */
const PENDING_WRITES = new Set(['upsert', 'upsert-data', 'update']);

const OPERATIONS: Record<string, Operation> = {
  upsert: { access: 'write', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.upsert(ns, b) },
  'upsert-data': { access: 'write', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.upsertData(ns, b) },
  update: { access: 'write', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.update(ns, b) },
  delete: { access: 'write', methods: ['DELETE'], namespaced: true, run: (ix, ns, b) => ix.delete(ns, b) },
  reset: { access: 'write', methods: ['DELETE'], namespaced: true, run: (ix, ns, _b, q) => ix.reset(q.has('all') ? undefined : ns) },
  'delete-namespace': { access: 'write', methods: ['DELETE'], namespaced: true, run: (ix, ns) => ix.deleteNamespace(ns) },
  'rename-namespace': { access: 'write', methods: ['POST'], namespaced: false, run: (ix, _ns, b) => ix.renameNamespace(b) },
  query: { access: 'read', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.query(ns, b, false) },
  'query-data': { access: 'read', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.query(ns, b, true) },
  fetch: { access: 'read', methods: ['GET'], namespaced: true, run: (ix, ns, b) => ix.fetch(ns, b) },
  range: { access: 'read', methods: ['GET'], namespaced: true, run: (ix, ns, b) => ix.range(ns, b) },
  random: { access: 'read', methods: ['GET'], namespaced: true, run: (ix, ns) => ix.random(ns) },
  info: { access: 'read', methods: ['GET'], namespaced: false, run: (ix) => ix.info() },
  'list-namespaces': { access: 'read', methods: ['GET'], namespaced: false, run: (ix) => ix.listNamespaces() },
  'resumable-query': { access: 'read', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.startResumable(ns, b, false) },
  'resumable-query-data': { access: 'read', methods: ['POST'], namespaced: true, run: (ix, ns, b) => ix.startResumable(ns, b, true) },
  'resumable-query-next': { access: 'read', methods: ['POST'], namespaced: false, run: (ix, _ns, b) => ix.nextResumable(b) },
  'resumable-query-end': { access: 'read', methods: ['POST'], namespaced: false, run: (ix, _ns, b) => ix.endResumable(b) },
};

/** Operations whose body may be absent (the SDK sends `[]` or nothing). */
const BODYLESS = new Set(['info', 'list-namespaces', 'reset', 'delete-namespace', 'random']);

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendError(res: http.ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message, status });
}

/**
 * One operation called in the platform's own process, without HTTP (the dev stack's vector side port):
 * the same tokens, checks, results and errors (VectorError, with the status the HTTP answer would have).
 * Written bodies and all results are copied, so neither side keeps a reference into the other's objects.
 */
export type LocalVectorCall = (index: string, op: string, namespace: string | undefined, body: unknown, token: string) => Promise<unknown>;

export class VectorHttpApi {
  constructor(
    private readonly indexes: Map<string, { index: VectorIndex; tokens: IndexTokens }>,
    private readonly maxRequestSize: number,
  ) {}

  /** Requests being served now (the background graph building steps back meanwhile). */
  inFlight = 0;

  /**
   * Upserts and updates received but not yet applied, per index and namespace. /info counts them as
   * pending vectors: a client that sends an upsert and, without waiting for its answer, polls /info until
   * nothing is pending (the SDK's own tests do) must not be told "nothing pending" while the upsert's body
   * is still being read. The service accepts a write before it indexes it, so its count covers these too.
   */
  private readonly writesInFlight = new Map<string, Map<string, number>>();

  async handle(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: string): Promise<void> {
    this.inFlight++;
    try {
      await this.route(req, res, path, new URLSearchParams(query));
    } catch (err) {
      if (err instanceof VectorError) return sendError(res, err.status, err.message);
      if (err instanceof BodyTooLargeError)
        return sendError(
          res,
          413,
          `The request body is ${err.actual} bytes, more than the limit of ${this.maxRequestSize} (--max-request-size)`,
        );
      throw err;
    } finally {
      this.inFlight--;
    }
  }

  /** LocalVectorCall: what route() does after reading the body, on a body that is already a value. */
  async invoke(indexName: string, opName: string, namespace: string | undefined, body: unknown, token: string): Promise<unknown> {
    this.inFlight++;
    let status = 200;
    try {
      const entry = this.indexes.get(indexName);
      if (!entry) throw new VectorError(404, `Index '${indexName}' does not exist on this platform`);
      const access = accessOf(token, entry.tokens);
      if (!access) throw new VectorError(401, 'Unauthorized: the token is not valid for this index');
      const op = OPERATIONS[opName];
      if (!op) throw new VectorError(404, `Unknown operation '${opName}'; the vector API has ${Object.keys(OPERATIONS).join(', ')}`);
      if (namespace !== undefined && !op.namespaced) throw new VectorError(404, `${opName} takes no namespace in its path`);
      if (op.access === 'write' && access === 'read')
        throw new VectorError(403, `The ${opName} operation is not allowed with the read-only token; use the index's standard token`);
      // A write may keep parts of its body (metadata); a read keeps nothing of it, so only writes copy it.
      const input = op.access === 'write' ? structuredClone(body) : body;
      return structuredClone(await op.run(entry.index, namespace ?? '', input, new URLSearchParams()));
    } catch (err) {
      status = err instanceof VectorError ? err.status : 500;
      throw err;
    } finally {
      this.inFlight--;
      platformRequests.inc({ area: 'vector', status: String(status) });
    }
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    const parts = path.split('/').slice(1);
    const indexName = decodeSegment(parts[0] ?? '');
    const entry = this.indexes.get(indexName);
    if (!entry) {
      req.resume();
      throw new VectorError(
        404,
        `Index '${indexName}' does not exist on this platform; its indexes are ${[...this.indexes.keys()].join(', ')} (more with --vector-config)`,
      );
    }
    const access = this.authenticate(req, entry.tokens);
    const opName = parts[1] ?? '';
    const op = OPERATIONS[opName];
    if (!op) {
      req.resume();
      throw new VectorError(404, `Unknown operation '${opName}'; the vector API has ${Object.keys(OPERATIONS).join(', ')}`);
    }
    const method = req.method ?? 'GET';
    if (method !== 'POST' && !op.methods.includes(method)) {
      req.resume();
      res.setHeader('Allow', ['POST', ...op.methods.filter((m) => m !== 'POST')].join(', '));
      throw new VectorError(
        405,
        `Method ${method} is not allowed for ${opName}; use ${['POST', ...op.methods.filter((m) => m !== 'POST')].join(' or ')}`,
      );
    }
    const rest = parts.slice(2);
    if (rest.length > 0 && !op.namespaced) {
      req.resume();
      throw new VectorError(404, `${opName} takes no namespace in its path`);
    }
    const namespace = decodeSegment(rest.join('/'));
    if (op.access === 'write' && access === 'read') {
      req.resume();
      throw new VectorError(403, `The ${opName} operation is not allowed with the read-only token; use the index's standard token`);
    }
    const counted = PENDING_WRITES.has(opName) ? this.countWrite(indexName, namespace) : undefined;
    try {
      const result = await this.readAndRun(req, entry.index, op, opName, namespace, query);
      sendJson(res, 200, { result: opName === 'info' ? this.withWritesInFlight(indexName, result) : result });
    } finally {
      counted?.();
    }
  }

  private async readAndRun(
    req: http.IncomingMessage,
    index: Parameters<Operation['run']>[0],
    op: Operation,
    opName: string,
    namespace: string,
    query: URLSearchParams,
  ): Promise<unknown> {
    const raw = await readBody(req, this.maxRequestSize);
    let body: unknown;
    const text = raw.toString('utf8').trim();
    if (text === '') {
      if (!BODYLESS.has(opName))
        throw new VectorError(400, 'Failed to parse the request body as JSON: the body is empty; send a JSON object');
    } else {
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new VectorError(400, `Failed to parse the request body as JSON: ${(err as Error).message}`);
      }
    }
    return op.run(index, namespace, body, query);
  }

  /** Counts one write in flight; the returned function uncounts it. */
  private countWrite(indexName: string, namespace: string): () => void {
    let perNamespace = this.writesInFlight.get(indexName);
    if (!perNamespace) this.writesInFlight.set(indexName, (perNamespace = new Map()));
    perNamespace.set(namespace, (perNamespace.get(namespace) ?? 0) + 1);
    return () => {
      const left = (perNamespace.get(namespace) ?? 1) - 1;
      if (left > 0) perNamespace.set(namespace, left);
      else perNamespace.delete(namespace);
    };
  }

  /** An /info answer with the writes still in flight counted as pending vectors (at least one each). */
  private withWritesInFlight(indexName: string, info: unknown): unknown {
    const perNamespace = this.writesInFlight.get(indexName);
    if (!perNamespace || perNamespace.size === 0 || !info || typeof info !== 'object') return info;
    const out = info as { pendingVectorCount: number; namespaces?: Record<string, { vectorCount: number; pendingVectorCount: number }> };
    for (const [ns, count] of perNamespace) {
      out.pendingVectorCount += count;
      const entry = out.namespaces?.[ns];
      if (entry) entry.pendingVectorCount += count;
    }
    return out;
  }

  private authenticate(req: http.IncomingMessage, tokens: IndexTokens): Access {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m) {
      req.resume();
      throw new VectorError(401, 'Unauthorized: send the index token as "Authorization: Bearer <token>"');
    }
    const access = accessOf(m[1], tokens);
    if (access) return access;
    req.resume();
    throw new VectorError(401, 'Unauthorized: the token is not valid for this index');
  }
}

function accessOf(token: string, tokens: IndexTokens): Access | undefined {
  if (safeEqual(token, tokens.token)) return 'write';
  if (safeEqual(token, tokens.readonlyToken)) return 'read';
  return undefined;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new VectorError(400, `The path segment '${s}' is not valid percent-encoding`);
  }
}
