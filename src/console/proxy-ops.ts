// The console's view of a proxy (the dev stack's, or `respgate proxy`'s own): what any Redis client of
// the proxy could ask it (CLIENT LIST, INFO commandstats, latencystats, stats and clientcost, SLOWLOG GET), asked over
// RESP on one connection of its own, so neither the platform nor the proxy role needs the other's code.
// The console's connection names itself and is left out of the client list it shows.
import { actionCommand, type ProxyAction } from './proxy-actions.js';
import { ReplyError, RespLink, type Reply, type RespEndpoint } from './resp-link.js';

export const CONSOLE_CLIENT_NAME = 'respgate-console';

export interface ProxySnapshot {
  /** Milliseconds since the epoch when it was taken. */
  at: number;
  address: string;
  /** CLIENT LIST, one object of fields per connection (the console's own left out). */
  clients: Record<string, string>[];
  /** INFO commandstats: per command calls, usec, usec_per_call, rejected_calls, failed_calls. */
  commands: Record<string, Record<string, number>>;
  /** INFO latencystats: per command p50, p99 and p99.9 in µs (empty from a proxy without the section). */
  latency: Record<string, Record<string, number>>;
  /** INFO stats, as fields. */
  stats: Record<string, string>;
  /** INFO clientcost: the upstream cost per client name (top 20, then `other`) and per command. */
  cost: UpstreamCost;
  /** SLOWLOG GET: id, time (s), duration (µs), arguments, client address and name. */
  slowlog: { id: number; time: number; durationUsec: number; args: string[]; client: string; name: string }[];
}

/** One `client_<name>:` or `cmdcost_<cmd>:` line of INFO clientcost. */
export interface CostFields {
  commands: number;
  /** Upstream requests, fractional: a coalesced request is shared by its commands. */
  requests: number;
  bytes_sent: number;
  bytes_received: number;
  errors: number;
}

export interface UpstreamCost {
  clients: Record<string, CostFields>;
  commands: Record<string, CostFields>;
}

export class ProxyOps {
  private conn: Promise<RespLink> | undefined;

  constructor(private readonly endpoint: RespEndpoint) {}

  /** Opens the connection now (authenticating): rejects with the proxy's answer, e.g. WRONGPASS. */
  async check(): Promise<void> {
    await this.send([['PING']]);
  }

  async snapshot(): Promise<ProxySnapshot> {
    const replies = await this.send([
      ['CLIENT', 'LIST'],
      ['INFO', 'commandstats'],
      ['INFO', 'latencystats'],
      ['INFO', 'stats'],
      ['INFO', 'clientcost'],
      ['SLOWLOG', 'GET', '20'],
    ]);
    const [clients, commandstats, latencystats, stats, clientcost, slowlog] = replies.map((r) => {
      if (r instanceof ReplyError) throw new Error(`the proxy answered: ${r.message}`);
      return r;
    });
    return {
      at: Date.now(),
      address: `${this.endpoint.host}:${this.endpoint.port}`,
      clients: parseClientList(String(clients)).filter((c) => c.name !== CONSOLE_CLIENT_NAME),
      commands: parseCommandStats(String(commandstats)),
      latency: parseLatencyStats(String(latencystats)),
      stats: parseInfo(String(stats)),
      cost: parseClientCost(String(clientcost)),
      slowlog: (slowlog as unknown[][]).map((e) => ({
        id: Number(e[0]),
        time: Number(e[1]),
        durationUsec: Number(e[2]),
        args: (e[3] as unknown[]).map(String),
        client: String(e[4] ?? ''),
        name: String(e[5] ?? ''),
      })),
    };
  }

  /** Runs an action on this connection: the proxy's reply (`OK`, a count), or throws with its error text. */
  async act(action: ProxyAction): Promise<Reply> {
    const [reply] = await this.send([actionCommand(action)]);
    if (reply instanceof ReplyError) throw new Error(`the proxy answered: ${reply.message}`);
    return reply;
  }

  close(): void {
    void this.conn?.then((c) => c.close()).catch(() => undefined);
    this.conn = undefined;
  }

  private async send(commands: string[][]): Promise<Reply[]> {
    if (!this.conn) {
      this.conn = RespLink.open(this.endpoint).then(async (c) => {
        await c.send([['CLIENT', 'SETNAME', CONSOLE_CLIENT_NAME]]);
        return c;
      });
    }
    const pending = this.conn;
    try {
      const conn = await pending;
      if (conn.closed) throw new Error('closed');
      return await conn.send(commands);
    } catch (err) {
      // Reconnect on the next call (the proxy restarted or dropped the connection).
      if (this.conn === pending) this.conn = undefined;
      throw err;
    }
  }
}

/** `id=1 addr=… name= …\n` lines → one object per line. */
export function parseClientList(text: string): Record<string, string>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const fields: Record<string, string> = {};
      for (const pair of line.trim().split(' ')) {
        const eq = pair.indexOf('=');
        if (eq > 0) fields[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return fields;
    });
}

/** `# Section\r\nkey:value\r\n…` → {key: value}. */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) out[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return out;
}

/** `cmdstat_get:calls=3,usec=40,…` → {get: {calls: 3, usec: 40, …}}. */
export function parseCommandStats(text: string): Record<string, Record<string, number>> {
  return prefixedFields(parseInfo(text), 'cmdstat_');
}

/** `latency_percentiles_usec_get:p50=1.003,p99=…,p99.9=…` → {get: {p50: 1.003, p99: …, 'p99.9': …}}. */
export function parseLatencyStats(text: string): Record<string, Record<string, number>> {
  return prefixedFields(parseInfo(text), 'latency_percentiles_usec_');
}

/**
 * `# Clientcost` → per client and per command. A proxy without the section (an older one) answers
 * an empty INFO, which reads as no cost at all. The console's own connection runs only commands the
 * proxy answers itself, so it costs nothing upstream; it is left out anyway, as in the client list.
 */
export function parseClientCost(text: string): UpstreamCost {
  const info = parseInfo(text);
  const clients = prefixedFields(info, 'client_') as unknown as Record<string, CostFields>;
  delete clients[CONSOLE_CLIENT_NAME];
  return { clients, commands: prefixedFields(info, 'cmdcost_') as unknown as Record<string, CostFields> };
}

/** The INFO fields named `<prefix><name>`, each `k=v,k=v` read into numbers, by name. */
function prefixedFields(info: Record<string, string>, prefix: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [key, value] of Object.entries(info)) {
    if (!key.startsWith(prefix)) continue;
    const fields: Record<string, number> = {};
    for (const pair of value.split(',')) {
      const [k, v] = pair.split('=');
      fields[k] = Number(v);
    }
    out[key.slice(prefix.length)] = fields;
  }
  return out;
}
