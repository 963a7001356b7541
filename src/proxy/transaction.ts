// MULTI … EXEC of one connection (multi.c and processCommand of Redis 7.0). Commands between MULTI
// and EXEC are queued; at EXEC the proxy's own commands run at once and all the others go upstream
// as one /multi-exec call: exec() returns that call (or the reply when nothing goes upstream), and
// the EXEC array is assembled from the call's outcome (transactionReply).
import { replyShape } from '../commands/reply-types.js';
import { routeOf, type CommandSpec } from '../commands/table.js';
import { errorReply, type Protocol } from '../resp/protocol.js';
import type { TransactionOutcome } from '../upstream/kv-client.js';
import { jsonItemToResp } from '../upstream/json-to-resp.js';
import type { ExecPart } from './forward-item.js';
import type { LocalResult } from './local/index.js';
import { EMPTY_EXEC, EXECABORT, noWatch, OK, QUEUED, refusal } from './replies.js';

/** A command queued between MULTI and EXEC. */
interface Queued {
  spec: CommandSpec;
  args: Buffer[];
  /** Answered by the proxy at EXEC (PING, ECHO, CLIENT …), not sent upstream. */
  local: boolean;
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
}

export class Transaction {
  /** Between MULTI and EXEC/DISCARD: the queued commands. */
  private queue: Queued[] | undefined;
  /** A command was rejected: EXEC aborts. */
  private failed = false;

  get open(): boolean {
    return this.queue !== undefined;
  }

  /** Commands queued, or -1 outside MULTI. */
  get queuedCount(): number {
    return this.queue ? this.queue.length : -1;
  }

  /** RESET, DISCARD, disconnect. */
  discard(): void {
    this.queue = undefined;
    this.failed = false;
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
      default: // watch, unwatch
        return noWatch(spec.name);
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
      case 'blocking':
        return this.reject(errorReply(`ERR blocking command '${spec.name}' cannot be queued in a transaction by respgate: the upstream's /multi-exec has no blocking commands (use the non-blocking form inside MULTI)`));
      case 'stream':
        return this.reject(errorReply(`ERR '${spec.name}' cannot be queued in a transaction by respgate: pub/sub and MONITOR streams are upstream event streams, which /multi-exec cannot open`));
      case 'transaction': // unwatch
        return this.reject(noWatch(spec.name));
    }
  }

  /**
   * EXEC: the proxy's own commands run now, in order (the connection is still in MULTI meanwhile, as
   * CLIENT INFO shows); the others make one /multi-exec call, returned here. A Buffer when nothing
   * goes upstream: EXECABORT, the empty array, or the array of local replies.
   */
  exec(runLocal: (spec: CommandSpec, args: Buffer[]) => LocalResult, protocolNow: () => Protocol): Buffer | ExecCall {
    const queue = this.queue!;
    if (this.failed || queue.length === 0) {
      const reply = this.failed ? EXECABORT : EMPTY_EXEC;
      this.discard();
      return reply;
    }
    const parts: ExecPart[] = [];
    const commands: Buffer[][] = [];
    for (const q of queue) {
      if (!q.local) {
        // The protocol at this point of EXEC: a queued HELLO changes it for the replies after it.
        parts.push({ index: commands.length, shape: replyShape(q.spec, q.args), protocol: protocolNow(), transform: undefined });
        commands.push(q.args);
        continue;
      }
      const result = runLocal(q.spec, q.args);
      if (Buffer.isBuffer(result)) {
        parts.push({ reply: result });
      } else if (result.kind === 'forward') {
        // The command needs an upstream answer (INFO's keyspace line): it joins the transaction.
        parts.push({ index: commands.length, shape: 'bulk', protocol: 2, transform: result.transform });
        commands.push(result.args);
      } else if (result.kind === 'defer') {
        // The answer needs the upstream (a token or ACL user to check): not run inside EXEC.
        parts.push({ reply: errorReply(`ERR respgate cannot run '${q.spec.name}' with upstream credentials inside MULTI: authenticate before MULTI`) });
      } else {
        parts.push({ reply: errorReply(`ERR respgate internal error: '${q.spec.name}' cannot run inside a transaction`) });
      }
    }
    if (this.queue === queue) this.discard();
    return commands.length === 0 ? execArray(parts, []) : { commands, parts };
  }

  private reject(reply: Buffer): InMulti {
    this.failed = true;
    return { kind: 'reject', reply };
  }
}

/** The outcome of a transaction's /multi-exec call: the EXEC array, or the error that replaces it. */
export function transactionReply(parts: ExecPart[], outcome: TransactionOutcome): Buffer {
  switch (outcome.kind) {
    case 'executed':
      return execArray(parts, outcome.items);
    case 'discarded':
      // The upstream discarded the whole transaction before running it (a command it refuses, or
      // that failed to queue): Redis' wording for a transaction rejected at EXEC, with the reason.
      return errorReply(outcome.error.startsWith('EXECABORT') ? outcome.error : `EXECABORT Transaction discarded because of: ${outcome.error}`);
    case 'failed':
      return errorReply(outcome.error);
  }
}

type ExecutedItems = Extract<TransactionOutcome, { kind: 'executed' }>['items'];

/** The EXEC array: each part's reply, from the proxy or from item `index` of the /multi-exec answer. */
function execArray(parts: ExecPart[], items: ExecutedItems): Buffer {
  const out: Buffer[] = [Buffer.from(`*${parts.length}\r\n`)];
  for (const part of parts) {
    if ('reply' in part) {
      out.push(part.reply);
      continue;
    }
    const item = items[part.index];
    let reply = item === undefined ? errorReply('ERR upstream sent no reply for this command') : jsonItemToResp(item, part.shape, part.protocol);
    if (part.transform) reply = part.transform(reply);
    out.push(reply);
  }
  return Buffer.concat(out);
}
