/**
 * The servers screen: every hosted server the principal may read
 * (subdomain, address, security mode, active, tool count); for admins and
 * owners a form to create one, activate/deactivate, and delete after a
 * confirmation.
 */
import { ApiError, api, segment } from './api.js';
import { announce, confirmDialog, h, replaceChildren } from './dom.js';
import { mayAdminister } from './permissions.js';
import { renderMcpAddresses } from './mcp-addresses.js';
import { currentPrincipal } from './session.js';
import type { ServerInfo } from './types.js';

/** The Security column's word for each mode. */
const SECURITY_WORDS: Record<ServerInfo['securityMode'], string> = {
  none: 'None',
  oauth2: 'OAuth 2.0',
  apikey: 'API keys',
};

/** Renders the list into `main`. */
export async function renderServerList(main: HTMLElement): Promise<void> {
  const { servers } = await api<{ servers: ServerInfo[] }>('GET', '/api/servers');
  const administer = mayAdminister();
  const createError = h('p', { role: 'alert', class: 'error' });
  const subdomain = h('input', {
    id: 'new-subdomain',
    name: 'subdomain',
    required: true,
    pattern: '[a-z0-9]([a-z0-9\\-]{0,61}[a-z0-9])?',
    'aria-describedby': 'new-subdomain-help',
    autocomplete: 'off',
  });
  const name = h('input', { id: 'new-name', name: 'name', autocomplete: 'off' });
  const createForm = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': 'create-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        createError.textContent = '';
        try {
          const created = await api<ServerInfo>('POST', '/api/servers', {
            subdomain: subdomain.value.trim(),
            ...(name.value.trim() ? { name: name.value.trim() } : {}),
          });
          announce(`Server ${created.subdomain} created.`);
          // A new server has nothing to serve yet: its first tool is the next step.
          location.hash = `#/servers/${segment(created.subdomain)}/tools`;
        } catch (error) {
          createError.textContent = (error as Error).message;
          subdomain.focus();
        }
      },
    },
    h('h2', { id: 'create-heading' }, 'Create a server'),
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'new-subdomain' }, 'Subdomain'),
        subdomain,
        h(
          'span',
          { id: 'new-subdomain-help', class: 'hint' },
          'Lower-case letters, digits, inner hyphens.',
        ),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'new-name' }, 'Display name (optional)'),
        name,
      ),
    ),
    createError,
    h('button', { type: 'submit', class: 'primary' }, 'Create server'),
  );

  const rows = servers.map((server) =>
    h(
      'tr',
      {},
      h(
        'th',
        { scope: 'row' },
        h('a', { href: `#/servers/${segment(server.subdomain)}/settings` }, server.subdomain),
        server.name && server.name !== server.subdomain
          ? h('div', { class: 'hint' }, server.name)
          : null,
      ),
      h('td', { class: 'address' }, renderMcpAddresses(server)),
      h('td', {}, SECURITY_WORDS[server.securityMode] ?? server.securityMode),
      h('td', {}, server.active ? 'Active' : 'Inactive'),
      h('td', { class: 'number' }, server.toolCount),
      administer &&
        h(
          'td',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              'aria-label': `${server.active ? 'Deactivate' : 'Activate'} ${server.subdomain}`,
              onclick: () => void setActive(main, server, !server.active),
            },
            server.active ? 'Deactivate' : 'Activate',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'aria-label': `Delete ${server.subdomain}`,
              onclick: () => void deleteServer(main, server),
            },
            'Delete',
          ),
        ),
    ),
  );

  replaceChildren(
    main,
    h('h1', { tabindex: -1 }, 'Servers'),
    h('p', { role: 'alert', class: 'error', id: 'list-error' }),
    servers.length === 0
      ? h('p', {}, emptyText(administer))
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'servers' },
            h('caption', { class: 'visually-hidden' }, 'Hosted servers'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Subdomain', 'MCP address', 'Security', 'Status', 'Tools'].map((title) =>
                  h('th', { scope: 'col' }, title),
                ),
                administer ? h('th', { scope: 'col', class: 'actions' }, 'Actions') : null,
              ),
            ),
            h('tbody', {}, rows),
          ),
        ),
    administer ? createForm : null,
  );
}

/** What an empty list says: where servers come from for this principal. */
function emptyText(administer: boolean): string {
  if (administer) return 'No servers yet. Create the first one below.';
  return currentPrincipal()?.role === 'operator'
    ? 'No server is assigned to you yet. An admin or owner can add you to one.'
    : 'No servers yet.';
}

async function setActive(main: HTMLElement, server: ServerInfo, active: boolean): Promise<void> {
  await runAction(main, async () => {
    await api('PATCH', `/api/servers/${segment(server.subdomain)}/settings`, { active });
    announce(`${server.subdomain} is now ${active ? 'active' : 'inactive'}.`);
  });
}

async function deleteServer(main: HTMLElement, server: ServerInfo): Promise<void> {
  const confirmed = await confirmDialog(
    `Delete server ${server.subdomain} with its ${server.toolCount} tool(s) and its secrets? This cannot be undone.`,
    `Delete ${server.subdomain}`,
  );
  if (!confirmed) return;
  await runAction(main, async () => {
    await api('DELETE', `/api/servers/${segment(server.subdomain)}`);
    announce(`Server ${server.subdomain} deleted.`);
  });
}

/** Runs a list action, then re-renders; a failure is shown above the table. */
async function runAction(main: HTMLElement, action: () => Promise<void>): Promise<void> {
  try {
    await action();
    await renderServerList(main);
    main.querySelector<HTMLElement>('h1')?.focus();
  } catch (error) {
    const slot = main.querySelector('#list-error');
    if (slot) slot.textContent = error instanceof ApiError ? error.message : String(error);
  }
}
