// How a flag is declared in the option table (options.ts) and handed to commander: its parser runs on
// a given value, on its environment variable's value and on its default, so a role receives typed,
// checked values; errors name the flag.
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { ConfigError, parseYesNo } from '../config.js';

/** Reads one flag's value (given, from its environment variable, or the default); errors name `flag`. */
type Parser<T> = (value: string, flag: string) => T;

export interface OptionSpec<T = unknown> {
  /** commander's flags: '--port <port>', or '--acl-users [yes|no]' for a switch. */
  flags: string;
  env: string;
  description: string;
  /** The default as --help and the README show it; the parser reads it like a given value. */
  defaultText?: string;
  parse?: Parser<T>;
  /** Shown in --help; the parser checks them. */
  choices?: readonly string[];
  /** The value of a switch given without one. */
  preset?: string;
  /** A list flag: each use adds its parsed items (an array) to the previous uses' (the default is replaced). */
  repeatable?: boolean;
}

interface More<T> {
  parse?: Parser<T>;
  choices?: readonly string[];
  preset?: string;
  repeatable?: boolean;
}

export function option<T = string>(flags: string, env: string, description: string, more: More<T> & { default: string }): OptionSpec<T>;
export function option<T = string>(flags: string, env: string, description: string, more?: More<T>): OptionSpec<T | undefined>;
export function option<T>(flags: string, env: string, description: string, more: More<T> & { default?: string } = {}): OptionSpec<T> {
  return {
    flags,
    env,
    description,
    defaultText: more.default,
    parse: more.parse,
    choices: more.choices,
    preset: more.preset,
    repeatable: more.repeatable,
  };
}

/** A switch: `--flag` alone, or yes/no from its environment variable (RESPGATE_ACL_USERS=0 is off). */
export function yesNo(flag: string, env: string, description: string): OptionSpec<boolean> {
  return option(`${flag} [yes|no]`, env, description, { default: 'no', parse: parseYesNo, preset: 'yes' });
}

/** The first line of a file: a password kept out of ps and shell history. */
export function secretFile(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a readable file`);
  }
  const line = text.split(/\r?\n/)[0];
  if (!line) throw new ConfigError(`${flag}: '${file}' is empty; put the password on its first line`);
  return line;
}

export function pemFile(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a readable PEM file`);
  }
}

export type OptionTable = Record<string, OptionSpec<unknown>>;

/** The parsed values a role's action receives from a table. */
export type Flags<T extends OptionTable> = { [K in keyof T]: T[K] extends OptionSpec<infer V> ? V : never };

/**
 * Adds a table's flags to a role's command, each with its environment variable, choices, parser and
 * default (commander passes the previous value too: a flag given twice counts once, the last).
 */
export function addOptions(cmd: Command, table: OptionTable): Command {
  for (const [key, spec] of Object.entries(table)) {
    const o = new Option(spec.flags, spec.description).env(spec.env);
    if (o.attributeName() !== key) throw new Error(`option table: ${spec.flags} is keyed '${key}', not '${o.attributeName()}'`);
    if (spec.choices) o.choices(spec.choices);
    const one = spec.parse ?? ((value: string) => value);
    const defaultValue = spec.defaultText === undefined ? undefined : one(spec.defaultText, o.long!);
    // A repeatable flag's later uses add to its first (whose value replaces the default).
    const parse = (value: string, flag: string, previous: unknown) => {
      const v = one(value, flag);
      if (!spec.repeatable || previous === defaultValue || !Array.isArray(previous)) return v;
      return [...(previous as unknown[]), ...(v as unknown[])];
    };
    if (spec.defaultText === undefined) {
      // Empty (RESPGATE_TLS_PORT= as compose files write it) is the same as not given: the
      // default, or for a flag without one no value (see withoutEmpty).
      o.argParser((value: string, previous: unknown) => (value === '' ? '' : parse(value, o.long!, previous)));
    } else {
      o.argParser((value: string, previous: unknown) => (value === '' ? defaultValue : parse(value, o.long!, previous)));
      o.default(defaultValue, spec.defaultText);
    }
    if (spec.preset !== undefined) o.preset(spec.preset);
    cmd.addOption(o);
  }
  return cmd;
}

/**
 * A role's flags as its action receives them: a flag without a default that was given empty (an
 * environment variable set to nothing) is left out, as if not given. commander stores a parser's
 * `undefined` as '', so the parsers above keep '' and it is dropped here.
 */
export function withoutEmpty<T extends object>(flags: T): T {
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== '')) as T;
}
