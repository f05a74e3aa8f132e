/**
 * The addresses an MCP client reaches a server at, each with a Copy button:
 * by its subdomain, and by a path of the listener that needs no DNS, as the
 * API lists them in `mcpUrls`; the preferred one (`mcpUrl`) first. A control
 * plane that does not list `mcpUrls` yet gives `mcpUrl` alone.
 */
import { copyButton } from './copy-button.js';
import { h } from './dom.js';
import type { ServerInfo } from './types.js';

/** One address of a server. */
export interface McpAddress {
  url: string;
  /** How it is reached, said above it ("By subdomain"). */
  how: string;
  /** The same for a screen reader, in the Copy button's name ("by host name"). */
  spoken: string;
  preferred: boolean;
}

/**
 * The words for each kind of address `mcpUrls` may hold: shown, and spoken
 * in a button's name (which avoids "subdomain": that is the create form's field).
 */
const HOW: Record<string, { shown: string; spoken: string }> = {
  host: { shown: 'By subdomain', spoken: 'by host name' },
  path: { shown: 'By path (no DNS needed)', spoken: 'by path' },
};

/** The server's addresses, the preferred first, none twice. */
export function mcpAddresses(server: ServerInfo): McpAddress[] {
  const listed = Object.entries(server.mcpUrls ?? {}).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '',
  );
  if (listed.length === 0) return [{ url: server.mcpUrl, how: '', spoken: '', preferred: true }];
  const addresses = listed.map(([kind, url]) => ({
    url,
    how: HOW[kind]?.shown ?? kind,
    spoken: HOW[kind]?.spoken ?? kind,
    preferred: url === server.mcpUrl,
  }));
  const unique = addresses.filter(
    (address, index) => addresses.findIndex((other) => other.url === address.url) === index,
  );
  return unique.sort((a, b) => Number(b.preferred) - Number(a.preferred));
}

/** The addresses as a list, each with its Copy button. */
export function renderMcpAddresses(server: ServerInfo): HTMLUListElement {
  const addresses = mcpAddresses(server);
  const several = addresses.length > 1;
  return h(
    'ul',
    { class: 'mcp-addresses' },
    addresses.map((address) => {
      const shown = h('code', {}, address.url);
      const what = `MCP address of ${server.subdomain}${several ? ` ${address.spoken}` : ''}`;
      return h(
        'li',
        {},
        several
          ? h('div', { class: 'hint' }, `${address.how}${address.preferred ? ' (preferred)' : ''}`)
          : null,
        h('span', { class: 'copy-line' }, shown, ' ', copyButton(address.url, what, shown)),
      );
    }),
  );
}
