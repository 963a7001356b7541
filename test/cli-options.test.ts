// The option table in-process: each flag's value parsed by commander from the command line, its
// RESPGATE_* variable or its default, with errors that name the flag; and what the proxy's
// configuration checks across flags.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { addOptions, withoutEmpty, type OptionTable } from '../src/cli/option-spec.js';
import { ENV, FLAG, ROLE_OPTIONS } from '../src/cli/options.js';
import { platformConfig } from '../src/cli/platform-config.js';
import { buildProgram } from '../src/cli/program.js';
import { databasesOf, proxyConfig } from '../src/cli/proxy-config.js';
import { ConfigError } from '../src/config.js';

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

/** A role's flags as its action would receive them, from `args` and the environment `env`. */
function parse<T extends OptionTable>(table: T, args: string[], env: Record<string, string> = {}) {
  for (const k of Object.keys(process.env)) if (k.startsWith('RESPGATE_')) delete process.env[k];
  Object.assign(process.env, env);
  const cmd = addOptions(new Command('role').exitOverride(), table);
  cmd.parse(args, { from: 'user' });
  return withoutEmpty(cmd.opts()) as Record<string, unknown>;
}

describe('the option table', () => {
  it('gives every flag of every role a RESPGATE_* variable named after it', () => {
    for (const cmd of buildProgram().commands) {
      for (const o of cmd.options)
        expect(o.envVar, `${cmd.name()} ${o.long}`).toBe(`RESPGATE_${o.long!.slice(2).toUpperCase().replace(/-/g, '_')}`);
    }
  });

  it('adds up a repeatable flag (--vector-index), whose first use replaces the default', () => {
    expect(parse(ROLE_OPTIONS.dev, []).vectorIndex).toEqual(['dense']);
    expect(parse(ROLE_OPTIONS.dev, ['--vector-index', 'tiny']).vectorIndex).toEqual(['tiny']);
    expect(parse(ROLE_OPTIONS.dev, ['--vector-index', 'dense', '--vector-index', 'a,b']).vectorIndex).toEqual(['dense', 'a', 'b']);
    expect(parse(ROLE_OPTIONS.dev, [], { RESPGATE_VECTOR_INDEX: 'dense tiny' }).vectorIndex).toEqual(['dense', 'tiny']);
    expect(parse(ROLE_OPTIONS.vector, []).vectorIndex).toBeUndefined();
    expect(
      parse(ROLE_OPTIONS.vector, ['--vector-index', 'http://h/vector/a', '--vector-index', 'https://h/vector/b,tok,en']).vectorIndex,
    ).toEqual([{ url: 'http://h/vector/a' }, { url: 'https://h/vector/b', token: 'tok,en' }]);
    expect(parse(ROLE_OPTIONS.vector, [], { RESPGATE_VECTOR_INDEX: 'http://h/a,t1 http://h/b' }).vectorIndex).toEqual([
      { url: 'http://h/a', token: 't1' },
      { url: 'http://h/b' },
    ]);
    expect(() => parse(ROLE_OPTIONS.vector, ['--vector-index', 'h/vector/a'])).toThrow(
      new ConfigError("--vector-index: 'h/vector/a' is not an http(s) URL; give URL[,TOKEN]"),
    );
  });

  it('reads --database N=URL[,TOKEN] (repeatable, or RESPGATE_DATABASE entries) and --databases, with errors naming the flag', () => {
    expect(parse(ROLE_OPTIONS.proxy, []).database).toBeUndefined();
    expect(
      parse(ROLE_OPTIONS.proxy, ['--database', '2=https://b.example,tok,en', '--database', '15=http://127.0.0.1:8079/db/15']).database,
    ).toEqual([
      { index: 2, url: 'https://b.example', token: 'tok,en' },
      { index: 15, url: 'http://127.0.0.1:8079/db/15' },
    ]);
    expect(parse(ROLE_OPTIONS.proxy, [], { RESPGATE_DATABASE: '1=http://h/a,t1 3=http://h/b' }).database).toEqual([
      { index: 1, url: 'http://h/a', token: 't1' },
      { index: 3, url: 'http://h/b' },
    ]);
    expect(() => parse(ROLE_OPTIONS.proxy, ['--database', 'https://b.example'])).toThrow(
      new ConfigError("--database: 'https://b.example' is not N=URL[,TOKEN] (e.g. 2=https://other.upstash.io,TOKEN)"),
    );
    expect(() => parse(ROLE_OPTIONS.proxy, ['--database', '0=https://b.example'])).toThrow(
      new ConfigError('--database: database 0 is the main upstream (--upstream-url); number the others from 1'),
    );
    expect(() => parse(ROLE_OPTIONS.proxy, ['--database', '2=redis://b:6379'])).toThrow(
      new ConfigError("--database: 'redis://b:6379' is not an http(s) URL; give URL[,TOKEN]"),
    );
    expect(() =>
      databasesOf([
        { index: 2, url: 'http://a' },
        { index: 2, url: 'http://b' },
      ]),
    ).toThrow(new ConfigError('--database 2 is given twice'));
    expect(parse(ROLE_OPTIONS.dev, []).databases).toBe(16);
    expect(parse(ROLE_OPTIONS.platform, ['--databases', '4']).databases).toBe(4);
    expect(parse(ROLE_OPTIONS.platform, [], { RESPGATE_DATABASES: '1' }).databases).toBe(1);
    expect(() => parse(ROLE_OPTIONS.platform, ['--databases', '0'])).toThrow(new ConfigError('--databases must be from 1 to 1000, got 0'));
  });

  it("makes a role's flags only when that role is used (bin/respgate's program): its help is the whole program's", async () => {
    const whole = buildProgram();
    for (const role of ['dev', 'proxy', 'platform', 'vector', 'queue']) {
      const program = buildProgram({ flagsOnUse: true });
      expect(program.commands.filter((c) => c.options.length > 0)).toEqual([]);
      let out = '';
      for (const c of program.commands) c.exitOverride().configureOutput({ writeOut: (s) => (out += s) });
      await expect(program.parseAsync(['node', 'respgate', role, '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
      expect(program.commands.filter((c) => c.options.length > 0).map((c) => c.name())).toEqual([role]);
      expect(out).toBe(whole.commands.find((c) => c.name() === role)!.helpInformation());
    }
  });

  it('gives defaults parsed like given values, and shows them as written', () => {
    const f = parse(ROLE_OPTIONS.proxy, []);
    expect(f).toMatchObject({
      port: 6379,
      protoMaxBulkLen: 512 * 1024 ** 2,
      upstreamFormat: 'auto',
      aclUsers: false,
      tlsAuthClients: 'yes',
    });
    expect(f.tlsPort).toBeUndefined();
    const help = buildProgram()
      .commands.find((c) => c.name() === 'proxy')!
      .helpInformation()
      .replace(/\s+/g, ' ');
    expect(help).toContain('(default: 512mb, env: RESPGATE_PROTO_MAX_BULK_LEN)');
    expect(help).toContain('(choices: "auto", "resp2", "json", default: auto, env: RESPGATE_UPSTREAM_FORMAT)');
  });

  it('a flag wins over its variable; a variable over the default', () => {
    expect(parse(ROLE_OPTIONS.proxy, ['--port', '7000'], { RESPGATE_PORT: '7001' }).port).toBe(7000);
    expect(parse(ROLE_OPTIONS.proxy, [], { RESPGATE_PORT: '7001' }).port).toBe(7001);
  });

  it('a bad value, given or from the environment, names the flag, the value and the expected form', () => {
    expect(() => parse(ROLE_OPTIONS.proxy, [], { RESPGATE_PROTO_MAX_BULK_LEN: 'lots' })).toThrow(
      new ConfigError("--proto-max-bulk-len must be a size such as 1048576, 512kb or 10mb, got 'lots'"),
    );
    expect(() => parse(ROLE_OPTIONS.proxy, ['--maxclients', '0'])).toThrow(new ConfigError('--maxclients must be at least 1'));
    expect(() => parse(ROLE_OPTIONS.vector, ['--vector-client-output-buffer-limit', '32mb'])).toThrow(
      new ConfigError(
        "--vector-client-output-buffer-limit takes Redis' form such as 'normal 0 0 0 pubsub 32mb 8mb 60', got '32mb': Wrong number of arguments in buffer limit configuration.",
      ),
    );
    expect(() => parse(ROLE_OPTIONS.proxy, ['--client-output-buffer-limit', 'master 1 1 1'])).toThrow(
      /Invalid client class specified in buffer limit configuration/,
    );
    expect(() => parse(ROLE_OPTIONS.proxy, ['--slowlog-log-slower-than', '1.5'])).toThrow(
      new ConfigError("--slowlog-log-slower-than must be a whole number, got '1.5'"),
    );
    expect(() => parse(ROLE_OPTIONS.vector, ['--log-level', 'loud'])).toThrow(
      new ConfigError("--log-level must be fatal, error, warn, info, debug, trace or silent (got 'loud')"),
    );
    expect(() => parse(ROLE_OPTIONS.platform, ['--redis-url', 'http://x'])).toThrow(/--redis-url must start with redis:\/\//);
  });

  it('choices are read in any letter case', () => {
    expect(parse(ROLE_OPTIONS.proxy, [], { RESPGATE_UPSTREAM_FORMAT: 'JSON' }).upstreamFormat).toBe('json');
    expect(parse(ROLE_OPTIONS.proxy, ['--tls-auth-clients', 'Optional']).tlsAuthClients).toBe('optional');
    expect(() => parse(ROLE_OPTIONS.proxy, ['--tls-auth-clients', 'maybe'])).toThrow(
      new ConfigError("--tls-auth-clients must be yes, no or optional (got 'maybe')"),
    );
  });

  it('switches: the flag alone is on; their variables take yes/no, and 0 or false is off', () => {
    expect(parse(ROLE_OPTIONS.proxy, ['--acl-users', '--port', '1']).aclUsers).toBe(true);
    expect(parse(ROLE_OPTIONS.proxy, ['--acl-users', 'no']).aclUsers).toBe(false);
    for (const [value, on] of [
      ['1', true],
      ['yes', true],
      ['TRUE', true],
      ['0', false],
      ['false', false],
      ['off', false],
      ['', false],
    ] as const)
      expect(parse(ROLE_OPTIONS.queue, [], { RESPGATE_ALLOW_UNAUTHENTICATED: value }).allowUnauthenticated, value).toBe(on);
    expect(() => parse(ROLE_OPTIONS.proxy, [], { RESPGATE_ACL_USERS: 'maybe' })).toThrow(
      new ConfigError("--acl-users must be yes or no (also true/false, 1/0, on/off), got 'maybe'"),
    );
  });

  it('a variable set to nothing is not given: the default, or no value', () => {
    expect(parse(ROLE_OPTIONS.proxy, [], { RESPGATE_PORT: '', RESPGATE_UPSTREAM_FORMAT: '', RESPGATE_ACL_USERS: '' })).toMatchObject({
      port: 6379,
      upstreamFormat: 'auto',
      aclUsers: false,
    });
    const f = parse(ROLE_OPTIONS.proxy, [], { RESPGATE_TLS_PORT: '', RESPGATE_METRICS_PORT: '', RESPGATE_UPSTREAM_URL: '' });
    expect(f.tlsPort).toBeUndefined();
    expect(f.metricsPort).toBeUndefined();
    expect(f.upstreamUrl).toBeUndefined();
    expect(parse(ROLE_OPTIONS.proxy, ['--tls-port', '0']).tlsPort).toBe(0);
  });

  it('the dev stack turns a side port off with "off"', () => {
    expect(parse(ROLE_OPTIONS.dev, ['--vector-port', 'off', '--queue-port', '0'])).toMatchObject({ vectorPort: 'off', queuePort: 0 });
    expect(() => parse(ROLE_OPTIONS.dev, ['--queue-port', 'of'])).toThrow(
      "--queue-port must be a TCP port number from 0 to 65535, got 'of'",
    );
  });

  it('file flags read their file: the password is its first line; a missing or empty file is named', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-options-'));
    try {
      writeFileSync(path.join(dir, 'pass'), 's3cret\nignored\n');
      writeFileSync(path.join(dir, 'empty'), '');
      expect(parse(ROLE_OPTIONS.proxy, ['--requirepass-file', path.join(dir, 'pass')]).requirepassFile).toBe('s3cret');
      expect(() => parse(ROLE_OPTIONS.proxy, ['--requirepass-file', path.join(dir, 'empty')])).toThrow(
        `--requirepass-file: '${path.join(dir, 'empty')}' is empty; put the password on its first line`,
      );
      expect(() => parse(ROLE_OPTIONS.proxy, [], { RESPGATE_TLS_CERT_FILE: path.join(dir, 'none.pem') })).toThrow(
        `--tls-cert-file: cannot read '${path.join(dir, 'none.pem')}' (ENOENT); give a readable PEM file`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names flags and variables for error texts from the table', () => {
    expect(FLAG.tlsPort).toBe('--tls-port');
    expect(FLAG.aclUsers).toBe('--acl-users');
    expect(ENV.upstreamUrl).toBe('RESPGATE_UPSTREAM_URL');
  });
});

describe('the proxy configuration across flags', () => {
  const config = (args: string[]) => () => proxyConfig(parse(ROLE_OPTIONS.proxy, args) as never, 'http://127.0.0.1:1', 't');

  it('takes the parsed values as they are', () => {
    expect(config(['--client-output-buffer-limit', 'normal 1kb 0 0', '--timeout', '30'])()).toMatchObject({
      port: 6379,
      outputBufferLimits: {
        normal: { hard: 1024n, soft: 0n, softSeconds: 0 },
        replica: { hard: 256n * 1024n * 1024n, soft: 64n * 1024n * 1024n, softSeconds: 60 },
        pubsub: { hard: 32n * 1024n * 1024n, soft: 8n * 1024n * 1024n, softSeconds: 60 },
      },
      idleTimeoutSec: 30,
      upstreamTimeoutMs: 5000,
    });
  });

  it('refuses a password given twice, and TLS flags without each other', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-options-'));
    try {
      const file = path.join(dir, 'f');
      writeFileSync(file, 'x\n');
      expect(config(['--requirepass', 'a', '--requirepass-file', file])).toThrow(
        new ConfigError('give --requirepass or --requirepass-file, not both'),
      );
      expect(config(['--tls-port', '6390'])).toThrow(new ConfigError('--tls-port needs --tls-cert-file and --tls-key-file (PEM files)'));
      expect(config(['--tls-cert-file', file])).toThrow(
        new ConfigError('--tls-cert-file and --tls-key-file need --tls-port (the port of TLS connections)'),
      );
      expect(config(['--tls-port', '6390', '--tls-cert-file', file, '--tls-key-file', file])).toThrow(
        new ConfigError('--tls-auth-clients yes needs --tls-ca-cert-file (the CA of client certificates), or use --tls-auth-clients no'),
      );
      expect(
        config(['--tls-port', '6390', '--tls-cert-file', file, '--tls-key-file', file, '--tls-auth-clients', 'no'])().tls,
      ).toMatchObject({
        port: 6390,
        authClients: 'no',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the platform configuration: data directory flags', () => {
  const config = (args: string[], env: Record<string, string> = {}) => platformConfig(parse(ROLE_OPTIONS.platform, args, env) as never);

  it('keeps the data in ./.respgate-data unless --ephemeral, whose variable reads yes/no', () => {
    expect(parse(ROLE_OPTIONS.platform, []).ephemeral).toBe(false);
    expect(parse(ROLE_OPTIONS.platform, ['--ephemeral']).ephemeral).toBe(true);
    // Both external stores given: nothing embedded, so no secrets.json is read or written here.
    const remote = ['--redis-url', 'redis://127.0.0.1:1', '--internal-redis-url', 'redis://127.0.0.1:2'];
    expect(config(remote).dataDir).toBe(path.resolve('.respgate-data'));
    expect(config(remote, { RESPGATE_EPHEMERAL: '1' }).dataDir).toBeUndefined();
    expect(config(remote, { RESPGATE_EPHEMERAL: '0' }).dataDir).toBe(path.resolve('.respgate-data'));
    expect(config([...remote, '--data-dir', '/var/lib/respgate']).dataDir).toBe('/var/lib/respgate');
    expect(() => parse(ROLE_OPTIONS.platform, [], { RESPGATE_EPHEMERAL: 'sometimes' })).toThrow(
      new ConfigError("--ephemeral must be yes or no (also true/false, 1/0, on/off), got 'sometimes'"),
    );
  });

  it('refuses --data-dir with --ephemeral', () => {
    expect(() => config(['--ephemeral', '--data-dir', 'x'])).toThrow(
      new ConfigError('give --data-dir (keep the data there) or --ephemeral (keep nothing), not both'),
    );
  });

  it('keeps generated tokens in the data directory; given ones win', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-options-'));
    try {
      const first = config(['--data-dir', dir]);
      expect(first.token).toMatch(/\S{20,}/);
      const again = config(['--data-dir', dir]);
      expect([again.token, again.readonlyToken, again.accountKey]).toEqual([first.token, first.readonlyToken, first.accountKey]);
      expect(config(['--data-dir', dir, '--token', 'mine']).token).toBe('mine');
      expect(config(['--data-dir', dir], { RESPGATE_EPHEMERAL: '0' }).token).toBe(first.token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
