/**
 * `#/accounts/{id}` (owners): one account — its name, role and servers,
 * single sign-on subject and whether it is disabled (saved together), a new
 * password, and deleting it. Changing the role or disabling ends the
 * account's sessions; deleting also revokes its tokens. The control plane
 * refuses to demote, disable or delete the last enabled owner, and says so.
 */
import { api, segment } from './api.js';
import { createAccessFields } from './account-fields.js';
import { signInMethods } from './accounts-page.js';
import { announce, append, confirmDialog, formatTime, h, replaceChildren } from './dom.js';
import { roleLabel } from './permissions.js';
import { fetchAuthMethods } from './session.js';
import type { Account, Role } from './account-types.js';
import type { ServerInfo } from './types.js';

/** Renders the editor of account `id` into `main`. */
export async function renderAccountEditor(main: HTMLElement, id: string): Promise<void> {
  const [{ accounts }, { servers }, methods] = await Promise.all([
    api<{ accounts: Account[] }>('GET', '/api/accounts'),
    api<{ servers: ServerInfo[] }>('GET', '/api/servers'),
    fetchAuthMethods(),
  ]);
  const account = accounts.find((candidate) => candidate.id === id);
  const crumbs = h('p', { class: 'crumbs' }, h('a', { href: '#/accounts' }, 'Accounts'));
  if (!account) {
    replaceChildren(
      main,
      crumbs,
      h('h1', { tabindex: -1 }, 'No such account'),
      h('p', {}, 'It may have been deleted.'),
    );
    return;
  }
  const path = `/api/accounts/${segment(account.id)}`;
  append(crumbs, ' / ', account.email);

  const name = h('input', { id: 'account-name', value: account.name, autocomplete: 'off' });
  const access = createAccessFields(
    'account',
    servers.map((server) => server.subdomain),
    account,
  );
  const subject = h('input', {
    id: 'account-subject',
    value: account.oidcSubject ?? '',
    autocomplete: 'off',
    spellcheck: false,
    'aria-describedby': 'account-subject-help',
  });
  const disabled = h('input', { id: 'account-disabled', type: 'checkbox' });
  disabled.checked = account.disabled;
  const detailsError = h('p', { role: 'alert', class: 'error' });
  const detailsSaved = h('p', { role: 'status', class: 'ok' });
  const details = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'account-details-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        detailsError.textContent = '';
        detailsSaved.textContent = '';
        const changes = changedFields(account, {
          name: name.value.trim(),
          ...access.value(),
          oidcSubject: subject.value.trim() || null,
          disabled: disabled.checked,
        });
        if (Object.keys(changes).length === 0) {
          detailsSaved.textContent = 'Nothing changed.';
          return;
        }
        try {
          Object.assign(account, await api<Account>('PATCH', path, changes));
          detailsSaved.textContent = `Saved: ${account.disabled ? 'disabled' : 'active'}, ${roleLabel(account.role)}.`;
          announce('Account saved.');
        } catch (failure) {
          detailsError.textContent = `Not saved: ${(failure as Error).message}`;
        }
      },
    },
    h('h2', { id: 'account-details-heading' }, 'Access'),
    h('div', { class: 'field' }, h('label', { for: name.id }, 'Name'), name),
    access.elements,
    h(
      'div',
      { class: 'field', hidden: methods.oidc === null && account.oidcSubject === null },
      h('label', { for: subject.id }, 'Single sign-on subject'),
      subject,
      h(
        'span',
        { id: 'account-subject-help', class: 'hint' },
        'The identity provider’s “sub” for this person. Empty: linked at their next single sign-on by their verified e-mail.',
      ),
    ),
    h(
      'div',
      { class: 'field checkbox' },
      disabled,
      h('label', { for: disabled.id }, 'Disabled (cannot sign in; its sessions end)'),
    ),
    detailsError,
    detailsSaved,
    h('button', { type: 'submit', class: 'primary' }, 'Save account'),
  );

  const password = h('input', {
    id: 'account-password',
    type: 'password',
    required: true,
    minlength: 12,
    autocomplete: 'new-password',
    'aria-describedby': 'account-password-help',
  });
  const passwordError = h('p', { role: 'alert', class: 'error' });
  const passwordSaved = h('p', { role: 'status', class: 'ok' });
  const passwordForm = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': 'account-password-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        passwordError.textContent = '';
        passwordSaved.textContent = '';
        try {
          await api<Account>('PATCH', path, { password: password.value });
          password.value = '';
          passwordSaved.textContent = 'Password set. Tell it to the person by a safe channel.';
          announce('Password set.');
        } catch (failure) {
          passwordError.textContent = `Not set: ${(failure as Error).message}`;
          password.focus();
        }
      },
    },
    h(
      'h2',
      { id: 'account-password-heading' },
      account.password ? 'Reset the password' : 'Set a password',
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: password.id }, 'New password'),
      password,
      h('span', { id: 'account-password-help', class: 'hint' }, 'At least 12 characters.'),
    ),
    passwordError,
    passwordSaved,
    h('button', { type: 'submit' }, 'Set password'),
  );

  const deleteError = h('p', { role: 'alert', class: 'error' });
  const removal = h(
    'section',
    { class: 'card', 'aria-labelledby': 'account-delete-heading' },
    h('h2', { id: 'account-delete-heading' }, 'Delete'),
    h(
      'p',
      {},
      'Deleting ends its sessions and revokes its personal API tokens. The audit log keeps what it did.',
    ),
    deleteError,
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          deleteError.textContent = '';
          if (
            !(await confirmDialog(
              `Delete the account ${account.email}? This cannot be undone.`,
              `Delete ${account.email}`,
            ))
          )
            return;
          try {
            await api('DELETE', path);
            announce(`Account ${account.email} deleted.`);
            location.hash = '#/accounts';
          } catch (failure) {
            deleteError.textContent = `Not deleted: ${(failure as Error).message}`;
          }
        },
      },
      'Delete account',
    ),
  );

  replaceChildren(
    main,
    crumbs,
    h('h1', { tabindex: -1 }, `Account ${account.email}`),
    h(
      'p',
      { class: 'meta' },
      h('span', {}, `Signs in with: ${signInMethods(account)}`),
      h(
        'span',
        {},
        `Last sign-in: ${account.lastSignInAt ? formatTime(account.lastSignInAt) : 'never'}`,
      ),
      h('span', {}, `Created ${formatTime(account.createdAt)}`),
    ),
    details,
    passwordForm,
    removal,
  );
}

/** What the form changes of `account`: only those fields are sent, so saving a name leaves the role (whose change ends sessions) alone. */
function changedFields(
  account: Account,
  wanted: {
    name: string;
    role: Role;
    servers?: string[];
    oidcSubject: string | null;
    disabled: boolean;
  },
): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  // An empty name is not sent: the account keeps the one it has.
  if (wanted.name !== '' && wanted.name !== account.name) changes.name = wanted.name;
  if (wanted.role !== account.role) changes.role = wanted.role;
  if (
    wanted.servers &&
    (wanted.role !== account.role || !sameMembers(wanted.servers, account.servers))
  ) {
    changes.servers = wanted.servers;
  }
  if (wanted.oidcSubject !== account.oidcSubject) changes.oidcSubject = wanted.oidcSubject;
  if (wanted.disabled !== account.disabled) changes.disabled = wanted.disabled;
  return changes;
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}
