// HTTP client of Area C (Upstash Vector REST API): one method per endpoint, JSON in and out.
// Every call is a POST with a JSON body, as @upstash/vector sends them; a namespace is the optional
// last path segment ("" = the default namespace).
import { bearerRestClient, RestClient, RestError, segment, type BearerClientOptions } from './rest-json.js';

export interface SparseVector {
  indices: number[];
  values: number[];
}

export interface VectorRecord {
  id: string;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata?: Record<string, unknown>;
  data?: string;
}

export interface ScoredRecord extends VectorRecord {
  score: number;
}

export interface Include {
  includeMetadata?: boolean;
  includeVectors?: boolean;
  includeData?: boolean;
}

export interface VectorQuery extends Include {
  vector?: number[];
  sparseVector?: SparseVector;
  topK: number;
  filter?: string;
  weightingStrategy?: 'IDF';
  fusionAlgorithm?: 'RRF' | 'DBSF';
}

export interface DataQuery extends Include {
  data: string;
  topK: number;
  filter?: string;
  weightingStrategy?: 'IDF';
  fusionAlgorithm?: 'RRF' | 'DBSF';
  queryMode?: 'HYBRID' | 'DENSE' | 'SPARSE';
}

export interface RangePage {
  nextCursor: string;
  vectors: VectorRecord[];
}

export interface IndexInfo {
  vectorCount: number;
  pendingVectorCount: number;
  indexSize: number;
  dimension: number;
  similarityFunction: string;
  indexType?: 'DENSE' | 'SPARSE' | 'HYBRID';
  denseIndex?: { dimension: number; similarityFunction: string; embeddingModel?: string };
  sparseIndex?: { embeddingModel?: string };
  namespaces: Record<string, { vectorCount: number; pendingVectorCount: number }>;
}

/**
 * The index's operations called in this very process (the dev stack: its platform and side port share
 * it): the operation, the namespace (undefined: none in the path) and the body, no HTTP in between.
 * A refusal rejects with an error carrying the HTTP `status` the REST answer would have had.
 */
export type LocalVectorApi = (op: string, namespace: string | undefined, body: unknown) => Promise<unknown>;

export interface VectorClientOptions extends BearerClientOptions {
  local?: LocalVectorApi;
}

const ns = (namespace: string) => (namespace === '' ? '' : `/${segment(namespace)}`);

export class VectorClient {
  private readonly rest: RestClient;
  private readonly local: LocalVectorApi | undefined;

  constructor(options: VectorClientOptions) {
    this.rest = bearerRestClient('vector service', options);
    this.local = options.local;
  }

  get origin(): string {
    return this.rest.origin;
  }

  private async post<T>(op: string, namespace: string | undefined, body: unknown): Promise<T> {
    if (this.local) return this.callLocal<T>(this.local, op, namespace, body);
    const answer = await this.rest.call<{ result: T }>({
      method: 'POST',
      path: `/${op}${namespace === undefined ? '' : ns(namespace)}`,
      json: body ?? {},
    });
    return answer && typeof answer === 'object' && 'result' in answer ? answer.result : (answer as T);
  }

  /** The same call in-process: the service's refusals become the RestError the HTTP answer would give. */
  private async callLocal<T>(local: LocalVectorApi, op: string, namespace: string | undefined, body: unknown): Promise<T> {
    try {
      return (await local(op, namespace, body ?? {})) as T;
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      throw new RestError((err as Error).message ?? String(err), typeof status === 'number' ? status : 500, 'vector service');
    }
  }

  upsert(namespace: string, records: VectorRecord[]): Promise<string> {
    return this.post('upsert', namespace, records);
  }

  upsertData(namespace: string, records: { id: string; data: string; metadata?: Record<string, unknown> }[]): Promise<string> {
    return this.post('upsert-data', namespace, records);
  }

  query(namespace: string, query: VectorQuery): Promise<ScoredRecord[]> {
    return this.post('query', namespace, query);
  }

  queryData(namespace: string, query: DataQuery): Promise<ScoredRecord[]> {
    return this.post('query-data', namespace, query);
  }

  fetch(namespace: string, what: ({ ids: string[] } | { prefix: string }) & Include): Promise<(VectorRecord | null)[]> {
    return this.post('fetch', namespace, what);
  }

  range(namespace: string, page: { cursor: string; limit: number; prefix?: string } & Include): Promise<RangePage> {
    return this.post('range', namespace, page);
  }

  delete(namespace: string, what: { ids: string[] } | { prefix: string } | { filter: string }): Promise<{ deleted: number }> {
    return this.post('delete', namespace, what);
  }

  update(
    namespace: string,
    change: {
      id: string;
      vector?: number[];
      sparseVector?: SparseVector;
      data?: string;
      metadata?: Record<string, unknown>;
      metadataUpdateMode?: 'OVERWRITE' | 'PATCH';
    },
  ): Promise<{ updated: number }> {
    return this.post('update', namespace, change);
  }

  reset(namespace: string): Promise<string> {
    return this.post('reset', namespace, {});
  }

  random(namespace: string): Promise<VectorRecord | null> {
    return this.post('random', namespace, {});
  }

  info(): Promise<IndexInfo> {
    return this.post('info', undefined, {});
  }

  listNamespaces(): Promise<string[]> {
    return this.post('list-namespaces', undefined, {});
  }

  deleteNamespace(namespace: string): Promise<string> {
    return this.post('delete-namespace', namespace, {});
  }

  renameNamespace(namespace: string, newNamespace: string, deleteExisting = false): Promise<{ renamed: boolean }> {
    return this.post('rename-namespace', undefined, { namespace, newNamespace, deleteExisting });
  }

  close(): Promise<void> {
    return this.rest.close();
  }
}
