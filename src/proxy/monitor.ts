// MONITOR: what the proxy's clients send, printed as redis-server prints it for its own clients:
// `+1721284005.242090 [0 127.0.0.1:5000] "set" "k" "v"`, the client's own address and arguments
// (sdscatrepr quoting), commands the proxy answers itself included (PING, CLIENT SETNAME, UNWATCH),
// AUTH and HELLO AUTH passwords as `(redacted)`, commands queued in MULTI when EXEC runs them, and no
// line for rejected commands (unknown, arity, NOAUTH …) nor for admin commands (CONFIG, MONITOR …),
// as Redis 7.0's call() feeds its monitors.
//
// The lines are the proxy's: commands of other clients of the upstream (other proxies, REST callers)
// are not shown (docs/decisions.md). MONITOR opens the upstream's /monitor stream, so the token's
// permission decides as before (NOPERM for a token without it) and `+OK` comes when it is confirmed;
// the stream stays open while the client monitors, for one thing only: the `[db lua]` lines of the
// commands the proxy's clients' scripts run (monitor-scripts.ts).
import { performance } from 'node:perf_hooks';
import type { CommandSpec } from '../commands/table.js';
import { ResilientEventStream } from '../upstream/event-stream.js';
import type { Connection, Monitors, MonitorTarget, ServerState } from '../server/context.js';
import type { PushPort, PushUpstream } from './context.js';
import { errorReply, OK } from '../server/replies.js';
import { SCRIPT_COMMANDS, ScriptLines, scriptKey } from './monitor-scripts.js';

/** The MONITOR connections of one proxy (ServerState.monitors), and what MULTI queues while someone monitors. */
export class MonitorHub implements Monitors {
  private readonly monitors = new Set<MonitorTarget>();
  /** Commands queued in MULTI, shown when EXEC runs them (keyed by connection). */
  private readonly queued = new WeakMap<object, Buffer[][]>();
  /** The order of the lines, with the `lua` lines of scripts (monitor-scripts.ts). */
  private readonly scripts = new ScriptLines((line) => this.emit(line), timestamp);
  /** The monitor whose upstream stream gives the `lua` lines (one stream is enough: they all show the same). */
  private source: MonitorFeed | undefined;

  add(target: MonitorTarget): void {
    this.monitors.add(target);
  }

  delete(target: MonitorTarget): void {
    this.monitors.delete(target);
    if (this.monitors.size === 0) this.scripts.clear();
  }

  /** A command ran (or started): every monitor gets its line, unless Redis hides it (admin commands). */
  feed(conn: Connection, spec: CommandSpec, args: Buffer[]): void {
    if (this.monitors.size === 0 || spec.flags.has('admin')) return;
    const line = monitorLine(conn.address, args, spec, undefined, conn.db);
    const key = SCRIPT_COMMANDS.has(spec.name) && this.streaming() ? scriptKey(spec.name, args.map(quote)) : undefined;
    this.scripts.show(line, conn.db, key);
  }

  /** An event of a monitor's upstream stream (only one monitor's stream is read). */
  upstreamLine(from: MonitorFeed, data: string): void {
    if (this.source !== from && this.source?.streaming && this.monitors.has(this.source)) return;
    this.source = from;
    this.scripts.upstream(data);
  }

  /** Whether some monitor's upstream stream is open, so scripts' `lua` lines will come. */
  private streaming(): boolean {
    for (const m of this.monitors) if (m instanceof MonitorFeed && m.streaming) return true;
    return false;
  }

  private emit(line: Buffer): void {
    for (const m of this.monitors) {
      if (m.open) m.push(line);
      else this.monitors.delete(m);
    }
  }

  /** MULTI … EXEC: a queued command is shown when EXEC runs it. */
  queue(conn: object, args: Buffer[]): void {
    if (this.monitors.size === 0) return;
    let list = this.queued.get(conn);
    if (!list) this.queued.set(conn, (list = []));
    list.push(args);
  }

  /** The queued commands of `conn` (EXEC shows them before its own line; DISCARD and MULTI drop them). */
  take(conn: object): Buffer[][] {
    const list = this.queued.get(conn) ?? [];
    this.queued.delete(conn);
    return list;
  }
}

const REDACTED = Buffer.from('(redacted)');

/** `+<sec>.<usec> [<db> <addr>] "arg" …\r\n`, Redis' replicationFeedMonitors line (`db`: the client's selected database after the command). */
export function monitorLine(
  address: string,
  args: Buffer[],
  spec?: CommandSpec,
  nowMs = performance.timeOrigin + performance.now(),
  db = 0,
): Buffer {
  const shown = spec ? redacted(spec.name, args) : args;
  return Buffer.from(`+${timestamp(nowMs)} [${db} ${address}] ${shown.map(quote).join(' ')}\r\n`, 'latin1');
}

/** `<sec>.<usec>` of a monitor line. */
export function timestamp(nowMs = performance.timeOrigin + performance.now()): string {
  const sec = Math.floor(nowMs / 1000);
  const usec = Math.floor((nowMs - sec * 1000) * 1000);
  return `${sec}.${String(usec).padStart(6, '0')}`;
}

/** AUTH's arguments, and HELLO's AUTH username and password, as Redis hides them (redactClientCommandArgument; MONITOR, SLOWLOG). */
export function redacted(name: string, args: Buffer[]): Buffer[] {
  if (name === 'auth') return args.map((a, i) => (i === 0 ? a : REDACTED));
  if (name !== 'hello') return args;
  const out = [...args];
  for (let i = 2; i < out.length; i++) {
    if (out[i].toString('latin1').toLowerCase() === 'auth' && i + 2 < out.length) {
      out[i + 1] = REDACTED;
      out[i + 2] = REDACTED;
      i += 2;
    }
  }
  return out;
}

/** sdscatrepr: printable bytes as they are, `\\ \" \n \r \t \a \b`, every other byte `\xhh`. */
export function quote(arg: Buffer): string {
  let s = '"';
  for (const c of arg) {
    if (c === 0x5c) s += '\\\\';
    else if (c === 0x22) s += '\\"';
    else if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === 0x09) s += '\\t';
    else if (c === 0x07) s += '\\a';
    else if (c === 0x08) s += '\\b';
    else if (c >= 0x20 && c <= 0x7e) s += String.fromCharCode(c);
    else s += '\\x' + c.toString(16).padStart(2, '0');
  }
  return s + '"';
}

/** MONITOR of one connection: `+OK` once the upstream allowed it, then the proxy's lines. */
export class MonitorFeed implements MonitorTarget {
  private stream: ResilientEventStream | undefined;
  private readonly fill: (reply: Buffer) => void;
  private stopped = false;
  /** The upstream stream is confirmed and connected (its `lua` lines reach the hub). */
  private connected = false;

  constructor(
    private readonly port: PushPort,
    private readonly server: ServerState,
    upstream: PushUpstream | undefined,
    /** The upstream refused (or could not be reached): the connection is not monitoring. */
    private readonly onStopped: () => void,
  ) {
    this.fill = port.reserve();
    if (!upstream) {
      this.start();
      return;
    }
    const { log } = upstream;
    this.stream = new ResilientEventStream(
      upstream.client,
      { kind: 'monitor' },
      {
        onConfirmed: (again) => {
          this.connected = true;
          if (!again) this.start();
        },
        onEvent: (data) => {
          if (this.server.monitors instanceof MonitorHub) this.server.monitors.upstreamLine(this, data);
        },
        onFailed: (error) => {
          this.stream = undefined;
          this.fill(errorReply(error));
          this.onStopped();
        },
        // Reconnected by the stream itself; scripts run meanwhile show no `lua` lines.
        onDropped: () => {
          this.connected = false;
        },
        onRefused: (error) => {
          if (this.stream?.confirmed) {
            // Only the `lua` lines came from it: the client keeps monitoring the proxy's lines.
            log.warn({ conn: port.id, client: port.address, error }, 'upstream refused the monitor stream again: no more script lines');
            return this.closeStream();
          }
          log.error({ conn: port.id, client: port.address, error }, 'upstream refused the monitor stream: closing the client connection');
          port.destroy();
        },
      },
      { confirmTimeoutMs: upstream.confirmTimeoutMs, credential: port.credential },
    );
  }

  get open(): boolean {
    return !this.stopped && this.port.open;
  }

  /** Its upstream stream is up: scripts' `lua` lines come through it. */
  get streaming(): boolean {
    return this.connected && this.stream !== undefined && this.open;
  }

  push(line: Buffer): void {
    this.port.push(line);
  }

  /** RESET, QUIT, disconnect. A MONITOR still waiting for the upstream answers +OK (it came first). */
  stop(): void {
    this.stopped = true;
    this.closeStream();
    this.server.monitors.delete(this);
    this.fill(OK);
  }

  private start(): void {
    if (this.stopped) return;
    this.fill(OK);
    this.server.monitors.add(this);
  }

  private closeStream(): void {
    this.connected = false;
    this.stream?.close();
    this.stream = undefined;
  }
}
