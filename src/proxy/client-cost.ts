// What each client costs upstream: the service bills per command (and limits request and reply
// sizes), so the proxy counts, per client name and per command, the commands it sent upstream, the
// upstream requests they took and the bytes they carried, and the error replies they got back.
// /metrics (proxy-metrics.ts registerClientCost) and INFO clientcost (local/info.ts) read it.
//
// Fair shares when the batcher coalesces several clients' commands into one /pipeline request:
// - requests: each command of a call of n commands takes 1/n of the request, so a client with m of
//   them is charged m/n requests, and the shares of one call add up to exactly 1;
// - bytes: each command is charged its own size (its arguments as RESP sends them) and its own
//   reply's size, which is what it adds to the request and response bodies; a transaction's
//   commands share its one /multi-exec request the same way.
//
// Label sets stay bounded: the first `maxClients` distinct names get their own series; later names
// are counted under `other` (a series, once created, never moves, so every counter stays monotonic).
// Commands are named from the command table, which is bounded already.

import { replyHead, type Reply } from '../resp/reply-pieces.js';
import { isSplitAnswer, rangeLength, type SplitAnswer } from '../resp/resp2-splitter.js';

/** What the cost of one upstream call is charged to: a connection's names (BatchSource). */
export interface CostOwner {
  /** CLIENT SETNAME / HELLO SETNAME ('' when unset). */
  readonly name?: string;
  /** CLIENT SETINFO lib-name ('' when unset). */
  readonly libName?: string;
}

/** One command of a call: its arguments, its table name and its RESP size when known (CommandItem has them). */
export interface CostedCommand {
  readonly args: Buffer[];
  readonly name?: string;
  readonly bytes?: number;
}

export interface CostCounters {
  commands: number;
  requests: number;
  bytesSent: number;
  bytesReceived: number;
  errors: number;
}

/** Clients without a name or lib-name. */
export const UNNAMED = '(unnamed)';
/** The shared pollers of blocking commands (blocking-hub.ts) work for many clients at once. */
export const BLOCKING_POLLER = '(blocking-poller)';
export const OTHER = 'other';
export const DEFAULT_MAX_CLIENT_LABELS = 20;

const MINUS = 0x2d;

/** The client label: the connection's name, else its library's name, else `(unnamed)`. */
export function costLabel(owner: CostOwner | undefined): string {
  if (owner === undefined) return BLOCKING_POLLER;
  if (owner.name) return owner.name;
  if (owner.libName) return owner.libName;
  return UNNAMED;
}

/** The bytes of a command as a RESP multibulk request (`*n`, then `$len` and the bytes of each argument). */
export function requestBytes(args: readonly Buffer[]): number {
  let n = digits(args.length) + 3;
  for (let i = 0; i < args.length; i++) n += digits(args[i].length) + 5 + args[i].length;
  return n;
}

/** Decimal digits of a non-negative integer (no string or division per argument on the hot path). */
function digits(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10_000) return 4;
  let d = 5;
  for (let p = 100_000; n >= p; p *= 10) d++;
  return d;
}

const zero = (): CostCounters => ({ commands: 0, requests: 0, bytesSent: 0, bytesReceived: 0, errors: 0 });

export class ClientCost {
  /** Every name's exact totals, for INFO (bounded: past `maxTracked` names, new ones count as `other`). */
  private readonly byName = new Map<string, CostCounters>();
  /** The /metrics series: admitted names and `other`. */
  private readonly series = new Map<string, CostCounters>();
  private readonly byCommand = new Map<string, CostCounters>();
  private namedSeries = 0;
  /** The counters charge() used last, by client label and by command name. */
  private readonly last: {
    label: string;
    tracked: CostCounters | undefined;
    series: CostCounters | undefined;
    name: string;
    command: CostCounters | undefined;
  } = { label: '', tracked: undefined, series: undefined, name: '', command: undefined };

  constructor(
    readonly maxClients = DEFAULT_MAX_CLIENT_LABELS,
    private readonly maxTracked = 10_000,
  ) {}

  /**
   * One upstream call: `owners[i]` sent `items[i]` (undefined: the shared blocking pollers), `replies[i]`
   * is its RESP2 reply (undefined when the call's outcome had none per command). The batcher's items
   * (CommandItem) are read as they are: no array of names and sizes per call. An item's `bytes` is
   * requestBytes(args) measured when it was read: walking a call's arguments again here, long after they
   * were read, cost more than the rest of the accounting (cache misses; bench/README.md, issue 25).
   * `nameOf` names an item that has no name.
   */
  call(
    owners: readonly (CostOwner | undefined)[],
    items: readonly CostedCommand[],
    replies: readonly (Reply | undefined)[] | SplitAnswer,
    nameOf: (args: readonly Buffer[]) => string,
  ): void {
    const n = items.length;
    // An answer as ranges (SplitAnswer): its replies' sizes are the distances of their ends, none an error.
    const ends = isSplitAnswer(replies) ? replies.ends : undefined;
    const list = replies as readonly (Reply | undefined)[];
    const share = 1 / n;
    // A call's commands come in runs from the same connection, often of the same command: each run
    // is summed here and charged once (charge: no map lookup while the label and command repeat).
    let start = 0;
    let sent = 0;
    let received = 0;
    let errors = 0;
    let name = n > 0 ? (items[0].name ?? nameOf(items[0].args)) : '';
    for (let i = 0; i < n; i++) {
      const item = items[i];
      sent += item.bytes ?? requestBytes(item.args);
      const reply = ends === undefined ? list[i] : undefined;
      if (ends !== undefined) received += rangeLength(ends, i);
      else if (reply !== undefined) {
        received += reply.length;
        if (replyHead(reply)[0] === MINUS) errors++;
      }
      const next = i + 1 < n ? (items[i + 1].name ?? nameOf(items[i + 1].args)) : '';
      if (i + 1 < n && owners[i + 1] === owners[i] && next === name) continue;
      const count = i + 1 - start;
      this.charge(costLabel(owners[i]), name, count, count * share, sent, received, errors);
      start = i + 1;
      sent = received = errors = 0;
      name = next;
    }
  }

  /**
   * Adds one run to its client's INFO totals and series and to its command's series. The counters
   * of the last label and command are kept at hand: at -P 16 a call holds a run per connection, and
   * most connections share a label (their name, or `(unnamed)`) and a command (bench/batcher.bench.ts).
   */
  private charge(label: string, name: string, commands: number, requests: number, sent: number, received: number, errors: number): void {
    const last = this.last;
    if (last.tracked === undefined || label !== last.label) {
      last.label = label;
      last.tracked = this.tracked(label);
      last.series = this.seriesFor(label);
    }
    if (last.command === undefined || name !== last.name) {
      last.name = name;
      last.command = entry(this.byCommand, name);
    }
    add(last.tracked, commands, requests, sent, received, errors);
    add(last.series!, commands, requests, sent, received, errors);
    add(last.command, commands, requests, sent, received, errors);
  }

  /** The /metrics series by client label (at most maxClients names and `other`). */
  clientSeries(): ReadonlyMap<string, CostCounters> {
    return this.series;
  }

  commandSeries(): ReadonlyMap<string, CostCounters> {
    return this.byCommand;
  }

  /** INFO clientcost: the `top` most expensive names by commands, then `other` for the rest. */
  topClients(top = this.maxClients): Array<[string, CostCounters]> {
    const sorted = [...this.byName].sort((a, b) => b[1].commands - a[1].commands || (a[0] < b[0] ? -1 : 1));
    const head = sorted.filter(([name]) => name !== OTHER).slice(0, top);
    const kept = new Set(head.map(([name]) => name));
    const rest = zero();
    let restUsed = false;
    for (const [name, c] of sorted) {
      if (kept.has(name)) continue;
      restUsed = true;
      rest.commands += c.commands;
      rest.requests += c.requests;
      rest.bytesSent += c.bytesSent;
      rest.bytesReceived += c.bytesReceived;
      rest.errors += c.errors;
    }
    return restUsed ? [...head, [OTHER, rest]] : head;
  }

  /** CONFIG RESETSTAT clears INFO's totals; the /metrics counters keep counting (Prometheus counters never go back). */
  resetInfo(): void {
    this.byName.clear();
    this.last.tracked = undefined; // it was one of byName's
  }

  private tracked(label: string): CostCounters {
    const c = this.byName.get(label);
    if (c) return c;
    return entry(this.byName, this.byName.size < this.maxTracked ? label : OTHER);
  }

  private seriesFor(label: string): CostCounters {
    const c = this.series.get(label);
    if (c) return c;
    if (label === OTHER || this.namedSeries >= this.maxClients) return entry(this.series, OTHER);
    this.namedSeries++;
    return entry(this.series, label);
  }
}

function entry(map: Map<string, CostCounters>, key: string): CostCounters {
  let c = map.get(key);
  if (!c) map.set(key, (c = zero()));
  return c;
}

function add(c: CostCounters, commands: number, requests: number, sent: number, received: number, errors: number): void {
  c.commands += commands;
  c.requests += requests;
  c.bytesSent += sent;
  c.bytesReceived += received;
  c.errors += errors;
}

/** A name as an INFO field may carry it (no `:`, `,`, `=` or space, which separate INFO's fields). */
export function infoName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.\-/@()]/g, '_');
}

/** `# Clientcost` lines: one per client (top N and `other`), then one per command. */
export function clientCostLines(cost: ClientCost): Array<[string, string]> {
  const fields = (c: CostCounters) =>
    `commands=${c.commands},requests=${c.requests.toFixed(3)},bytes_sent=${c.bytesSent},bytes_received=${c.bytesReceived},errors=${c.errors}`;
  const clients = cost.topClients();
  const lines: Array<[string, string]> = [['clientcost_clients', String(clients.length)]];
  for (const [name, c] of clients) lines.push([`client_${infoName(name)}`, fields(c)]);
  const commands = [...cost.commandSeries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, c] of commands) lines.push([`cmdcost_${name}`, fields(c)]);
  return lines;
}
