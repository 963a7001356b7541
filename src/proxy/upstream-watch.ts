// What an operator sees of the upstream: a check at start (one PING with the token) that says clearly
// whether the upstream is unreachable, refuses the token or answers something other than Redis
// replies, and keeps checking in the background instead of exiting; readiness for /readyz; and the
// upstream errors commands meet, logged at debug one by one (command name only, never arguments) and
// at warn once per interval per kind, with a count.
import type { Logger } from '../logger.js';

/** Kinds of upstream failure, from the error texts the upstream client makes (upstream/kv-errors.ts). */
export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'connection' | 'auth' | 'malformed' | 'server_error' | 'refused';

const KINDS: ReadonlyArray<[string, UpstreamErrorKind]> = [
  ['-ERR upstream timed out', 'timeout'],
  ['-ERR upstream unavailable', 'unreachable'],
  ['-ERR upstream connection failed', 'connection'],
  ['-ERR upstream authentication failed', 'auth'],
  ['-ERR upstream sent a malformed answer', 'malformed'],
  ['-ERR upstream failed', 'server_error'],
  ['-ERR upstream refused the request', 'refused'],
].map(([p, k]) => [p, k as UpstreamErrorKind]);
const PREFIX = Buffer.from('-ERR upstream ');

/** The kind of an upstream failure, or undefined for any other reply (including the upstream's own command errors). */
export function upstreamErrorKind(reply: Buffer): UpstreamErrorKind | undefined {
  if (reply.length < PREFIX.length || reply[0] !== 0x2d || reply.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length) !== 0)
    return undefined;
  const text = reply.toString('latin1', 0, Math.min(reply.length, 64));
  for (const [prefix, kind] of KINDS) if (text.startsWith(prefix)) return kind;
  return undefined;
}

/** Failures that say the upstream as a whole is not usable (not one command's problem). */
const NOT_READY: ReadonlySet<UpstreamErrorKind> = new Set(['timeout', 'unreachable', 'connection', 'auth', 'malformed', 'server_error']);

export interface UpstreamWatchOptions {
  /** One PING with the token: the raw RESP2 reply (the upstream client never rejects). */
  ping: () => Promise<Buffer>;
  log: Logger;
  /** Origin of the upstream, for log lines (never the token). */
  origin: string;
  /** Warn lines per kind of failure: at most one per interval. */
  intervalMs?: number;
  /** Background re-checks while the upstream is not ready: first delay, doubling up to the maximum. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Each failure by kind (metrics). */
  onError?: (kind: UpstreamErrorKind) => void;
}

export class UpstreamWatch {
  private readyNow = false;
  private lastProblem = 'not checked yet';
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay: number;
  private readonly windows = new Map<UpstreamErrorKind, { count: number; commands: Map<string, number>; timer: NodeJS.Timeout }>();
  private stopped = false;
  private readonly intervalMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;

  constructor(private readonly o: UpstreamWatchOptions) {
    this.intervalMs = o.intervalMs ?? 10_000;
    this.retryMinMs = o.retryMinMs ?? 1000;
    this.retryMaxMs = o.retryMaxMs ?? 30_000;
    this.retryDelay = this.retryMinMs;
  }

  get ready(): boolean {
    return this.readyNow;
  }

  /** Why the upstream is not ready (for /readyz); empty when ready. */
  get problem(): string {
    return this.readyNow ? '' : this.lastProblem;
  }

  /** The check at start: logs the outcome; on failure keeps checking in the background. Never rejects. */
  async start(): Promise<boolean> {
    const ok = await this.check();
    if (ok) this.o.log.info({ upstream: this.o.origin }, 'upstream reachable: PING answered with the token');
    else {
      this.o.log.error(
        { upstream: this.o.origin, problem: this.lastProblem },
        `upstream check failed: ${this.lastProblem}; commands fail until it answers, checking again in the background`,
      );
      this.scheduleRetry();
    }
    return ok;
  }

  /**
   * The upstream replies of one call: updates readiness, counts and logs failures by kind. `replies`
   * undefined: one per command and none an error (batcher.ts BatcherOptions.observe).
   */
  observe(commands: readonly Buffer[][], replies: readonly Buffer[] | undefined): void {
    let failed = false;
    for (let i = 0; replies !== undefined && i < replies.length; i++) {
      const kind = upstreamErrorKind(replies[i]);
      if (kind === undefined) continue;
      const name = commands[i]?.[0]?.toString('latin1').toLowerCase() ?? '?';
      this.failure(kind, name, replies[i]);
      if (NOT_READY.has(kind)) failed = true;
    }
    if (failed && this.readyNow) {
      this.readyNow = false;
      this.lastProblem = 'upstream calls are failing (see the warn lines)';
      this.scheduleRetry();
    } else if (!failed && commands.length > 0 && !this.readyNow && this.retryTimer === undefined) {
      this.markReady();
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    for (const w of this.windows.values()) clearTimeout(w.timer);
    this.windows.clear();
  }

  private async check(): Promise<boolean> {
    const reply = await this.o.ping();
    // PONG as a status (resp2) or, from an upstream that answers JSON, as the converted string.
    const text0 = reply.toString('latin1');
    if (text0 === '+PONG\r\n' || text0 === '$4\r\nPONG\r\n') {
      this.readyNow = true;
      this.lastProblem = '';
      return true;
    }
    this.readyNow = false;
    const text =
      reply[0] === 0x2d
        ? reply.toString('utf8', 1).trimEnd()
        : `unexpected answer to PING: ${JSON.stringify(reply.toString('utf8', 0, 80))}`;
    this.lastProblem = text.replace(/^ERR /, '');
    return false;
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      void this.check().then((ok) => {
        this.retryTimer = undefined;
        if (this.stopped) return;
        if (ok) return this.markReady();
        this.o.log.warn({ upstream: this.o.origin, problem: this.lastProblem, nextCheckMs: this.retryDelay }, 'upstream still failing');
        this.retryDelay = Math.min(this.retryDelay * 2, this.retryMaxMs);
        this.scheduleRetry();
      });
    }, this.retryDelay);
    this.retryTimer.unref();
  }

  private markReady(): void {
    this.readyNow = true;
    this.lastProblem = '';
    this.retryDelay = this.retryMinMs;
    this.o.log.info({ upstream: this.o.origin }, 'upstream reachable again');
  }

  private failure(kind: UpstreamErrorKind, command: string, reply: Buffer): void {
    this.o.onError?.(kind);
    this.o.log.debug({ kind, command }, 'upstream error');
    const open = this.windows.get(kind);
    if (open) {
      open.count++;
      open.commands.set(command, (open.commands.get(command) ?? 0) + 1);
      return;
    }
    // The first failure of a kind is logged at once, with the error text (the client redacts tokens).
    this.o.log.warn({ kind, command, error: reply.toString('utf8', 1).trimEnd() }, `upstream error (${kind})`);
    const timer = setTimeout(() => {
      const w = this.windows.get(kind);
      this.windows.delete(kind);
      if (w && w.count > 0) {
        this.o.log.warn(
          { kind, count: w.count, intervalMs: this.intervalMs, commands: Object.fromEntries(w.commands) },
          `upstream error (${kind}) ×${w.count} more in the last ${this.intervalMs / 1000} s`,
        );
      }
    }, this.intervalMs);
    timer.unref();
    this.windows.set(kind, { count: 0, commands: new Map(), timer });
  }
}
