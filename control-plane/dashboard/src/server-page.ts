/**
 * One server's page: its address and a tab bar (Settings, Tools, Prompts,
 * Resources, Secrets, Pools & activity, and API keys for those who manage
 * them); each tab is a link so the URL names what is open and the browser's
 * back button works.
 */
import { api, segment } from './api.js';
import { h, replaceChildren } from './dom.js';
import { renderActivityTab } from './activity-tab.js';
import { renderApiKeysTab } from './api-keys-tab.js';
import { mcpAddresses, renderMcpAddresses } from './mcp-addresses.js';
import { mayAdminister } from './permissions.js';
import { renderPromptsTab } from './prompts-tab.js';
import { renderResourcesTab } from './resources-tab.js';
import { renderSecretsTab } from './secrets-tab.js';
import { renderSettingsTab } from './settings-tab.js';
import { renderToolsTab } from './tools-tab.js';
import type { ServerInfo } from './types.js';

/** The tabs of a server page. */
export type ServerTab =
  'settings' | 'tools' | 'prompts' | 'resources' | 'secrets' | 'activity' | 'apikeys';

/** The tabs with an editor per named item (`#/servers/{sub}/{tab}/{name}`). */
export const TABS_WITH_ITEMS: readonly ServerTab[] = ['tools', 'prompts', 'resources'];

const TAB_TITLES: Record<ServerTab, string> = {
  settings: 'Settings',
  tools: 'Tools',
  prompts: 'Prompts',
  resources: 'Resources',
  secrets: 'Secrets',
  activity: 'Pools & activity',
  apikeys: 'API keys',
};

/** Every tab, in the order of the tab bar. */
export const SERVER_TABS = Object.keys(TAB_TITLES) as ServerTab[];

/** The tabs the signed-in principal may open: API keys are for admins and owners. */
function visibleTabs(): ServerTab[] {
  return SERVER_TABS.filter((tab) => tab !== 'apikeys' || mayAdminister());
}

/**
 * Renders the page of `subdomain` with `tab` open (and, on a tab with items,
 * the editor of `itemName`); resolves the tab's cleanup, if any.
 */
export async function renderServerPage(
  main: HTMLElement,
  subdomain: string,
  tab: ServerTab,
  itemName?: string,
): Promise<(() => void) | void> {
  const server = await api<ServerInfo>('GET', `/api/servers/${segment(subdomain)}`);
  const panel = h('section', { class: 'panel', 'aria-label': TAB_TITLES[tab] });
  replaceChildren(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Servers'), ' / ', server.subdomain),
    h('h1', { tabindex: -1 }, `Server ${server.subdomain}`),
    h(
      'p',
      { class: 'meta' },
      h(
        'span',
        { class: 'meta-addresses' },
        mcpAddresses(server).length > 1 ? 'MCP addresses: ' : 'MCP address: ',
        renderMcpAddresses(server),
      ),
      h('span', { id: 'server-active-label' }, activeLabel(server)),
      h('span', { id: 'server-mode-label' }, modeLabel(server)),
    ),
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Server sections' },
      h(
        'ul',
        {},
        visibleTabs().map((key) =>
          h(
            'li',
            {},
            h(
              'a',
              {
                href: `#/servers/${segment(server.subdomain)}/${key}`,
                'aria-current': key === tab ? 'page' : undefined,
              },
              TAB_TITLES[key],
            ),
          ),
        ),
      ),
    ),
    panel,
  );
  switch (tab) {
    case 'settings':
      return renderSettingsTab(panel, server);
    case 'tools':
      return renderToolsTab(panel, server, itemName);
    case 'prompts':
      return renderPromptsTab(panel, server, itemName);
    case 'resources':
      return renderResourcesTab(panel, server, itemName);
    case 'secrets':
      return renderSecretsTab(panel, server);
    case 'activity':
      return renderActivityTab(panel, server);
    case 'apikeys':
      return renderApiKeysTab(panel, server);
  }
}

/** The page header's word for whether the server answers. */
export function activeLabel(server: ServerInfo): string {
  return server.active ? 'Active' : 'Inactive';
}

/** The page header's word for the security mode. */
export function modeLabel(server: ServerInfo): string {
  switch (server.securityMode) {
    case 'oauth2':
      return 'OAuth 2.0';
    case 'apikey':
      return 'API keys';
    default:
      return 'No authentication';
  }
}
