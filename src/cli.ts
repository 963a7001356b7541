// The entry point of bin/respgate (dist/cli.js): runs the command line of src/cli/program.ts and
// turns a configuration error into one clear line on stderr and exit code 1.
import { buildProgram } from './cli/program.js';
import { ConfigError } from './config.js';

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram({ flagsOnUse: true }).parseAsync(argv);
  } catch (err) {
    const message = err instanceof ConfigError ? `configuration error: ${err.message}` : `respgate: ${(err as Error).message}`;
    process.stderr.write(message + '\n');
    process.exitCode = 1;
  }
}
