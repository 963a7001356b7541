// ACCOUNT commands of the queue side port, over Area A (the Developer API's QStash part): switch the
// production pack of a queue instance off (or on) and set its monthly budget.
import type { AccountClient } from '../upstream/account-client.js';
import { CommandError, integerArg, text } from './args.js';
import type { PortCommand, Reply } from './port-command.js';
import { writeJson } from './json-reply.js';

const json =
  (value: unknown): Reply =>
  (w) =>
    writeJson(w, value);

/** The answer is the JSON string "OK": a status reply, as Redis answers a setting it accepted. */
const ok = (value: unknown): Reply => (value === 'OK' ? Buffer.from('+OK\r\n') : json(value));

export function accountCommands(client: AccountClient | undefined): PortCommand[] {
  const need = (): AccountClient => {
    if (!client)
      throw new CommandError(
        'ERR ACCOUNT commands need the account API: give --account-url, --account-email and --account-key (or run respgate dev for a local one)',
      );
    return client;
  };
  const sub = (
    name: string,
    arity: number,
    summary: string,
    upstream: string,
    args: PortCommand['args'],
    run: PortCommand['run'],
  ): PortCommand => ({ name, arity, summary, upstream, group: 'account', flags: [], acl: [], args, run });
  const subs: PortCommand[] = [
    sub(
      'account|disable-prodpack',
      3,
      'Switches the production pack of a queue instance off.',
      'POST /qstash/disable-prodpack/{id}',
      [{ name: 'id', type: 'string' }],
      async (c) => ok(await need().disableProdpack(text(c.args[2]))),
    ),
    sub(
      'account|enable-prodpack',
      3,
      'Switches the production pack of a queue instance on.',
      'POST /qstash/enable-prodpack/{id}',
      [{ name: 'id', type: 'string' }],
      async (c) => ok(await need().enableProdpack(text(c.args[2]))),
    ),
    sub(
      'account|budget',
      4,
      'Sets the monthly budget in dollars: 0 (no limit) or 20 to 10000.',
      'PATCH /qstash/update-budget/{id} {budget}',
      [
        { name: 'id', type: 'string' },
        { name: 'dollars', type: 'integer' },
      ],
      async (c) => {
        const budget = integerArg(c.args[3], 'budget');
        if (budget !== 0 && (budget < 20 || budget > 10000))
          throw new CommandError(`ERR budget must be 0 (no limit) or from 20 to 10000 dollars, got ${budget}`);
        return ok(await need().updateBudget(text(c.args[2]), budget));
      },
    ),
    sub(
      'account|users',
      2,
      'Lists the queue instances of the account (id, budget, prod_pack_enabled, monthly_spend…).',
      'GET /qstash/users',
      [],
      async () => json(await need().users()),
    ),
    sub('account|user', 3, 'Returns one queue instance.', 'GET /qstash/user/{id}', [{ name: 'id', type: 'string' }], async (c) =>
      json(await need().user(text(c.args[2]))),
    ),
    sub('account|help', 2, 'Shows helpful text about the different subcommands.', '(none)', [], () => json(null)),
  ];
  return [
    {
      name: 'account',
      arity: -2,
      summary: 'Account management of a queue instance (production pack, budget).',
      group: 'account',
      flags: [],
      acl: [],
      subcommands: subs,
    },
  ];
}
