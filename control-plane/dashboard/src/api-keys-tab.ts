/**
 * The API keys tab of a server (admins and owners): the keys MCP clients
 * present when the server's security mode is "API keys" — list, create (the
 * key shown once), revoke. In another mode the tab says the keys are not
 * asked for yet.
 */
import { segment } from './api.js';
import { renderCredentialPanel } from './credential-panel.js';
import { h, replaceChildren } from './dom.js';
import type { ServerInfo } from './types.js';

/** Renders the keys of `server` into `panel`. */
export async function renderApiKeysTab(panel: HTMLElement, server: ServerInfo): Promise<void> {
  const sub = segment(server.subdomain);
  const keys = h('div');
  await renderCredentialPanel(keys, {
    path: `/api/servers/${sub}/api-keys`,
    noun: 'API key',
    idPrefix: 'api-key',
    listField: 'apiKeys',
    valueField: 'key',
    usage: `Clients send it to ${server.mcpUrl} as Authorization: Bearer <key>, or as X-API-Key: <key> when they cannot set that header.`,
    showCreatedBy: true,
  });
  replaceChildren(
    panel,
    h('h2', {}, 'API keys'),
    server.securityMode === 'apikey'
      ? h(
          'p',
          { class: 'hint' },
          'Every MCP client of this server must send one of these keys; each key has its own rate limit and sessions, and the activity log names it.',
        )
      : h(
          'p',
          { class: 'warnings', id: 'api-keys-mode-note' },
          'The security mode of this server is not “API keys”, so its keys are not asked for. Choose API keys on the ',
          h('a', { href: `#/servers/${sub}/settings` }, 'Settings tab'),
          ' to require them.',
        ),
    keys,
  );
}
