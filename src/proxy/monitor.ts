// MONITOR: what the proxy's clients send, printed as redis-server prints it for its own clients:
// `+1721284005.242090 [0 127.0.0.1:5000] "set" "k" "v"`, the client's own address and arguments
// (sdscatrepr quoting), commands the proxy answers itself included (PING, CLIENT SETNAME, UNWATCH),
// AUTH and HELLO AUTH passwords as `(redacted)`, commands queued in MULTI when EXEC runs them, and no
// line for rejected commands (unknown, arity, NOAUTH …) nor for admin commands (CONFIG, MONITOR …),
// as Redis 7.0's call() feeds its monitors.
//
// The lines are the proxy's: commands of other clients of the upstream (other proxies, REST callers)
// are not shown (docs/decisions.md). MONITOR still opens the upstream's /monitor stream once, so the
// token's permission decides as before (NOPERM for a token without it) and `+OK` comes when it is
// confirmed; the stream is closed then (its lines, the upstream's form of the commands, are not used).
import { performance } from 'node:perf_hooks';
import type { CommandSpec } from '../commands/table.js';
import { ResilientEventStream } from '../upstream/event-stream.js';
import type { Connection, PushPort, PushUpstream, ServerState } from './context.js';
import { errorReply, OK } from './replies.js';

/** One MONITOR connection: receives every line of its proxy from its `+OK` on. */
export interface MonitorTarget {
  readonly open: boolean;
  push(reply: Buffer): void;
}

/** The MONITOR connections of one proxy (keyed by its ServerState, which every command handler sees). */
const monitorsByServer = new WeakMap<ServerState, Set<MonitorTarget>>();
/** Commands queued in MULTI while someone monitors, shown when EXEC runs them (keyed by connection). */
const queued = new WeakMap<object, Buffer[][]>();

function monitorsOf(server: ServerState): Set<MonitorTarget> {
  let set = monitorsByServer.get(server);
  if (!set) monitorsByServer.set(server, (set = new Set()));
  return set;
}

/** Whether any client of this proxy monitors (the hot path asks this first). */
export function monitoring(server: ServerState): boolean {
  return (monitorsByServer.get(server)?.size ?? 0) > 0;
}

/** A command ran (or started): every monitor of the proxy gets its line, unless Redis hides it. */
export function feedMonitors(server: ServerState, conn: Connection, spec: CommandSpec, args: Buffer[]): void {
  const set = monitorsByServer.get(server);
  if (!set || set.size === 0 || spec.flags.has('admin')) return;
  const line = monitorLine(conn.address, args, spec);
  for (const m of set) {
    if (m.open) m.push(line);
    else set.delete(m);
  }
}

/** MULTI … EXEC: a queued command is shown when EXEC runs it. */
export function queueForMonitors(server: ServerState, conn: object, args: Buffer[]): void {
  if (!monitoring(server)) return;
  let list = queued.get(conn);
  if (!list) queued.set(conn, (list = []));
  list.push(args);
}

/** The queued commands of `conn` (EXEC shows them before its own line; DISCARD, MULTI and RESET drop them). */
export function takeQueued(conn: object): Buffer[][] {
  const list = queued.get(conn) ?? [];
  queued.delete(conn);
  return list;
}

const REDACTED = Buffer.from('(redacted)');

/** `+<sec>.<usec> [0 <addr>] "arg" …\r\n`, Redis' replicationFeedMonitors line. */
export function monitorLine(
  address: string,
  args: Buffer[],
  spec?: CommandSpec,
  nowMs = performance.timeOrigin + performance.now(),
): Buffer {
  const sec = Math.floor(nowMs / 1000);
  const usec = Math.floor((nowMs - sec * 1000) * 1000);
  const shown = spec ? redacted(spec.name, args) : args;
  return Buffer.from(`+${sec}.${String(usec).padStart(6, '0')} [0 ${address}] ${shown.map(quote).join(' ')}\r\n`, 'latin1');
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
        onConfirmed: () => {
          this.closeStream();
          this.start();
        },
        onEvent: () => undefined,
        onFailed: (error) => {
          this.stream = undefined;
          this.fill(errorReply(error));
          this.onStopped();
        },
        onDropped: () => this.closeStream(),
        onRefused: (error) => {
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

  push(line: Buffer): void {
    this.port.push(line);
  }

  /** RESET, QUIT, disconnect. A MONITOR still waiting for the upstream answers +OK (it came first). */
  stop(): void {
    this.stopped = true;
    this.closeStream();
    monitorsOf(this.server).delete(this);
    this.fill(OK);
  }

  private start(): void {
    if (this.stopped) return;
    this.fill(OK);
    monitorsOf(this.server).add(this);
  }

  private closeStream(): void {
    this.stream?.close();
    this.stream = undefined;
  }
}
