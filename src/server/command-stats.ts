// INFO commandstats and errorstats as Redis 7.0 keeps them (server.c call(), incrCommandStatsOnError,
// networking.c afterErrorReply), for the commands the proxy runs: a command that ran counts a call
// and its time (a forwarded one from when it was read to its upstream reply), and a failed call when
// it answered an error; a command refused before running (arity, NOAUTH, a state that forbids it, a
// command the proxy does not run) counts a rejected call; every error reply counts under its prefix
// (`-WRONGTYPE …` → WRONGTYPE), an unknown command included (it has no cmdstat line, as in Redis).
// Each command that ran also keeps its latency distribution, for INFO latencystats (latency-histogram.ts).
import { LatencyHistogram, percentileFields } from './latency-histogram.js';

interface CommandCounters {
  calls: number;
  usec: number;
  rejected: number;
  failed: number;
  /** Durations of its calls (latency-tracking yes, Redis 7's default). */
  latency: LatencyHistogram;
}

/** Redis looks for the prefix's end within the first 32 bytes; no space there counts as ERR. */
const PREFIX_SEARCH = 32;
const MINUS = 0x2d;
const BANG = 0x21;

export class CommandStats {
  private readonly commands = new Map<string, CommandCounters>();
  /** The counters counters() found last, and their command. */
  private lastName = '';
  private last: CommandCounters | undefined;
  private readonly errors = new Map<string, number>();
  /** INFO stats total_error_replies. */
  totalErrorReplies = 0;
  /** INFO stats total_commands_processed: every command that ran (Redis' stat_numcommands). */
  totalCalls = 0;
  /** Connections accepted and bytes read and written at the last CONFIG RESETSTAT (INFO counts from there). */
  baseline = { connections: 0, input: 0, output: 0 };

  /** A command that ran; `reply` says whether it failed (an error reply). */
  ran(name: string, usec: number, reply: Buffer): void {
    const c = this.count(name, usec, 1);
    if (this.countError(reply)) c.failed++;
  }

  /** `count` commands of one name that ran and succeeded, each in `usec`: what `count` ran() calls with a reply that is no error count. */
  ranMany(name: string, usec: number, count: number): void {
    this.count(name, usec, count);
  }

  /** Counts `count` calls of `name` that took `usec` each; returns its counters. */
  private count(name: string, usec: number, count: number): CommandCounters {
    const c = this.counters(name);
    c.calls += count;
    this.totalCalls += count;
    c.usec += count * Math.max(0, Math.round(usec));
    c.latency.recordUsec(usec, count);
    return c;
  }

  /** A command refused before it ran; undefined `name`: an unknown command (only its error counts). */
  rejected(name: string | undefined, reply: Buffer): void {
    const isError = this.countError(reply);
    if (name !== undefined && isError) this.counters(name).rejected++;
  }

  /** CONFIG RESETSTAT. */
  reset(): void {
    this.last = undefined; // one of the cleared counters
    this.commands.clear();
    this.errors.clear();
    this.totalErrorReplies = 0;
    this.totalCalls = 0;
  }

  /** `cmdstat_<name>` lines (server.c genRedisInfoString). */
  commandLines(): Array<[string, string]> {
    return [...this.commands].map(([name, c]) => [
      `cmdstat_${name}`,
      `calls=${c.calls},usec=${c.usec},usec_per_call=${(c.calls ? c.usec / c.calls : 0).toFixed(2)},rejected_calls=${c.rejected},failed_calls=${c.failed}`,
    ]);
  }

  /** `latency_percentiles_usec_<name>` lines, for the commands that ran (server.c genRedisInfoString). */
  latencyLines(): Array<[string, string]> {
    return [...this.commands]
      .filter(([, c]) => c.latency.total > 0)
      .map(([name, c]) => [`latency_percentiles_usec_${name}`, percentileFields(c.latency)]);
  }

  /** `errorstat_<PREFIX>` lines, sorted as Redis' radix tree lists them. */
  errorLines(): Array<[string, string]> {
    return [...this.errors]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([prefix, count]) => [`errorstat_${prefix}`, `count=${count}`]);
  }

  private counters(name: string): CommandCounters {
    // A pipeline's replies come in runs of one command (`-P 16`: 16 GETs of a client): no map lookup for those.
    if (name === this.lastName && this.last !== undefined) return this.last;
    let c = this.commands.get(name);
    if (!c) this.commands.set(name, (c = { calls: 0, usec: 0, rejected: 0, failed: 0, latency: new LatencyHistogram() }));
    this.lastName = name;
    this.last = c;
    return c;
  }

  /** True when `reply` is an error (RESP2 `-`, RESP3 blob error `!`); it is then counted. */
  private countError(reply: Buffer): boolean {
    const prefix = errorPrefix(reply);
    if (prefix === undefined) return false;
    this.totalErrorReplies++;
    this.errors.set(prefix, (this.errors.get(prefix) ?? 0) + 1);
    return true;
  }
}

/** The error's first word (`WRONGTYPE`), `ERR` when none ends within 32 bytes; undefined for a reply that is no error. */
export function errorPrefix(reply: Buffer): string | undefined {
  let start: number;
  if (reply[0] === MINUS) start = 1;
  else if (reply[0] === BANG) start = reply.indexOf(10) + 1;
  else return undefined;
  const end = Math.min(reply.length, start + PREFIX_SEARCH - 1);
  for (let i = start; i < end; i++) {
    if (reply[i] === 0x20) return i > start ? reply.toString('latin1', start, i) : 'ERR';
    if (reply[i] === 13) break;
  }
  return 'ERR';
}
