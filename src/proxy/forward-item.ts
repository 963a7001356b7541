// What a connection hands the batcher: one forwarded item, a tagged union (plain data, no closure
// per command). Types only.
import type { ReplyShape } from '../resp/reply-shape.js';
import type { Protocol } from '../resp/protocol.js';
import type { WatchedKeys } from '../upstream/script-transaction.js';
import type { BlockingPlan } from './blocking.js';

/** A command sent upstream in a /pipeline call; its reply fills position `slot` of the connection's replies. */
export interface CommandItem {
  kind: 'command';
  args: Buffer[];
  slot: number;
  /** RESP3 connections: the shape of the reply, to convert the upstream's RESP2 bytes. */
  shape: ReplyShape | undefined;
  /** Rewrites the reply after that (INFO's keyspace line). */
  transform: ((reply: Buffer) => Buffer) | undefined;
  /** performance.now() when the command was read (latency histogram, SLOWLOG, INFO commandstats). */
  readAt?: number;
  /** The client's command, for INFO commandstats (`client|list`; `watch` for WATCH's fingerprint read). */
  name?: string;
  /**
   * `args` as a RESP request (client-cost.ts requestBytes), measured when the item is made, while its
   * arguments are fresh in the CPU's cache: the batcher's large-work check and the cost accounting
   * read this number instead of walking the arguments again when the answer comes.
   */
  bytes?: number;
}

/** MULTI … EXEC: the queued commands, sent as one /multi-exec call; `parts` builds the EXEC array. */
export interface TransactionItem {
  kind: 'transaction';
  commands: Buffer[][];
  parts: ExecPart[];
  slot: number;
  /** Keys watched before MULTI: the transaction goes as one EVAL that checks them first. */
  watch?: WatchedKeys;
  /** The protocol at EXEC (the null EXEC's form); 2 when absent. */
  protocol?: Protocol;
  /** performance.now() when EXEC was read (INFO commandstats). */
  readAt?: number;
}

/** A blocking command emulated by polling (blocking.ts): it holds the connection's barrier while it polls. */
export interface BlockingItem {
  kind: 'blocking';
  plan: BlockingPlan;
  slot: number;
  shape: ReplyShape | undefined;
  /** The command and when it was read, for INFO commandstats. */
  name?: string;
  readAt?: number;
}

export type ForwardItem = CommandItem | TransactionItem | BlockingItem;

/**
 * One reply of an EXEC array: known at EXEC (local commands), or item `index` of the /multi-exec
 * answer; `name` is the queued command's (INFO commandstats counts it when EXEC runs it).
 */
export type ExecPart = { name: string } & (
  { reply: Buffer } | { index: number; shape: ReplyShape; protocol: Protocol; transform: ((reply: Buffer) => Buffer) | undefined }
);
