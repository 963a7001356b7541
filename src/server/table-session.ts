// One client connection of a table port (the vector and queue side ports): the shared connection core
// (connection.ts) running the port's command table. The handshake commands (SHARED_COMMANDS) are
// checked against Redis' own command table and answered exactly as on the proxy port; the port's
// commands run one after another, as Redis runs them, so a pipelined read sees the writes before it,
// and their replies take their place in the reply queue when they come. Consecutive requests of a
// command that can run as a group (VADD) wait together and run as one batch of upstream calls.
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { checkCommand, routeOf } from '../commands/table.js';
import { lower } from '../resp/args.js';
import type { Protocol } from '../resp/protocol.js';
import { ReplyWriter } from '../resp/reply-writer.js';
import { help, helpLines, CommandError, type Call, type PortCommand, type Reply, type TablePortInfo } from './command-table.js';
import { RespConnection, type ConnectionHost } from './connection.js';
import type { Connection, PushState } from './context.js';
import { SHARED_COMMANDS } from './commands/index.js';
import { errorReply, NOAUTH, refusal } from './replies.js';

/** A table port as its connections see it. */
export interface TablePort extends TablePortInfo {
  readonly host: ConnectionHost;
  /** Requests read (INFO total_commands_processed, the commands metric). */
  readonly counters: { commands: number };
  /** The error text of a failure that is not a CommandError (an upstream's refusal), or undefined for an internal error. */
  errorText(err: unknown): string | undefined;
}

/** One step of a connection's execution chain: one request, or consecutive requests run as a group. */
interface Job {
  calls: { args: Buffer[]; fill: (reply: Buffer) => void; readAt: number }[];
  group?: PortCommand;
  protocol: Protocol;
  started: boolean;
}

/** A table port has no pub/sub or MONITOR: what CLIENT LIST and RESET see of them. */
const NO_PUSHES: PushState = {
  subscriptionCount: 0,
  channelCount: 0,
  patternCount: 0,
  shardCount: 0,
  monitoring: false,
  handle: () => undefined,
  subscribedPing: () => Buffer.alloc(0),
  reset: () => undefined,
};

export class TableSession extends RespConnection implements Connection {
  readonly pushes = NO_PUSHES;
  readonly queuedCommands = -1;
  readonly isBlocked = false;
  private chain: Promise<void> = Promise.resolve();
  private lastJob: Job | undefined;
  private jobsPending = 0;

  constructor(
    socket: net.Socket,
    id: number,
    readonly port: TablePort,
    onClosed: (c: RespConnection) => void,
  ) {
    super(socket, id, port.host, onClosed);
  }

  discardTransaction(): void {}

  unblock(): boolean {
    return false;
  }

  protected get busy(): boolean {
    return this.jobsPending > 0;
  }

  protected handle(args: Buffer[], readAt: number): void {
    this.port.counters.commands++;
    const from = this.replies.nextPosition;
    if (Object.hasOwn(SHARED_COMMANDS, lower(args[0]))) this.runShared(args, readAt);
    else this.runTable(args, readAt);
    // CLIENT REPLY OFF / SKIP (networking.c): the command ran, its reply is not written.
    const mode = this.replyMode;
    if (mode === 'on') return;
    if (mode === 'skip-next') this.replyMode = 'skip';
    else if (mode === 'skip') this.replyMode = 'on';
    this.replies.silence(from);
  }

  /** A handshake command: Redis' checks (arity, subcommands, NOAUTH), then the handler every port shares. */
  private runShared(args: Buffer[], readAt: number): void {
    const stats = this.port.server.commandStats;
    const check = checkCommand(args);
    if (!check.ok) {
      const reply = Buffer.concat([Buffer.from('-'), check.errorBytes, Buffer.from('\r\n')]);
      stats.rejected(check.spec?.name, reply);
      return this.answer(reply);
    }
    const spec = check.spec;
    this.lastCommand = spec.name;
    const handler = SHARED_COMMANDS[spec.container ?? spec.name];
    let reply: Buffer | undefined;
    if (!this.authenticated && !spec.flags.has('no_auth')) reply = NOAUTH;
    else if (routeOf(spec, args) !== 'local') reply = refusal(spec);
    if (reply) {
      stats.rejected(spec.name, reply);
      return this.answer(reply);
    }
    const result = handler({ conn: this, server: this.port.server }, args);
    const ran = (out: Buffer) => {
      stats.ran(spec.name, (performance.now() - readAt) * 1000, out);
      return out;
    };
    if (Buffer.isBuffer(result)) return this.answer(ran(result));
    if (result.kind === 'defer') return this.defer(result.run().then(ran));
    if (result.kind === 'close') {
      this.answer(ran(result.reply));
      return this.closeAfterReplies();
    }
    this.answer(ran(errorReply(`ERR command '${spec.name}' is not supported on the ${this.port.role} side port`)));
  }

  /** A command of the port's table: checked now, run in turn. */
  private runTable(args: Buffer[], readAt: number): void {
    const checked = this.check(args);
    if (checked instanceof Function || Buffer.isBuffer(checked)) {
      const reply = encode(checked, this.protocol);
      if (reply[0] === 0x2d) this.port.server.commandStats.rejected(this.port.table.get(args[0])?.name, reply);
      return this.answer(reply);
    }
    this.lastCommand = checked.name;
    const call = { args, fill: this.reserve(), readAt };
    const group = checked.runGroup ? checked : undefined;
    const open = this.lastJob;
    if (group && open && !open.started && open.group === group && open.protocol === this.protocol) {
      open.calls.push(call);
      return;
    }
    const job: Job = { calls: [call], group, protocol: this.protocol, started: false };
    this.lastJob = job;
    this.jobsPending++;
    this.chain = this.chain
      .then(() => this.runJob(job, checked))
      .catch((err: unknown) => {
        // A bug must not stall the connection: the job's unanswered requests get the error.
        for (const c of job.calls) c.fill(this.errorBytes(err));
      })
      .finally(() => this.jobsPending--);
  }

  private async runJob(job: Job, spec: PortCommand): Promise<void> {
    job.started = true;
    if (!job.group) {
      const [c] = job.calls;
      let out: Buffer;
      try {
        out = encode(await spec.run!(this.call(c.args)), job.protocol);
      } catch (err) {
        out = this.errorBytes(err);
      }
      return this.done(spec, c, out);
    }
    let results: (Reply | Error)[];
    try {
      results = await job.group.runGroup!(job.calls.map((c) => this.call(c.args)));
    } catch (err) {
      results = job.calls.map(() => err as Error);
    }
    job.calls.forEach((c, i) => {
      const r = results[i];
      this.done(spec, c, r instanceof Error ? this.errorBytes(r) : encode(r, job.protocol));
    });
  }

  private call(args: Buffer[]): Call {
    return { args, conn: this };
  }

  /** A command answered: counted (INFO commandstats, SLOWLOG), then its reply takes its place. */
  private done(spec: PortCommand, c: Job['calls'][number], out: Buffer): void {
    const ms = performance.now() - c.readAt;
    const server = this.port.server;
    server.commandStats.ran(spec.displayName ?? spec.name, ms * 1000, out); // cmdstat_VADD, as Redis 8
    server.slowlog.record(ms * 1000, c.args, this);
    c.fill(out);
  }

  /** The command's spec when the request may run, else the reply that refuses it (or HELP). */
  private check(args: Buffer[]): PortCommand | Reply {
    const spec = this.port.table.get(args[0]);
    if (!spec) return errorReply(unknownCommand(args));
    if (!this.authenticated && !spec.flags.includes('no_auth')) return NOAUTH;
    // `<CMD> HELP` for a container, or for a command that could not be called with one argument.
    if (args.length === 2 && (spec.subcommands || !arityOk(spec, 2)) && lower(args[1]) === 'help') return help(helpLines(spec));
    if (!arityOk(spec, args.length)) return errorReply(`ERR wrong number of arguments for '${spec.displayName ?? spec.name}' command`);
    if (!spec.subcommands) return spec;
    const sub = spec.subcommands.find((s) => s.name === `${spec.name}|${lower(args[1])}`);
    if (!sub) return errorReply(`ERR unknown subcommand '${args[1].toString('utf8').slice(0, 128)}'. Try ${spec.name.toUpperCase()} HELP.`);
    if (!arityOk(sub, args.length)) return errorReply(`ERR wrong number of arguments for '${sub.name}' command`);
    return sub;
  }

  private errorBytes(err: unknown): Buffer {
    if (err instanceof CommandError) return errorReply(err.message);
    const text = this.port.errorText(err);
    if (text !== undefined) return errorReply(text);
    this.port.host.log.error({ err }, `${this.port.role} side-port command failed`);
    return errorReply(`ERR internal error in the ${this.port.role} side port: ${(err as Error)?.message ?? String(err)}`);
  }
}

function encode(reply: Reply, protocol: Protocol): Buffer {
  if (Buffer.isBuffer(reply)) return reply;
  const w = new ReplyWriter(protocol, 512);
  reply(w);
  return w.toBuffer();
}

function arityOk(spec: PortCommand, n: number): boolean {
  return spec.arity >= 0 ? n === spec.arity : n >= -spec.arity;
}

/** Redis 7.0's text (server.c processCommand), arguments cut at 128 bytes each. */
function unknownCommand(args: Buffer[]): string {
  let rest = '';
  for (let i = 1; i < args.length && rest.length < 128; i++) rest += `'${args[i].toString('utf8').slice(0, 128 - rest.length)}' `;
  return `ERR unknown command '${args[0].toString('utf8').slice(0, 128)}', with args beginning with: ${rest}`;
}
