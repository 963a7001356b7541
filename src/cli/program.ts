// The command line's program: one command per role, its flags from the option table, and an action
// that loads the role's modules only when that role starts (a proxy never loads the platform, BullMQ
// or the vector library: issue 25). A role's flags are made when commander dispatches to it (its run,
// its --help, `help <role>`): commander's options for all five roles cost ~5 ms of every start.
import { Command, Help } from 'commander';
import { VERSION } from './banner.js';
import { addOptions, withoutEmpty, type Flags, type OptionTable } from './option-spec.js';
import { ROLE_OPTIONS } from './options.js';

/** A role's command: its flags, and its module, imported when the role runs. */
function role<T extends OptionTable>(
  program: Command,
  name: string,
  description: string,
  table: T,
  load: () => Promise<{ run(flags: Flags<T>): Promise<void> }>,
  isDefault = false,
): void {
  const cmd = program.command(name, { isDefault }).description(description);
  cmd.action(async (flags: Flags<T>) => (await load()).run(withoutEmpty(flags)));
  // `help <role>` shows the role's help without dispatching to it.
  cmd.on('beforeHelp', () => makeFlags(cmd));
  unmadeFlags.set(cmd, () => addOptions(cmd, table));
}

/** Each role's flags, until they are made: when commander dispatches to the role, or shows its help. */
const unmadeFlags = new WeakMap<Command, () => void>();

function makeFlags(cmd: Command): void {
  unmadeFlags.get(cmd)?.();
  unmadeFlags.delete(cmd);
}

/** The program; with `flagsOnUse` (bin/respgate's), each role's flags are made only when that role runs or shows its help. */
export function buildProgram({ flagsOnUse = false } = {}): Command {
  const program = new Command('respgate')
    .version(VERSION)
    .description(
      'A Redis-protocol gateway to HTTP data services, with a faithful local platform.\n' +
        'Every flag can also be set by the environment variable shown next to it.',
    )
    .addHelpText(
      'after',
      '\nEach role has its own flags: respgate dev --help, respgate proxy --help, respgate platform --help,\n' +
        'respgate vector --help, respgate queue --help. From a clone: npx respgate <role> … or npm start -- <role> ….',
    )
    .showHelpAfterError()
    .hook('preSubcommand', (_program, cmd) => makeFlags(cmd))
    // The list of roles says each has options, made or not.
    .configureHelp({ subcommandTerm: (cmd) => (unmadeFlags.has(cmd) ? `${cmd.name()} [options]` : new Help().subcommandTerm(cmd)) });
  role(
    program,
    'dev',
    'start the dev stack: embedded redis-servers, the local platform, the proxy and the side ports in front of it (default command)',
    ROLE_OPTIONS.dev,
    () => import('./roles/dev.js'),
    true,
  );
  role(
    program,
    'proxy',
    'start the proxy alone, in front of a remote REST key-value database (--upstream-url, --upstream-token)',
    ROLE_OPTIONS.proxy,
    () => import('./roles/proxy.js'),
  );
  role(
    program,
    'platform',
    'start the local platform alone (REST API on --http-port)',
    ROLE_OPTIONS.platform,
    () => import('./roles/platform.js'),
  );
  role(
    program,
    'vector',
    'start the vector side port alone, in front of a remote vector index (--vector-url, --vector-token)',
    ROLE_OPTIONS.vector,
    () => import('./roles/vector.js'),
  );
  role(
    program,
    'queue',
    'start the queue side port alone, in front of a remote queue API (--queue-url, --queue-token) and optionally the account API',
    ROLE_OPTIONS.queue,
    () => import('./roles/queue.js'),
  );
  if (!flagsOnUse) for (const cmd of program.commands) makeFlags(cmd);
  return program;
}
