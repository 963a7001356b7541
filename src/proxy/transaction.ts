// MULTI … EXEC of one connection (multi.c and processCommand of Redis 7.0). Commands between MULTI
// and EXEC are queued; at EXEC the proxy's own commands run at once and all the others go upstream
// as one /multi-exec call: exec() returns that call (or the reply when nothing goes upstream), and
// the EXEC array is assembled from the call's outcome (transactionReply).
// WATCH is emulated (upstream/script-transaction.ts): WATCH reads a fingerprint of each key, in order
// with the connection's other commands, and EXEC then goes as one EVAL that checks them first.
import { replyShape } from '../commands/reply-types.js';
import { routeOf, type CommandSpec } from '../commands/table.js';
import { planBlocking } from './blocking.js';
import { errorReply, type Protocol } from '../resp/protocol.js';
import type { TransactionOutcome } from '../upstream/kv-client.js';
import { jsonItemToResp } from '../upstream/json-to-resp.js';
import { fingerprintCommand, readFingerprints, type WatchedKeys } from '../upstream/script-transaction.js';
import { fromLuaReply } from '../resp/lua-reply.js';
import type { ExecPart } from './forward-item.js';
import type { LocalResult } from './local/index.js';
import { EMPTY_EXEC, EXECABORT, NULL3, NULL_ARRAY, OK, QUEUED, refusal } from '../server/replies.js';

/** A command queued between MULTI and EXEC. */
interface Queued {
  spec: CommandSpec;
  args: Buffer[];
  /** Answered by the proxy at EXEC (PING, ECHO, CLIENT …), not sent upstream. */
  local: boolean;
  /** What goes upstream instead of `args` (a blocking command's non-blocking form). */
  send?: Buffer[];
  /** The reply at EXEC, known at queueing (a blocking command's argument error, answered in place as Redis does). */
  fixed?: Buffer;
}

/** What a command does while the connection is in MULTI. */
export type InMulti =
  | { kind: 'reply'; reply: Buffer }
  /** A command Redis rejects before queueing it: it also flags the transaction. */
  | { kind: 'reject'; reply: Buffer }
  | { kind: 'exec' }
  /** QUIT and RESET act at once, as outside MULTI. */
  | { kind: 'run-now' };

/** The /multi-exec call an EXEC makes, and how to build its array from the answer. */
export interface ExecCall {
  commands: Buffer[][];
  parts: ExecPart[];
  /** The keys watched before MULTI, checked at EXEC; undefined when nothing is watched. */
  watch: WatchedKeys | undefined;
  /** The protocol at EXEC, for the null EXEC of a changed watched key. */
  protocol: Protocol;
  /** The database whose upstream runs it (SELECT before or inside MULTI). */
  db: number;
}

/** The connection's selected database, which a SELECT queued in MULTI changes while EXEC runs. */
export interface SelectedDb {
  db: number;
}

/** WATCH in one database and EXEC in another, or SELECT inside MULTI between commands of two databases. */
export const CROSS_DB_EXEC = errorReply(
  'EXECABORT Transaction discarded because of: respgate cannot run one transaction in several databases (SELECT between its commands, or WATCH in another database): each database is a separate REST database',
);

/** WATCH: the upstream call that reads the fingerprints, and what turns its reply into WATCH's reply. */
export interface WatchCall {
  command: Buffer[];
  record: (reply: Buffer) => Buffer;
}

export class Transaction {
  /** Between MULTI and EXEC/DISCARD: the queued commands. */
  private queue: Queued[] | undefined;
  /** A command was rejected: EXEC aborts. */
  private failed = false;
  /** Keys watched since the last EXEC, DISCARD, UNWATCH or RESET (Redis' c->watched_keys). */
  private watched: WatchedKeys | undefined;
  /** The database of the watched keys; -1 when WATCH ran in several. */
  private watchedDb = 0;

  get open(): boolean {
    return this.queue !== undefined;
  }

  /** Commands queued, or -1 outside MULTI. */
  get queuedCount(): number {
    return this.queue ? this.queue.length : -1;
  }

  /** RESET, DISCARD, EXEC, disconnect: also forgets the watched keys (multi.c discardTransaction). */
  discard(): void {
    this.queue = undefined;
    this.failed = false;
    this.watched = undefined;
    this.watchedDb = 0;
  }

  /**
   * WATCH outside MULTI: keys not watched yet get their fingerprint read upstream (one EVAL, ordered
   * with the connection's other commands); a Buffer (+OK) when every key is watched already. A WATCH
   * whose read fails answers the upstream's error and makes the next EXEC fail (null), as a change would.
   */
  watch(keys: Buffer[], db = 0): WatchCall | Buffer {
    if (this.watched === undefined) this.watchedDb = db;
    else if (this.watchedDb !== db) this.watchedDb = -1;
    const watched = (this.watched ??= { keys: [], fingerprints: [], broken: false });
    const fresh = keys.filter((k, i) => !watched.keys.some((w) => w.equals(k)) && keys.findIndex((o) => o.equals(k)) === i);
    if (fresh.length === 0) return OK;
    const from = watched.keys.length;
    watched.keys.push(...fresh);
    return {
      command: fingerprintCommand(fresh),
      record: (reply) => {
        const fingerprints = readFingerprints(reply, fresh.length);
        if (!fingerprints) {
          watched.broken = true;
          return reply[0] === 0x2d ? reply : errorReply('ERR upstream sent a malformed answer to WATCH; the next EXEC will fail');
        }
        fingerprints.forEach((f, i) => (watched.fingerprints[from + i] = f));
        return OK;
      },
    };
  }

  /** A command failed its existence or arity check inside MULTI: a rejected EXEC discards, anything else flags. */
  checkFailed(error: string): void {
    if (!this.queue) return;
    if (error.startsWith('EXECABORT')) this.discard();
    else this.failed = true;
  }

  /** A command Redis rejects before running it (NOAUTH, subscribed mode …): flags an open transaction. */
  rejected(): void {
    if (this.queue) this.failed = true;
  }

  /** MULTI, EXEC, DISCARD, WATCH, UNWATCH outside a transaction. */
  outside(spec: CommandSpec): Buffer {
    switch (spec.name) {
      case 'multi':
        this.queue = [];
        this.failed = false;
        return OK;
      case 'exec':
        return errorReply('ERR EXEC without MULTI');
      case 'discard':
        return errorReply('ERR DISCARD without MULTI');
      default: // unwatch (WATCH goes through watch())
        this.watched = undefined;
        this.watchedDb = 0;
        return OK;
    }
  }

  /**
   * A command between MULTI and EXEC: EXEC, DISCARD, MULTI, WATCH, QUIT and RESET act at once; a command
   * that cannot be queued answers its error and flags the transaction; the others answer +QUEUED.
   */
  inside(spec: CommandSpec, args: Buffer[]): InMulti {
    const queue = this.queue!;
    switch (spec.name) {
      case 'exec':
        return { kind: 'exec' };
      case 'discard':
        this.discard();
        return { kind: 'reply', reply: OK };
      case 'multi':
        return { kind: 'reply', reply: errorReply('ERR MULTI calls can not be nested') };
      case 'watch':
        return { kind: 'reply', reply: errorReply('ERR WATCH inside MULTI is not allowed') };
      case 'quit':
      case 'reset':
        return { kind: 'run-now' };
    }
    if (spec.flags.has('no_multi')) return this.reject(errorReply('ERR Command not allowed inside a transaction'));
    switch (routeOf(spec, args)) {
      case 'forward':
        queue.push({ spec, args, local: false });
        return { kind: 'reply', reply: QUEUED };
      case 'local':
        queue.push({ spec, args, local: true });
        return { kind: 'reply', reply: QUEUED };
      case 'refused':
        return this.reject(refusal(spec));
      case 'blocking': {
        // Inside MULTI Redis never blocks: the command answers at once what it has (null when nothing,
        // "as a timeout"). Its non-blocking poll (blocking.ts) is exactly that.
        const plan = planBlocking(spec, args);
        if (Buffer.isBuffer(plan)) queue.push({ spec, args, local: true, fixed: plan });
        else queue.push({ spec, args, local: false, send: plan.poll });
        return { kind: 'reply', reply: QUEUED };
      }
      case 'stream':
        return this.reject(
          errorReply(
            `ERR '${spec.name}' cannot be queued in a transaction by respgate: pub/sub and MONITOR streams are upstream event streams, which /multi-exec cannot open`,
          ),
        );
      case 'transaction': // unwatch: queued, +OK at EXEC (which unwatches anyway), as in Redis
        queue.push({ spec, args, local: true });
        return { kind: 'reply', reply: QUEUED };
    }
  }

  /**
   * EXEC: the proxy's own commands run now, in order (the connection is still in MULTI meanwhile, as
   * CLIENT INFO shows); the others make one /multi-exec call, returned here. A Buffer when nothing
   * goes upstream: EXECABORT, the empty array, or the array of local replies.
   */
  exec(
    runLocal: (spec: CommandSpec, args: Buffer[]) => LocalResult,
    protocolNow: () => Protocol,
    ran?: PartCounter,
    selected: SelectedDb = { db: 0 },
  ): Buffer | ExecCall {
    const queue = this.queue!;
    const watch = this.watched;
    const dbBefore = selected.db;
    // The one database of its upstream commands (pub/sub ones go wherever the others go).
    let execDb = watch === undefined ? undefined : this.watchedDb;
    let crossDb = execDb === -1;
    const noteDb = (spec: CommandSpec) => {
      if (spec.flags.has('pubsub')) return;
      if (execDb === undefined) execDb = selected.db;
      else if (execDb !== selected.db) crossDb = true;
    };
    if (this.failed || (queue.length === 0 && watch === undefined)) {
      const reply = this.failed ? EXECABORT : EMPTY_EXEC;
      this.discard();
      return reply;
    }
    const protocol = protocolNow();
    const parts: ExecPart[] = [];
    const commands: Buffer[][] = [];
    for (const q of queue) {
      if (q.spec.name === 'unwatch') {
        parts.push({ name: q.spec.name, reply: OK });
        continue;
      }
      if (q.fixed) {
        parts.push({ name: q.spec.name, reply: q.fixed });
        continue;
      }
      if (!q.local) {
        // The protocol at this point of EXEC: a queued HELLO changes it for the replies after it.
        parts.push({
          name: q.spec.name,
          index: commands.length,
          shape: replyShape(q.spec, q.args),
          protocol: protocolNow(),
          transform: undefined,
        });
        noteDb(q.spec);
        commands.push(q.send ?? q.args);
        continue;
      }
      const result = runLocal(q.spec, q.args);
      if (Buffer.isBuffer(result)) {
        parts.push({ name: q.spec.name, reply: result });
      } else if (result.kind === 'forward') {
        // The command needs an upstream answer (INFO's keyspace line): it joins the transaction.
        parts.push({ name: q.spec.name, index: commands.length, shape: 'bulk', protocol: 2, transform: result.transform });
        noteDb(q.spec);
        commands.push(result.args);
      } else if (result.kind === 'defer') {
        // The answer needs the upstream (a token or ACL user to check): not run inside EXEC.
        parts.push({
          name: q.spec.name,
          reply: errorReply(`ERR respgate cannot run '${q.spec.name}' with upstream credentials inside MULTI: authenticate before MULTI`),
        });
      } else {
        parts.push({
          name: q.spec.name,
          reply: errorReply(`ERR respgate internal error: '${q.spec.name}' cannot run inside a transaction`),
        });
      }
    }
    if (this.queue === queue) this.discard();
    if (crossDb) {
      // Nothing went upstream: the transaction fails as a whole, and the connection stays where it was.
      selected.db = dbBefore;
      return CROSS_DB_EXEC;
    }
    if (commands.length === 0 && watch === undefined) return execArray(parts, [], ran);
    return { commands, parts, watch, protocol, db: execDb ?? selected.db };
  }

  private reject(reply: Buffer): InMulti {
    this.failed = true;
    return { kind: 'reject', reply };
  }
}

/** Called with each command EXEC ran and its reply (INFO commandstats). */
export type PartCounter = (name: string, reply: Buffer) => void;

/** The outcome of a transaction's upstream call: the EXEC array, the null EXEC, or the error that replaces it. */
export function transactionReply(parts: ExecPart[], outcome: TransactionOutcome, protocol: Protocol, ran?: PartCounter): Buffer {
  switch (outcome.kind) {
    case 'executed':
      return execArray(parts, outcome.items, ran);
    case 'executed-script':
      return execArray(parts, outcome.replies, ran);
    case 'aborted':
      return protocol === 3 ? NULL3 : NULL_ARRAY;
    case 'discarded':
      // The upstream discarded the whole transaction before running it (a command it refuses, or
      // that failed to queue): Redis' wording for a transaction rejected at EXEC, with the reason.
      return errorReply(
        outcome.error.startsWith('EXECABORT') ? outcome.error : `EXECABORT Transaction discarded because of: ${outcome.error}`,
      );
    case 'failed':
      return errorReply(outcome.error);
  }
}

type ExecutedItems = Extract<TransactionOutcome, { kind: 'executed' }>['items'];

/** The EXEC array: each part's reply, from the proxy or from item `index` of the upstream's answer. */
function execArray(parts: ExecPart[], items: ExecutedItems | Buffer[], ran: PartCounter | undefined): Buffer {
  const out: Buffer[] = [Buffer.from(`*${parts.length}\r\n`)];
  for (const part of parts) {
    if ('reply' in part) {
      ran?.(part.name, part.reply);
      out.push(part.reply);
      continue;
    }
    const item = items[part.index];
    let reply =
      item === undefined
        ? errorReply('ERR upstream sent no reply for this command')
        : Buffer.isBuffer(item)
          ? fromLuaReply(item, part.shape, part.protocol)
          : jsonItemToResp(item, part.shape, part.protocol);
    if (part.transform) reply = part.transform(reply);
    ran?.(part.name, reply);
    out.push(reply);
  }
  return Buffer.concat(out);
}
