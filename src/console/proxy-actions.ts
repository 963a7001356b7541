// What the Proxy page may do besides looking (docs/console.md): kill a client, reset the slowlog, reset
// the statistics. Each is one Redis command sent on the console's connection to the proxy, so the proxy
// answers it as it would answer redis-cli; who may ask is decided by the server of the page.
import type http from 'node:http';

export const PROXY_ACTIONS = ['client-kill', 'slowlog-reset', 'resetstat'] as const;
export type ProxyActionName = (typeof PROXY_ACTIONS)[number];

export interface ProxyAction {
  action: ProxyActionName;
  /** client-kill: the CLIENT LIST id of the connection. */
  id?: string;
}

/** The Redis command of an action. */
export function actionCommand(a: ProxyAction): string[] {
  if (a.action === 'client-kill') return ['CLIENT', 'KILL', 'ID', a.id!];
  if (a.action === 'slowlog-reset') return ['SLOWLOG', 'RESET'];
  return ['CONFIG', 'RESETSTAT'];
}

/** The JSON body of POST /console/api/proxy/action, checked: `{"action": "client-kill", "id": "12"}`. */
export async function readAction(req: http.IncomingMessage): Promise<ProxyAction | { error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 4096) return { error: 'the action body is larger than 4 KB' };
    chunks.push(chunk);
  }
  return parseAction(Buffer.concat(chunks).toString('utf8'));
}

export function parseAction(text: string): ProxyAction | { error: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { error: 'the action body is not JSON: {"action": "client-kill", "id": "12"}' };
  }
  const { action, id } = (body ?? {}) as { action?: unknown; id?: unknown };
  if (typeof action !== 'string' || !(PROXY_ACTIONS as readonly string[]).includes(action))
    return { error: `unknown action ${JSON.stringify(action)}: one of ${PROXY_ACTIONS.join(', ')}` };
  if (action !== 'client-kill') return { action: action as ProxyActionName };
  if (typeof id !== 'string' || !/^\d{1,19}$/.test(id))
    return { error: 'client-kill needs the client id: {"action": "client-kill", "id": "12"}' };
  return { action, id };
}
