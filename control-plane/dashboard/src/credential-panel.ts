/**
 * What the personal API tokens page and a server's API keys tab share: the
 * list (label, first characters, status, creation, last use, expiry), a form
 * to create one with a label and an optional expiry day, the new value shown
 * once with a copy button (only its hash is kept), and revoking after a
 * confirmation (a revoked one stays listed).
 */
import { api } from './api.js';
import { capitalised, showCreatedSecret } from './created-secret.js';
import { announce, confirmDialog, formatTime, h, replaceChildren } from './dom.js';
import type { CredentialView } from './account-types.js';

/** What differs between tokens and keys. */
export interface CredentialPanelOptions {
  /** The admin API path: GET lists, POST creates, DELETE `{path}/{id}` revokes. */
  path: string;
  /** What one is called, lower case after the article ("API key", "token"). */
  noun: string;
  /** Starts the ids of the panel's elements ("api-key"). */
  idPrefix: string;
  /** The field of the list answer that holds the list ("apiKeys"). */
  listField: string;
  /** The field of the creation answer that holds the value ("key"). */
  valueField: string;
  /** How the value is sent, shown beside the new value. */
  usage: string;
  /** Whether to show who created each one (keys of a server are shared by its admins). */
  showCreatedBy: boolean;
}

/** Renders the list, the creation form and (once created) the new value into `container`. */
export async function renderCredentialPanel(
  container: HTMLElement,
  options: CredentialPanelOptions,
): Promise<void> {
  const { idPrefix, noun } = options;
  const listArea = h('div', { id: `${idPrefix}-list` });
  const created = h('section', {
    class: 'card created-secret',
    hidden: true,
    'aria-labelledby': `${idPrefix}-created-heading`,
  });
  const listError = h('p', { role: 'alert', class: 'error' });

  const refresh = async () => {
    const answer = await api<Record<string, CredentialView[]>>('GET', options.path);
    renderList(listArea, answer[options.listField] ?? [], options, async (item) => {
      listError.textContent = '';
      if (
        !(await confirmDialog(
          `Revoke ${noun} ${item.label}? Clients using it are refused from now on. This cannot be undone.`,
          `Revoke ${item.label}`,
        ))
      )
        return;
      try {
        await api('DELETE', `${options.path}/${encodeURIComponent(item.id)}`);
        announce(`${capitalised(noun)} ${item.label} revoked.`);
        await refresh();
      } catch (failure) {
        listError.textContent = (failure as Error).message;
      }
    });
  };

  const label = h('input', {
    id: `${idPrefix}-label`,
    required: true,
    maxlength: 128,
    autocomplete: 'off',
    'aria-describedby': `${idPrefix}-label-help`,
  });
  const expires = h('input', {
    id: `${idPrefix}-expires`,
    type: 'date',
    min: localDay(new Date()),
    'aria-describedby': `${idPrefix}-expires-help`,
  });
  const createError = h('p', { role: 'alert', class: 'error' });
  const form = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': `${idPrefix}-create-heading`,
      onsubmit: async (event) => {
        event.preventDefault();
        createError.textContent = '';
        const body: { label: string; expiresAt?: string } = { label: label.value.trim() };
        if (expires.value) body.expiresAt = endOfDay(expires.value);
        try {
          const answer = await api<CredentialView & Record<string, string>>(
            'POST',
            options.path,
            body,
          );
          label.value = '';
          expires.value = '';
          showCreatedSecret(created, {
            idPrefix,
            noun,
            label: answer.label,
            value: answer[options.valueField] ?? '',
            usage: options.usage,
          });
          await refresh();
        } catch (failure) {
          createError.textContent = (failure as Error).message;
          label.focus();
        }
      },
    },
    h('h2', { id: `${idPrefix}-create-heading` }, `Create ${article(noun)} ${noun}`),
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: label.id }, 'Label'),
        label,
        h(
          'span',
          { id: `${idPrefix}-label-help`, class: 'hint' },
          'Who or what uses it, e.g. “CI pipeline”.',
        ),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: expires.id }, 'Expires after (optional)'),
        expires,
        h(
          'span',
          { id: `${idPrefix}-expires-help`, class: 'hint' },
          'It stops working at the end of that day. Empty: until revoked.',
        ),
      ),
    ),
    createError,
    h('button', { type: 'submit', class: 'primary' }, `Create ${noun}`),
  );
  await refresh();
  replaceChildren(container, created, listError, listArea, form);
}

/** The table, or a note that there is none. */
function renderList(
  area: HTMLElement,
  items: CredentialView[],
  options: CredentialPanelOptions,
  revoke: (item: CredentialView) => Promise<void>,
): void {
  if (items.length === 0) {
    replaceChildren(area, h('p', {}, `No ${options.noun}s yet.`));
    return;
  }
  const titles = ['Label', 'Starts with', 'Status', 'Created'];
  if (options.showCreatedBy) titles.push('Created by');
  titles.push('Last used', 'Expires');
  replaceChildren(
    area,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, `${capitalised(options.noun)}s`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            titles.map((title) => h('th', { scope: 'col' }, title)),
            h('th', { scope: 'col', class: 'actions' }, 'Action'),
          ),
        ),
        h(
          'tbody',
          {},
          items.map((item) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, item.label),
              h('td', {}, h('code', {}, `${item.prefix}…`)),
              h('td', { class: `status-${item.status}` }, statusText(item)),
              h('td', {}, formatTime(item.createdAt)),
              options.showCreatedBy ? h('td', {}, item.createdBy ?? '—') : null,
              h('td', {}, item.lastUsedAt ? formatTime(item.lastUsedAt) : 'Never'),
              h('td', {}, item.expiresAt ? formatTime(item.expiresAt) : 'Never'),
              h(
                'td',
                { class: 'actions' },
                item.status === 'active'
                  ? h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger',
                        'aria-label': `Revoke ${options.noun} ${item.label}`,
                        onclick: () => void revoke(item),
                      },
                      'Revoke',
                    )
                  : '',
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function statusText(item: CredentialView): string {
  switch (item.status) {
    case 'active':
      return 'Active';
    case 'expired':
      return 'Expired';
    case 'revoked':
      return item.revokedAt ? `Revoked ${formatTime(item.revokedAt)}` : 'Revoked';
  }
}

/** The instant a chosen day (yyyy-mm-dd, local) ends, as ISO. */
function endOfDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, date + 1).toISOString();
}

/** The day of `now` as yyyy-mm-dd (local): the earliest expiry offered. */
function localDay(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

function article(noun: string): string {
  return /^[aeiouAEIOU]/.test(noun) ? 'an' : 'a';
}
