// The flags every side-port listener takes, one table for both ports: its own TLS port and
// certificate, and the proxy port's limits (maxclients, timeout, buffer limits, SLOWLOG, the SIGTERM
// grace), each under the port's prefix (`--vector-maxclients`, RESPGATE_VECTOR_MAXCLIENTS) so the
// vector and queue ports of one `respgate dev` can differ. The CLI adds them with addListenerOptions
// and reads them with listenerSettings; --help and the README's table come from this table.
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { ConfigError, parseNonNegativeInt, parsePort, parseSize, PROXY_DEFAULTS, sizeText, type TlsListenerConfig } from './config.js';
import type { PortLimits } from './server/table-port.js';

export type ListenerRole = 'vector' | 'queue';

interface ListenerFlag {
  /** After the prefix: `--<role>-<name>`. */
  name: string;
  arg: string;
  help: string;
  default?: string;
  /** The limit it sets, and how its text is read. */
  limit?: { key: keyof PortLimits; parse: 'size' | 'count' | 'positive' | 'integer' };
}

const FLAGS: readonly ListenerFlag[] = [
  { name: 'tls-port', arg: '<port>', help: 'also accept TLS connections on this port; needs the certificate and key files' },
  { name: 'tls-cert-file', arg: '<file>', help: 'PEM certificate of its TLS port' },
  { name: 'tls-key-file', arg: '<file>', help: 'PEM private key of its TLS port' },
  { name: 'tls-ca-cert-file', arg: '<file>', help: 'PEM CA certificates that sign client certificates' },
  { name: 'tls-auth-clients', arg: '<mode>', help: 'client certificates: yes (required), optional, or no', default: 'yes' },
  {
    name: 'maxclients',
    arg: '<n>',
    help: 'most client connections at once (like Redis maxclients)',
    default: String(PROXY_DEFAULTS.maxClients),
    limit: { key: 'maxClients', parse: 'positive' },
  },
  {
    name: 'timeout',
    arg: '<seconds>',
    help: 'close clients idle this long; 0 = never (like Redis timeout)',
    default: String(PROXY_DEFAULTS.idleTimeoutSec),
    limit: { key: 'idleTimeoutSec', parse: 'count' },
  },
  {
    name: 'client-output-buffer-limit',
    arg: '<size>',
    help: 'a client that leaves more replies than this unread is disconnected',
    default: sizeText(PROXY_DEFAULTS.outputLimitBytes),
    limit: { key: 'outputLimitBytes', parse: 'size' },
  },
  {
    name: 'client-query-buffer-limit',
    arg: '<size>',
    help: 'largest incomplete request buffered for a client (like Redis client-query-buffer-limit)',
    default: sizeText(PROXY_DEFAULTS.maxQueryBufferBytes),
    limit: { key: 'maxQueryBufferBytes', parse: 'size' },
  },
  {
    name: 'proto-max-bulk-len',
    arg: '<size>',
    help: 'largest argument a client may send (like Redis proto-max-bulk-len)',
    default: sizeText(PROXY_DEFAULTS.maxBulkLength),
    limit: { key: 'maxBulkLength', parse: 'size' },
  },
  {
    name: 'slowlog-log-slower-than',
    arg: '<us>',
    help: 'SLOWLOG records commands slower than this many microseconds; < 0 = off',
    default: String(PROXY_DEFAULTS.slowlogLogSlowerThanUs),
    limit: { key: 'slowlogLogSlowerThanUs', parse: 'integer' },
  },
  {
    name: 'slowlog-max-len',
    arg: '<n>',
    help: 'entries SLOWLOG keeps',
    default: String(PROXY_DEFAULTS.slowlogMaxLen),
    limit: { key: 'slowlogMaxLen', parse: 'count' },
  },
  {
    name: 'shutdown-timeout',
    arg: '<ms>',
    help: 'on SIGTERM, how long commands in flight have to finish before connections close',
    default: String(PROXY_DEFAULTS.shutdownGraceMs),
    limit: { key: 'shutdownGraceMs', parse: 'count' },
  },
];

const flagOf = (role: ListenerRole, f: ListenerFlag) => `--${role}-${f.name}`;
const keyOf = (role: ListenerRole, f: ListenerFlag) => `${role}-${f.name}`.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Adds the listener flags of the `role` side port to a command. */
export function addListenerOptions(cmd: Command, role: ListenerRole): Command {
  for (const f of FLAGS) {
    const o = new Option(`${flagOf(role, f)} ${f.arg}`, `${role} side port: ${f.help}`).env(
      `RESPGATE_${role.toUpperCase()}_${f.name.toUpperCase().replace(/-/g, '_')}`,
    );
    if (f.default !== undefined) o.default(f.default);
    cmd.addOption(o);
  }
  return cmd;
}

/** The TLS listener and limits of the `role` side port from parsed flags (commander's camelCase keys). */
export function listenerSettings(flags: object, role: ListenerRole): { tls?: TlsListenerConfig; limits: Partial<PortLimits> } {
  const value = (name: string): string | undefined => {
    const f = FLAGS.find((x) => x.name === name)!;
    return (flags as Record<string, string | undefined>)[keyOf(role, f)] ?? f.default;
  };
  const limits: Partial<PortLimits> = {};
  for (const f of FLAGS) {
    const text = value(f.name);
    if (!f.limit || text === undefined) continue;
    limits[f.limit.key] = parseLimit(text, f.limit.parse, flagOf(role, f));
  }
  return { tls: tlsSettings(value, role), limits };
}

function parseLimit(text: string, how: NonNullable<ListenerFlag['limit']>['parse'], flag: string): number {
  if (how === 'size') return parseSize(text, flag);
  if (how === 'integer') {
    if (!/^-?\d+$/.test(text.trim())) throw new ConfigError(`${flag} must be a whole number, got '${text}'`);
    return Number(text);
  }
  const n = parseNonNegativeInt(text, flag);
  if (how === 'positive' && n < 1) throw new ConfigError(`${flag} must be at least 1`);
  return n;
}

function tlsSettings(value: (name: string) => string | undefined, role: ListenerRole): TlsListenerConfig | undefined {
  const flag = (name: string) => `--${role}-${name}`;
  const port = value('tls-port');
  const cert = value('tls-cert-file');
  const key = value('tls-key-file');
  const ca = value('tls-ca-cert-file');
  if (!port) {
    if (cert || key)
      throw new ConfigError(`${flag('tls-cert-file')} and ${flag('tls-key-file')} need ${flag('tls-port')} (the port of TLS connections)`);
    return undefined;
  }
  if (!cert || !key) throw new ConfigError(`${flag('tls-port')} needs ${flag('tls-cert-file')} and ${flag('tls-key-file')} (PEM files)`);
  const mode = (value('tls-auth-clients') ?? 'yes').toLowerCase();
  if (mode !== 'yes' && mode !== 'no' && mode !== 'optional')
    throw new ConfigError(`${flag('tls-auth-clients')} must be yes, no or optional, got '${value('tls-auth-clients')}'`);
  if (mode !== 'no' && !ca)
    throw new ConfigError(
      `${flag('tls-auth-clients')} ${mode} needs ${flag('tls-ca-cert-file')} (the CA of client certificates), or use ${flag('tls-auth-clients')} no`,
    );
  return {
    port: parsePort(port, flag('tls-port')),
    cert: readPem(cert, flag('tls-cert-file')),
    key: readPem(key, flag('tls-key-file')),
    ca: ca ? readPem(ca, flag('tls-ca-cert-file')) : undefined,
    authClients: mode,
  };
}

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a readable PEM file`);
  }
}
