/**
 * The command data of Redis 8.8.0 as Redis itself describes it (COMMAND INFO + COMMAND DOCS), recorded by
 * scripts/gen-command-data.ts from a running redis-server 8.8.0 (vector sets built in) into redis-8.8.0.json. Commands and subcommands are sorted by name; every
 * other list and map keeps Redis' order so that introspection.ts can re-encode Redis' replies exactly.
 *
 * Key specs and arguments are Redis' maps verbatim (snake_case field names such as `key_spec_index`,
 * `begin_search`). In them every string is a bulk string except the entries of `flags` lists (status
 * replies), and every number is an integer.
 */
import { createRequire } from 'node:module';

/** A value inside a Redis map as JSON: a string, an integer, a list, or a map (an object in Redis' order). */
export type Plain = string | number | null | Plain[] | { [k: string]: Plain };
export type PlainMap = { [k: string]: Plain };

export interface CommandDocsData {
  summary?: string;
  since?: string;
  group: string;
  complexity?: string;
  /** For module commands (group `module`): the module's name, e.g. `vectorset`. */
  module?: string;
  /** Status replies, e.g. `deprecated`, `syscmd`. */
  docFlags?: string[];
  deprecatedSince?: string;
  replacedBy?: string;
  /** [version, description] pairs. */
  history?: [string, string][];
  /** Redis' argument maps verbatim: name, type, key_spec_index, token, summary, since, deprecated_since, flags, arguments. */
  arguments?: PlainMap[];
}

export interface CommandData {
  /** Lowercase; `container|sub` for subcommands. */
  name: string;
  arity: number;
  /** Status replies as COMMAND INFO lists them, e.g. `write`, `denyoom`. */
  flags: string[];
  firstKey: number;
  lastKey: number;
  step: number;
  /** As COMMAND INFO lists them, with the `@`: `@write`, `@string`, `@slow`. */
  aclCategories: string[];
  tips: string[];
  /** Redis' key-spec maps verbatim: notes?, flags, begin_search, find_keys. */
  keySpecs: PlainMap[];
  docs: CommandDocsData;
  /** Sorted by name. */
  subcommands?: CommandData[];
}

export interface CommandDataFile {
  redisVersion: string;
  generatedBy: string;
  commands: CommandData[];
}

/** The generated data (top-level commands sorted by name). */
// Read by require, not as a JSON module: Node 20 decodes a JSON module's 580 KiB through TextDecoder and
// wraps it in a module record, ~19 ms against ~2.5 ms for require's read and parse (bench/README.md, 2026-11-28).
export const commandData = createRequire(import.meta.url)('./redis-8.8.0.json') as CommandDataFile;
