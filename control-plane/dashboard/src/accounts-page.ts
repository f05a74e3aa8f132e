/**
 * `#/accounts` (owners): every account with its role, servers, ways of
 * signing in, status and last sign-in, each linking to its editor; and a
 * form to create one (e-mail, name, role, an operator's servers, an initial
 * password and/or a single sign-on subject). Sign-in never creates an
 * account: people get in only once an owner has added them here.
 */
import { api, segment } from './api.js';
import { createAccessFields } from './account-fields.js';
import { announce, formatTime, h, replaceChildren } from './dom.js';
import { roleLabel } from './permissions.js';
import { fetchAuthMethods } from './session.js';
import type { Account } from './account-types.js';
import type { ServerInfo } from './types.js';

/** Renders the page into `main`; `notice` is said above the list (what was just done). */
export async function renderAccountsPage(main: HTMLElement, notice = ''): Promise<void> {
  const [{ accounts }, { servers }, methods] = await Promise.all([
    api<{ accounts: Account[] }>('GET', '/api/accounts'),
    api<{ servers: ServerInfo[] }>('GET', '/api/servers'),
    fetchAuthMethods(),
  ]);
  const email = h('input', {
    id: 'new-account-email',
    type: 'email',
    required: true,
    autocomplete: 'off',
  });
  const name = h('input', { id: 'new-account-name', autocomplete: 'off' });
  const access = createAccessFields(
    'new-account',
    servers.map((server) => server.subdomain),
  );
  const password = h('input', {
    id: 'new-account-password',
    type: 'password',
    minlength: 12,
    autocomplete: 'new-password',
    'aria-describedby': 'new-account-password-help',
  });
  const subject = h('input', {
    id: 'new-account-subject',
    autocomplete: 'off',
    spellcheck: false,
    'aria-describedby': 'new-account-subject-help',
  });
  const error = h('p', { role: 'alert', class: 'error', id: 'new-account-error' });
  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'new-account-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        const body = {
          email: email.value.trim(),
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
          ...access.value(),
          ...(password.value ? { password: password.value } : {}),
          ...(subject.value.trim() ? { oidcSubject: subject.value.trim() } : {}),
        };
        try {
          const created = await api<Account>('POST', '/api/accounts', body);
          announce(`Account ${created.email} created.`);
          await renderAccountsPage(main, `Account ${created.email} created.`);
          main.querySelector<HTMLElement>('h1')?.focus();
        } catch (failure) {
          error.textContent = `Not created: ${(failure as Error).message}`;
          email.focus();
        }
      },
    },
    h('h2', { id: 'new-account-heading' }, 'Create an account'),
    h(
      'div',
      { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: email.id }, 'E-mail'), email),
      h('div', { class: 'field' }, h('label', { for: name.id }, 'Name (optional)'), name),
    ),
    access.elements,
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: password.id }, 'Password (optional)'),
        password,
        h(
          'span',
          { id: 'new-account-password-help', class: 'hint' },
          methods.oidc === null
            ? 'At least 12 characters; tell it to the person by a safe channel.'
            : 'At least 12 characters; tell it to the person by a safe channel. Empty: single sign-on only.',
        ),
      ),
      // A subject is refused while no OpenID provider is set, so the field is offered only with one.
      h(
        'div',
        { class: 'field', hidden: methods.oidc === null },
        h('label', { for: subject.id }, 'Single sign-on subject (optional)'),
        subject,
        h(
          'span',
          { id: 'new-account-subject-help', class: 'hint' },
          'The identity provider’s “sub” for this person. Empty: linked at their first single sign-on by their verified e-mail.',
        ),
      ),
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Create account'),
  );
  replaceChildren(
    main,
    h('h1', { tabindex: -1 }, 'Accounts'),
    h('p', { role: 'status', class: 'ok' }, notice),
    accounts.length === 0
      ? h('p', {}, 'No accounts yet: only the admin token signs in.')
      : accountTable(accounts),
    form,
  );
}

function accountTable(accounts: Account[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, 'Accounts'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Account', 'Role', 'Servers', 'Signs in with', 'Status', 'Last sign-in'].map((title) =>
            h('th', { scope: 'col' }, title),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        accounts.map((account) =>
          h(
            'tr',
            {},
            h(
              'th',
              { scope: 'row' },
              h('a', { href: `#/accounts/${segment(account.id)}` }, account.email),
              account.name && account.name !== account.email
                ? h('div', { class: 'hint' }, account.name)
                : null,
            ),
            h('td', {}, roleLabel(account.role)),
            h('td', {}, account.role === 'operator' ? account.servers.join(', ') || '—' : 'All'),
            h('td', {}, signInMethods(account)),
            h('td', {}, account.disabled ? 'Disabled' : 'Active'),
            h('td', {}, account.lastSignInAt ? formatTime(account.lastSignInAt) : 'Never'),
          ),
        ),
      ),
    ),
  );
}

/** "Password, single sign-on", from what the account has. */
export function signInMethods(account: Account): string {
  const methods = [
    account.password ? 'Password' : null,
    account.oidcSubject ? 'Single sign-on' : null,
  ].filter((method) => method !== null);
  return methods.length > 0 ? methods.join(', ') : 'Single sign-on by e-mail (not linked yet)';
}
