// How records are shown by the API (the shapes of the service's responses).
import type { DlqEntry, UrlGroup } from './records.js';

export function groupView(g: UrlGroup) {
  return {
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
    name: g.name,
    endpoints: g.endpoints,
    ...(g.headers ? { headers: g.headers } : {}),
  };
}

export function dlqView(e: DlqEntry) {
  return {
    ...e.message,
    dlqId: e.dlqId,
    ...(e.responseStatus !== undefined ? { responseStatus: e.responseStatus } : {}),
    ...(e.responseHeader ? { responseHeader: e.responseHeader } : {}),
    ...(e.responseBody !== undefined ? { responseBody: e.responseBody } : {}),
    ...(e.responseBodyBase64 !== undefined ? { responseBodyBase64: e.responseBodyBase64 } : {}),
  };
}

/** DLQ ids are `<ms>-<n>`: their order is the order of arrival. */
export function dlqOrderKey(id: string): [number, number] {
  const [ms, n] = id.split('-');
  return [Number(ms), Number(n)];
}

export function compareKeys(x: [number, number], y: [number, number]): number {
  return x[0] - y[0] || x[1] - y[1];
}
