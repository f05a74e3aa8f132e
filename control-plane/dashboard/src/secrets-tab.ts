/**
 * The Secrets tab: names and update times (values are write-only: the API
 * never returns them and the form forgets what was typed once saved), set
 * or replace a value, delete after a confirmation (for those who may change
 * the server's secrets).
 */
import { api, segment } from './api.js';
import { announce, confirmDialog, formatTime, h, replaceChildren } from './dom.js';
import { mayOperate, readOnlyNote } from './permissions.js';
import type { SecretSummary } from '../../store/index.js';
import type { ServerInfo } from './types.js';

/** Renders the secrets of `server` into `panel`. */
export async function renderSecretsTab(panel: HTMLElement, server: ServerInfo): Promise<void> {
  const base = `/api/servers/${segment(server.subdomain)}/secrets`;
  const operate = mayOperate(server.subdomain);
  const { secrets } = await api<{ secrets: SecretSummary[] }>('GET', base);
  const rerender = async (focusId?: string) => {
    await renderSecretsTab(panel, server);
    if (focusId) document.getElementById(focusId)?.focus();
  };
  const name = h('input', {
    id: 'secret-name',
    required: true,
    pattern: '[A-Z_][A-Z0-9_]{0,127}',
    autocomplete: 'off',
    'aria-describedby': 'secret-name-help',
  });
  const value = h('input', {
    id: 'secret-value',
    type: 'password',
    required: true,
    autocomplete: 'new-password',
  });
  const error = h('p', { role: 'alert', class: 'error' });
  const form = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': 'secret-form-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        try {
          await api('PUT', `${base}/${segment(name.value.trim())}`, { value: value.value });
          value.value = '';
          announce(`Secret ${name.value.trim()} saved.`);
          await rerender('secret-name');
        } catch (failure) {
          error.textContent = (failure as Error).message;
        }
      },
    },
    h('h2', { id: 'secret-form-heading' }, 'Set a secret'),
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'secret-name' }, 'Secret name'),
        name,
        h(
          'span',
          { id: 'secret-name-help', class: 'hint' },
          'Upper-case, digits and _. An existing name is replaced.',
        ),
      ),
      h('div', { class: 'field' }, h('label', { for: 'secret-value' }, 'Secret value'), value),
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Save secret'),
  );
  replaceChildren(
    panel,
    h('h2', {}, 'Secrets'),
    h('p', { class: 'hint' }, 'Values are write-only: once saved they are never shown again.'),
    secrets.length === 0
      ? h('p', {}, 'No secrets yet.')
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('caption', { class: 'visually-hidden' }, `Secrets of ${server.subdomain}`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Updated'].map((title) => h('th', { scope: 'col' }, title)),
                operate ? h('th', { scope: 'col', class: 'actions' }, 'Action') : null,
              ),
            ),
            h(
              'tbody',
              {},
              secrets.map((secret) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, h('code', {}, secret.name)),
                  h('td', {}, formatTime(secret.updatedAt)),
                  operate &&
                    h(
                      'td',
                      { class: 'actions' },
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger',
                          'aria-label': `Delete secret ${secret.name}`,
                          onclick: async () => {
                            if (
                              !(await confirmDialog(
                                `Delete secret ${secret.name}? Tools that use it will no longer see it.`,
                                `Delete ${secret.name}`,
                              ))
                            )
                              return;
                            try {
                              await api('DELETE', `${base}/${segment(secret.name)}`);
                              announce(`Secret ${secret.name} deleted.`);
                              await rerender();
                            } catch (failure) {
                              error.textContent = (failure as Error).message;
                            }
                          },
                        },
                        'Delete',
                      ),
                    ),
                ),
              ),
            ),
          ),
        ),
    operate ? form : readOnlyNote('the secrets of this server'),
  );
}
