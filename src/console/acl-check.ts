// Whether a user of `respgate proxy`'s console may act (kill a client, reset the slowlog or the
// statistics). The proxy answers those commands itself, so no upstream ACL ever sees them; the console
// asks the upstream, the authority on users, with Redis' own question: `ACL DRYRUN <user> <command>`
// (OK, or "User … has no permissions to run …"). Any other answer, or none, means no (docs/console.md).
import { actionCommand, PROXY_ACTIONS, type ProxyActionName } from './proxy-actions.js';

export interface UpstreamRest {
  /** The REST URL of the upstream, without a trailing slash. */
  url: string;
  timeoutMs?: number;
}

/** One REST pipeline call: each command's `result` or `error`. */
async function pipeline(up: UpstreamRest, token: string, commands: string[][]): Promise<{ result?: unknown; error?: string }[]> {
  const res = await fetch(`${up.url}/pipeline`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(commands),
    signal: AbortSignal.timeout(up.timeoutMs ?? 5000),
  });
  if (!res.ok) throw new Error(`the upstream answered HTTP ${res.status}`);
  return (await res.json()) as { result?: unknown; error?: string }[];
}

/**
 * The actions `user` may take, asked with `token`: the proxy's upstream token for an ACL user; in
 * pass-through mode the login's own token, whose user is found by ACL WHOAMI (a token that may not
 * run ACL DRYRUN gets no action).
 */
export async function allowedActions(up: UpstreamRest, token: string, user?: string): Promise<ProxyActionName[]> {
  try {
    let who = user;
    if (who === undefined) {
      const [me] = await pipeline(up, token, [['ACL', 'WHOAMI']]);
      if (typeof me?.result !== 'string') return [];
      who = me.result;
    }
    const answers = await pipeline(
      up,
      token,
      PROXY_ACTIONS.map((action) => ['ACL', 'DRYRUN', who!, ...actionCommand({ action, id: '1' })]),
    );
    return PROXY_ACTIONS.filter((_, i) => answers[i]?.result === 'OK');
  } catch {
    return [];
  }
}
