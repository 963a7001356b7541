// One client connection of a side port: reads requests with the shared RESP request reader, runs
// each through the command table, and writes the replies strictly in request order, whatever order
// the upstream calls finish in (a queue of reply slots flushed from its head).
import type net from 'node:net';
import type { Logger } from '../logger.js';
import { RequestReader } from '../resp/request-reader.js';
import { ReplyWriter, type Protocol } from '../resp/reply-writer.js';
import { CommandError } from './args.js';
import { help, helpLines, type CommandSpec, type CommandTable, type Reply } from './command-spec.js';
import { RestError } from '../upstream/rest-json.js';

export interface SideportContext {
  /** `vector` or `queue`: shown in INFO and errors. */
  role: string;
  table: CommandTable;
  requirepass?: string;
  log: Logger;
  maxBulkLength: number;
  startedAt: number;
  nextId(): number;
  /** Lines of INFO's `# Upstream` section (no secrets). */
  upstreamInfo(): string[];
  connections(): number;
  /** Counters read by /metrics. */
  stats: { commands: number };
}

interface Slot {
  bytes?: Buffer;
  closeAfter?: boolean;
}

/** One step of a connection's execution chain: one request, or consecutive requests run as a group. */
interface Job {
  calls: { args: Buffer[]; slot: Slot }[];
  group?: CommandSpec;
  started: boolean;
}

const EMPTY = Buffer.alloc(0);

/** Most replies waiting for their turn before the connection stops reading (pipelining back-pressure). */
const MAX_PENDING = 1000;

export class Connection {
  readonly id: number;
  protocol: Protocol = 2;
  name = '';
  libName = '';
  libVersion = '';
  authenticated: boolean;
  private readonly reader: RequestReader;
  private readonly slots: Slot[] = [];
  private chain: Promise<void> = Promise.resolve();
  private lastJob: Job | undefined;
  /** No more requests are read (QUIT or a protocol error). */
  private stopReading = false;
  /** QUIT ran: the connection closes after its +OK. */
  private quitting = false;
  /** The client ended its side: close once every owed reply is written. */
  private ending = false;
  private paused = false;
  private jobsPending = 0;
  /** Parsing waits for the pending requests to run (unauthenticated connection). */
  private waitingForRun = false;

  constructor(
    readonly socket: net.Socket,
    readonly ctx: SideportContext,
  ) {
    this.id = ctx.nextId();
    this.authenticated = ctx.requirepass === undefined;
    this.reader = new RequestReader({ maxBulkLength: ctx.maxBulkLength });
    this.reader.authenticated = this.authenticated;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('end', () => {
      this.ending = true;
      this.endIfDone();
    });
  }

  setAuthenticated(value: boolean): void {
    this.authenticated = value;
    this.reader.authenticated = value;
  }

  /** Ends the connection once every reply queued so far is written (QUIT). */
  closeAfterReplies(): void {
    this.quitting = true;
  }

  private onData(chunk: Buffer): void {
    if (this.stopReading) return;
    this.reader.push(chunk);
    for (;;) {
      // Before AUTH the reader applies Redis' unauthenticated limits; like Redis, parse the next request
      // only once the ones before it (an AUTH among them) have run.
      if (!this.authenticated && this.jobsPending > 0) {
        this.waitingForRun = true;
        return;
      }
      if (this.slots.length >= MAX_PENDING) {
        this.paused = true;
        this.socket.pause();
        return;
      }
      const r = this.reader.read();
      if (!r) return;
      if (r.kind === 'protocol-error') {
        this.slots.push({ bytes: r.reply, closeAfter: true });
        this.stopReading = true;
        this.flush();
        return;
      }
      this.dispatch(r.args);
      if (this.stopReading) return;
    }
  }

  /**
   * Queues one request. Requests of a connection run one after another, as Redis runs them, so a
   * pipelined read sees the writes before it; consecutive requests of a command that can run as a
   * group (VADD) wait together and run as one batch of REST calls.
   */
  private dispatch(args: Buffer[]): void {
    this.ctx.stats.commands++;
    const slot: Slot = {};
    this.slots.push(slot);
    const spec = this.ctx.table.get(args[0]);
    // Nothing after QUIT is read, as in Redis.
    if (spec?.name === 'quit') this.stopReading = true;
    const group = spec?.runGroup ? spec : undefined;
    const open = this.lastJob;
    if (group && open && !open.started && open.group === group) {
      open.calls.push({ args, slot });
      return;
    }
    const job: Job = { calls: [{ args, slot }], group, started: false };
    this.lastJob = job;
    this.jobsPending++;
    this.chain = this.chain
      .then(() => this.runJob(job))
      .catch((err) => {
        // A bug must not stall the connection: the job's unanswered requests get the error.
        for (const c of job.calls) if (c.slot.bytes === undefined) this.complete(c.slot, this.errorBytes(err));
      })
      .finally(() => {
        this.jobsPending--;
        if (this.waitingForRun && this.jobsPending === 0) {
          this.waitingForRun = false;
          this.onData(EMPTY);
        }
        this.endIfDone();
      });
  }

  private async runJob(job: Job): Promise<void> {
    job.started = true;
    if (!job.group) {
      const { args, slot } = job.calls[0];
      let bytes: Buffer;
      try {
        const reply = await this.run(args);
        // The protocol in force once the command ran (HELLO 3 answers in RESP3).
        bytes = this.encode(reply, this.protocol);
      } catch (err) {
        bytes = this.errorBytes(err);
      }
      if (this.quitting) slot.closeAfter = true;
      this.complete(slot, bytes);
      return;
    }
    const ready: Job['calls'] = [];
    for (const c of job.calls) {
      const checked = this.check(c.args);
      if (checked instanceof Function || Buffer.isBuffer(checked)) this.complete(c.slot, this.encode(checked, this.protocol));
      else ready.push(c);
    }
    if (ready.length === 0) return;
    let results: (Reply | Error)[];
    try {
      results = await job.group.runGroup!(ready.map((c) => ({ args: c.args, conn: this })));
    } catch (err) {
      results = ready.map(() => err as Error);
    }
    ready.forEach((c, i) => {
      const r = results[i];
      this.complete(c.slot, r instanceof Error ? this.errorBytes(r) : this.encode(r, this.protocol));
    });
  }

  /** The command's spec when the request may run, else the reply that refuses it (or HELP). */
  private check(args: Buffer[]): CommandSpec | Reply {
    const spec = this.ctx.table.get(args[0]);
    if (!spec) return errorBytes(unknownCommand(args));
    if (!this.authenticated && !spec.flags.includes('no_auth')) return errorBytes('NOAUTH Authentication required.');
    // `<CMD> HELP` for a container, or for a command that could not be called with one argument.
    if (args.length === 2 && (spec.subcommands || !arityOk(spec, 2)) && args[1].toString('latin1').toLowerCase() === 'help')
      return help(helpLines(spec));
    if (!arityOk(spec, args.length)) return errorBytes(`ERR wrong number of arguments for '${spec.name}' command`);
    if (spec.subcommands) {
      const subName = args[1].toString('latin1').toLowerCase();
      const sub = spec.subcommands.find((s) => s.name === `${spec.name}|${subName}`);
      if (!sub)
        return errorBytes(`ERR unknown subcommand '${args[1].toString('utf8').slice(0, 128)}'. Try ${spec.name.toUpperCase()} HELP.`);
      if (!arityOk(sub, args.length)) return errorBytes(`ERR wrong number of arguments for '${sub.name}' command`);
      return sub;
    }
    return spec;
  }

  private run(args: Buffer[]): Reply | Promise<Reply> {
    const checked = this.check(args);
    if (checked instanceof Function || Buffer.isBuffer(checked)) return checked;
    if (checked.runGroup) {
      return checked.runGroup([{ args, conn: this }]).then(([r]) => {
        if (r instanceof Error) throw r;
        return r;
      });
    }
    return checked.run!({ args, conn: this });
  }

  private encode(reply: Reply, protocol: Protocol): Buffer {
    if (Buffer.isBuffer(reply)) return reply;
    const w = new ReplyWriter(protocol, 512);
    reply(w);
    return w.toBuffer();
  }

  private errorBytes(err: unknown): Buffer {
    if (err instanceof CommandError) return errorBytes(err.message);
    if (err instanceof RestError) {
      if (err.status === 0)
        return errorBytes(
          `ERR ${err.service} unavailable: ${err.message}; the command was not confirmed, check that the service is running and retry`,
        );
      return errorBytes(`ERR ${err.service} error (HTTP ${err.status}): ${err.message}`);
    }
    this.ctx.log.error({ err }, 'side-port command failed');
    return errorBytes(`ERR internal error in the ${this.ctx.role} side port: ${(err as Error).message}`);
  }

  /** After the client ended its side: close once every request read has run and been answered. */
  private endIfDone(): void {
    if (this.ending && this.slots.length === 0 && this.jobsPending === 0 && !this.waitingForRun && !this.socket.destroyed)
      this.socket.end();
  }

  private complete(slot: Slot, bytes: Buffer): void {
    slot.bytes = bytes;
    this.flush();
  }

  private flush(): void {
    while (this.slots.length > 0 && this.slots[0].bytes !== undefined) {
      const slot = this.slots.shift()!;
      if (!this.socket.destroyed) this.socket.write(slot.bytes!);
      if (slot.closeAfter) {
        this.slots.length = 0;
        this.socket.end();
        return;
      }
    }
    this.endIfDone();
    if (this.paused && this.slots.length < MAX_PENDING / 2) {
      this.paused = false;
      this.socket.resume();
      this.onData(EMPTY);
    }
  }
}

function arityOk(spec: CommandSpec, n: number): boolean {
  return spec.arity >= 0 ? n === spec.arity : n >= -spec.arity;
}

export function errorBytes(message: string): Buffer {
  return Buffer.from(`-${message.replace(/[\r\n]+/g, ' ')}\r\n`);
}

/** Redis 7.0's text (server.c processCommand), arguments cut at 128 bytes each. */
function unknownCommand(args: Buffer[]): string {
  let rest = '';
  for (let i = 1; i < args.length && rest.length < 128; i++) rest += `'${args[i].toString('utf8').slice(0, 128 - rest.length)}' `;
  return `ERR unknown command '${args[0].toString('utf8').slice(0, 128)}', with args beginning with: ${rest}`;
}
