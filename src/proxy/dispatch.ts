// The dispatch step: one command of a connection, from its check to where it goes (server.c
// processCommand, as far as a proxy has it). Existence and arity first, then the gates Redis applies
// before running a command (NOAUTH, MONITOR as a replica, RESP2 subscribed mode), then the
// transaction queue, then the route of the command table: upstream, local answer, refusal, blocking
// emulation, pub/sub stream, or MULTI/EXEC.
// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { replyShape } from '../commands/reply-types.js';
import { arityOk, checkCommand, resolveCommand, routeOf, type CommandSpec } from '../commands/table.js';
import { lower } from '../resp/args.js';
import type { Protocol } from '../resp/protocol.js';
import type { ReplyShape } from '../resp/reply-shape.js';
import { planBlocking } from './blocking.js';
import { requestBytes } from './client-cost.js';
import { checkCopyDb, databaseOf } from './databases.js';
import type { PushState, ReplyMode } from '../server/context.js';
import type { ForwardItem } from './forward-item.js';
import { runLocalCommand, type ProxyLocalContext } from './local/index.js';
import { redacted } from './monitor.js';
import { errorReply, NOAUTH, QUEUED, refusal, REPLICA_KEYSPACE } from '../server/replies.js';
import type { ReplyQueue } from '../server/reply-queue.js';
import type { Transaction } from './transaction.js';

/** What dispatch needs of a connection (Session implements it). */
export interface DispatchTarget {
  readonly protocol: Protocol;
  readonly authenticated: boolean;
  lastCommand: string;
  /** CLIENT REPLY. */
  replyMode: ReplyMode;
  readonly replies: ReplyQueue;
  /** Items for the batcher, oldest first. */
  readonly pending: ForwardItem[];
  readonly transaction: Transaction;
  readonly pushes: PushState;
  readonly local: ProxyLocalContext;
  /** The selected database (SELECT). */
  db: number;
  /**
   * A command for database `db` is next: undefined when it may go now, or a promise of the moment the
   * connection's items for another database are answered (databases.ts, Session.useDatabase).
   */
  useDatabase(db: number): Promise<void> | undefined;
  /** QUIT: stop reading, write what is owed, then close. */
  closeAfterReplies(): void;
  /**
   * A reply that needs the upstream first (AUTH): nothing after it runs until it is there; `then`
   * runs once it is, before the next request (a command CLIENT PAUSE held back).
   */
  defer(reply: Promise<Buffer>, then?: () => void): void;
}

/** What a RESP2 connection with subscriptions may still run (Redis 7.0 processCommand). */
const SUBSCRIBED_MODE_COMMANDS = new Set([
  'subscribe',
  'ssubscribe',
  'unsubscribe',
  'sunsubscribe',
  'psubscribe',
  'punsubscribe',
  'ping',
  'quit',
  'reset',
]);
const PUSH_CONFIRMED = new Set(['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe']);
const MINUS = Buffer.from('-');
const CRLF = Buffer.from('\r\n');
/** A command whose replies come as pushes (SUBSCRIBE …): counted as a call when it starts. */
const NO_REPLY_YET = Buffer.alloc(0);

/** `readAt`: performance.now() when the bytes of the command were read (one stamp per socket read). */
export function dispatch(t: DispatchTarget, args: Buffer[], readAt: number): void {
  const from = t.replies.nextPosition;
  // A command held back (CLIENT PAUSE, a database switch) runs later through here: CLIENT REPLY applies then.
  if (dispatchCommand(t, args, readAt) === HELD) return;
  // CLIENT REPLY OFF / SKIP (networking.c): the command ran, its reply is not written. ON answers +OK.
  const mode = t.replyMode;
  if (mode === 'on') return;
  // (Un)subscribe confirmations are written even when replies are off, in RESP2 as in RESP3 (pubsub.c
  // addReplyPubsubSubscribed sets CLIENT_PUSHING); the command still counts as the one SKIP skips.
  const pushed = PUSH_CONFIRMED.has(lower(args[0]));
  if (mode === 'skip-next')
    t.replyMode = 'skip'; // SKIP: its own reply, then the next command's
  else if (mode === 'skip') t.replyMode = 'on';
  if (!pushed) t.replies.silence(from);
}

/** What dispatchCommand answers when it held its command back to run later. */
const HELD = 'held';

/**
 * Runs the command once `ready` resolves, before the requests read after it (Connection.defer takes an
 * empty reply position now); CLIENT REPLY applies when it runs, not now.
 */
function holdUntil(t: DispatchTarget, ready: Promise<void>, args: Buffer[], startedAt: number): typeof HELD {
  t.defer(
    ready.then(() => NO_REPLY_YET),
    () => dispatch(t, args, startedAt),
  );
  return HELD;
}

/**
 * The last command name resolved, as the Buffer it came in, and its spec. The request reader gives every
 * request spelling a name alike the same shared Buffer (resp/request-reader.ts SPELLINGS), and a pipeline
 * repeats a command: the same Buffer again is the same command, without hashing its bytes a second time.
 * Only commands without subcommands are kept (a container's spec depends on the next argument).
 */
let lastName: Buffer | undefined;
let lastSpec: CommandSpec | undefined;

/** resolveCommand, with the last name remembered by identity. */
function commandOf(args: Buffer[]): CommandSpec | undefined {
  const name = args[0];
  if (name === lastName && name !== undefined) return lastSpec;
  const spec = resolveCommand(args);
  // Not a container nor one of its subcommands: those depend on the next argument.
  if (spec !== undefined && spec.subcommands === undefined && spec.container === undefined) {
    lastName = name;
    lastSpec = spec;
  }
  return spec;
}

function dispatchCommand(t: DispatchTarget, args: Buffer[], startedAt: number): typeof HELD | void {
  // checkCommand's own test, without its result object (40 bytes per command at -P 16): its error only for a failure.
  const spec = commandOf(args);
  if (spec === undefined || !arityOk(spec, args.length)) return rejectUnchecked(t, args);
  t.lastCommand = spec.name;
  if (!t.authenticated && !spec.flags.has('no_auth')) return reject(t, spec, NOAUTH);
  // A MONITOR connection is a replica to Redis (networking flags CLIENT_SLAVE|CLIENT_MONITOR).
  if (t.pushes.monitoring && (spec.flags.has('readonly') || spec.flags.has('write') || spec.flags.has('may_replicate'))) {
    return reject(t, spec, REPLICA_KEYSPACE);
  }
  if (t.protocol === 2 && t.pushes.subscriptionCount > 0) {
    const name = spec.container ?? spec.name;
    if (!SUBSCRIBED_MODE_COMMANDS.has(name)) {
      return reject(
        t,
        spec,
        errorReply(
          `ERR Can't execute '${spec.name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`,
        ),
      );
    }
    if (name === 'ping') {
      ran(t, spec.name, startedAt, t.pushes.subscribedPing(args), args);
      return t.local.server.monitors.feed(t.local.conn, spec, args);
    }
  }
  // CLIENT PAUSE (local/pause.ts): the command, and the connection's later ones, wait for its end.
  const paused = t.local.server.pause.until(t, spec, t.pushes.monitoring);
  if (paused) return holdUntil(t, paused, args, startedAt);
  // COPY … DB: in place, out of range, or refused across databases (databases.ts).
  const sent = spec.name === 'copy' ? copyArgs(t, args) : args;
  if (Buffer.isBuffer(sent)) return reject(t, spec, sent);
  if (t.transaction.open) return inTransaction(t, spec, sent, startedAt);
  // SELECT n: a command waits until the connection's commands for another database are answered.
  const switching = t.useDatabase(databaseOf(spec, t.db));
  if (switching) return holdUntil(t, switching, args, startedAt);
  const route = routeOf(spec, args);
  runRoute(t, spec, sent, startedAt, route);
  // MONITOR shows what ran, as the client sent it, once its reply has its place (Redis' call() feeds the
  // monitors after the command); a refusal runs nothing (monitor.ts).
  if (route !== 'refused') t.local.server.monitors.feed(t.local.conn, spec, args);
}

/**
 * COPY's arguments as they go upstream, or its error (databases.ts). A function of its own: a closure
 * over `t` inside dispatchCommand would give every command a context object (40 bytes at -P 16).
 */
function copyArgs(t: DispatchTarget, args: Buffer[]): Buffer[] | Buffer {
  return checkCopyDb(args, t.db, (i) => t.local.server.databases.has(i));
}

/**
 * Like Redis: existence and arity are checked before authentication. Inside MULTI a rejected command
 * flags the transaction, and a rejected EXEC discards it (its error says so).
 */
function rejectUnchecked(t: DispatchTarget, args: Buffer[]): void {
  const check = checkCommand(args);
  if (check.ok) throw new Error('dispatch: checkCommand passed a command resolveCommand and arityOk refused');
  t.transaction.checkFailed(check.error);
  const reply = Buffer.concat([MINUS, check.errorBytes, CRLF]);
  t.local.server.commandStats.rejected(check.spec?.name, reply);
  t.replies.answer(reply);
}

function runRoute(t: DispatchTarget, spec: CommandSpec, args: Buffer[], startedAt: number, route: ReturnType<typeof routeOf>): void {
  const stats = t.local.server.commandStats;
  switch (route) {
    case 'forward':
      return forward(t, spec.name, args, startedAt, t.protocol === 3 ? replyShape(spec, args) : undefined, undefined);
    case 'local':
      return runLocal(t, spec, args, startedAt);
    case 'refused':
      // Not run anywhere: a rejected call (the reason is in the error).
      return reject(t, spec, refusal(spec));
    case 'blocking':
      return blocking(t, spec, args, startedAt);
    case 'stream':
      stats.ran(spec.name, 0, NO_REPLY_YET);
      return t.pushes.handle(spec, args, t.local.server);
    case 'transaction':
      if (spec.name === 'multi') {
        t.local.server.monitors.take(t);
        t.local.server.pause.noteQueued(t, undefined);
      }
      return spec.name === 'watch' ? watch(t, args, startedAt) : ran(t, spec.name, startedAt, t.transaction.outside(spec), args);
  }
}

/**
 * A reply known now of a command that ran: counted (INFO commandstats), then queued for the client.
 * With `args`, a command the proxy answered itself also goes to SLOWLOG when slow enough (forwarded
 * ones are logged when their upstream reply comes; EXEC never is, as in Redis).
 */
function ran(t: DispatchTarget, name: string, startedAt: number, reply: Buffer, args?: Buffer[]): void {
  const usec = (performance.now() - startedAt) * 1000;
  t.local.server.commandStats.ran(name, usec, reply);
  if (args && name !== 'exec') t.local.server.slowlog.record(usec, redacted(name, args), t.local.conn);
  t.replies.answer(reply);
}

/** WATCH: reads the keys' fingerprints upstream, in order with the connection's commands (transaction.ts). */
function watch(t: DispatchTarget, args: Buffer[], startedAt: number): void {
  const call = t.transaction.watch(args.slice(1), t.db);
  if (Buffer.isBuffer(call)) return ran(t, 'watch', startedAt, call);
  forward(t, 'watch', call.command, startedAt, undefined, call.record);
}

/** An error for a command Redis rejects before running it: inside MULTI it also flags the transaction. */
function reject(t: DispatchTarget, spec: CommandSpec, reply: Buffer): void {
  t.transaction.rejected();
  t.local.server.commandStats.rejected(spec.name, reply);
  t.replies.answer(reply);
}

/**
 * Queues a command for the upstream; its reply fills the position taken now. On a RESP3 connection,
 * `shape` converts the upstream's RESP2 reply (commands/reply-types.ts); `transform` rewrites the
 * reply after that (INFO's keyspace line).
 */
function forward(
  t: DispatchTarget,
  name: string,
  args: Buffer[],
  readAt: number,
  shape: ReplyShape | undefined,
  transform: ((reply: Buffer) => Buffer) | undefined,
): void {
  t.pending.push({ kind: 'command', args, slot: t.replies.take(), shape, transform, readAt, name, bytes: requestBytes(args) });
}

/**
 * A blocking command (BLPOP, BZPOPMIN, XREAD BLOCK …): emulated by polling (blocking.ts). It waits
 * behind the connection's earlier commands and holds back its later ones until it is answered.
 */
function blocking(t: DispatchTarget, spec: CommandSpec, args: Buffer[], startedAt: number): void {
  const plan = planBlocking(spec, args);
  if (Buffer.isBuffer(plan)) return ran(t, spec.name, startedAt, plan);
  t.pending.push({
    kind: 'blocking',
    plan,
    slot: t.replies.take(),
    shape: t.protocol === 3 ? replyShape(spec, args) : undefined,
    name: spec.name,
    readAt: startedAt,
  });
}

function runLocal(t: DispatchTarget, spec: CommandSpec, args: Buffer[], startedAt: number): void {
  const result = runLocalCommand(t.local, spec, args);
  if (Buffer.isBuffer(result)) return ran(t, spec.name, startedAt, result, args);
  if (result.kind === 'forward') return forward(t, spec.name, result.args, startedAt, undefined, result.transform);
  if (result.kind === 'defer') {
    const stats = t.local.server.commandStats;
    return t.defer(
      result.run().then((reply) => {
        stats.ran(spec.name, (performance.now() - startedAt) * 1000, reply);
        return reply;
      }),
    );
  }
  ran(t, spec.name, startedAt, result.reply, args);
  t.closeAfterReplies();
}

function inTransaction(t: DispatchTarget, spec: CommandSpec, args: Buffer[], startedAt: number): void {
  const action = t.transaction.inside(spec, args);
  const stats = t.local.server.commandStats;
  switch (action.kind) {
    case 'reply':
      // A queued command runs (and counts, and shows in MONITOR) at EXEC; DISCARD, a nested MULTI, WATCH run now.
      if (action.reply === QUEUED) {
        t.local.server.monitors.queue(t, args);
        t.local.server.pause.noteQueued(t, spec);
        return t.replies.answer(action.reply);
      }
      if (spec.name === 'discard') {
        t.local.server.monitors.take(t);
        t.local.server.pause.noteQueued(t, undefined);
      }
      ran(t, spec.name, startedAt, action.reply, args);
      return t.local.server.monitors.feed(t.local.conn, spec, args);
    case 'reject':
      stats.rejected(spec.name, action.reply);
      return t.replies.answer(action.reply);
    case 'run-now':
      runLocal(t, spec, args, startedAt);
      return t.local.server.monitors.feed(t.local.conn, spec, args);
    case 'exec': {
      const exec = t.transaction.exec(
        (s, a) => runLocalCommand(t.local, s, a),
        () => t.protocol,
        (name, reply) => stats.ran(name, 0, reply),
        t,
      );
      if (Buffer.isBuffer(exec)) {
        ran(t, 'exec', startedAt, exec);
        return showExec(t, spec, args, exec[0] === 0x2d);
      }
      const queue = () =>
        t.pending.push({
          kind: 'transaction',
          commands: exec.commands,
          parts: exec.parts,
          slot: t.replies.take(),
          watch: exec.watch,
          protocol: exec.protocol,
          readAt: startedAt,
        });
      // Its database's upstream runs it, after the connection's commands for another database.
      const switching = t.useDatabase(exec.db);
      if (switching)
        t.defer(
          switching.then(() => NO_REPLY_YET),
          queue,
        );
      else queue();
      showExec(t, spec, args, false);
    }
  }
}

/** MONITOR: the queued commands as EXEC runs them, then EXEC itself; an aborted EXEC runs none. */
function showExec(t: DispatchTarget, spec: CommandSpec, args: Buffer[], aborted: boolean): void {
  t.local.server.pause.noteQueued(t, undefined);
  const queued = t.local.server.monitors.take(t);
  if (!aborted) {
    for (const queuedArgs of queued) {
      const check = checkCommand(queuedArgs);
      if (check.ok) t.local.server.monitors.feed(t.local.conn, check.spec, queuedArgs);
    }
  }
  t.local.server.monitors.feed(t.local.conn, spec, args);
}
