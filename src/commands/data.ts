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

const require = createRequire(import.meta.url);

/**
 * The generated data (top-level commands sorted by name). Read by require, not as a JSON module: Node 20
 * decodes a JSON module through TextDecoder and wraps it in a module record (~19 ms against ~2.5 ms).
 * In dist/ the file names `docsFile`: the build keeps there the docs beyond group, since and module
 * (scripts/split-command-data.mjs), read by the first fullDocs() call.
 */
const file = require('./redis-8.8.0.json') as CommandDataFile & { docsFile?: string };
export const commandData: CommandDataFile = file;

/** The commands of a split file whose docs are still the head (group, since, module). */
const headOnly = new WeakSet<CommandData>();
let docsRest: Record<string, Partial<CommandDocsData>> | undefined;
if (file.docsFile) {
  const mark = (c: CommandData): void => {
    headOnly.add(c);
    c.subcommands?.forEach(mark);
  };
  file.commands.forEach(mark);
}

/** A command's whole docs (COMMAND DOCS), read from the docs file the first time in dist/. */
export function fullDocs(c: CommandData): CommandDocsData {
  if (!headOnly.has(c)) return c.docs;
  docsRest ??= require(`./${file.docsFile!}`) as Record<string, Partial<CommandDocsData>>;
  headOnly.delete(c);
  return (c.docs = { ...c.docs, ...docsRest[c.name] });
}
