// The account page, over the account API (/account/v2, HTTP Basic with the account email and key,
// asked here and kept in sessionStorage): the queue instance's budget, prod pack and this month's use.
import { accountCall, auth } from './api.js';
import { field, fill, h, note, table } from './dom.js';
import { actionButton } from './tabs.js';

const A = '/account/v2/qstash';

export function accountPage(root) {
  if (!auth.account) return credentialsForm(root);
  const out = h('div', { id: 'account' });
  fill(root, out);
  load(root, out);
}

function credentialsForm(root, message) {
  const email = field('Account email', { name: 'account-email', value: 'dev@respgate.local', autocomplete: 'off' });
  const key = field('Account key', { name: 'account-key', type: 'password', autocomplete: 'off' });
  const submit = (e) => {
    e.preventDefault();
    auth.account = { email: email.input.value, key: key.input.value };
    accountPage(root);
  };
  fill(
    root,
    h(
      'form',
      { class: 'card', id: 'account-login', onsubmit: submit },
      h('h2', null, 'Account'),
      h(
        'p',
        null,
        'The account API takes the account email and key (the platform prints them at start; --account-email, --account-key), not a data token.',
      ),
      email,
      key,
      h('button', { type: 'submit' }, 'Open'),
      message && note('error', message),
    ),
  );
}

async function load(root, out) {
  let instances;
  try {
    instances = await accountCall('GET', `${A}/users`);
  } catch (err) {
    auth.account = undefined;
    return credentialsForm(root, err.message);
  }
  fill(
    out,
    instances.map((i) => instanceCard(root, out, i)),
  );
}

function instanceCard(root, out, i) {
  const reload = () => load(root, out);
  const budget = field('Monthly budget in dollars (0 for no limit, else 20 to 10000)', {
    name: 'budget',
    type: 'number',
    value: String(i.budget),
  });
  const setBudget = async (e) => {
    e.preventDefault();
    try {
      await accountCall('PATCH', `${A}/update-budget/${encodeURIComponent(i.id)}`, { budget: Number(budget.input.value) });
      await reload();
    } catch (err) {
      e.target.append(note('error', err.message));
    }
  };
  const pack = i.prod_pack_enabled ? 'disable-prodpack' : 'enable-prodpack';
  return h(
    'div',
    { class: 'card instance' },
    h('h2', null, `Queue instance ${i.id}`),
    table(
      ['budget', 'prod pack', 'messages this month', 'spend this month', 'created'],
      [
        [
          i.budget === 0 ? 'no limit' : `$${i.budget}`,
          i.prod_pack_enabled ? 'enabled' : 'disabled',
          String(i.monthly_messages),
          `$${Number(i.monthly_spend).toFixed(2)}`,
          new Date(i.creation_time * 1000).toLocaleString(),
        ],
      ],
      { id: 'instance-state' },
    ),
    h('form', { id: 'budget-form', class: 'toolbar', onsubmit: setBudget }, budget, h('button', { type: 'submit' }, 'Set budget')),
    actionButton(
      i.prod_pack_enabled ? 'Disable prod pack' : 'Enable prod pack',
      { id: 'prodpack' },
      null,
      async () => (await accountCall('POST', `${A}/${pack}/${encodeURIComponent(i.id)}`), reload()),
      out,
    ),
    h(
      'p',
      null,
      h('button', { type: 'button', onclick: () => ((auth.account = undefined), accountPage(root)) }, 'Use other account credentials'),
    ),
  );
}
