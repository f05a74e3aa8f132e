/**
 * The Settings tab: display name, active, security mode (none, OAuth 2.0,
 * API keys), the OAuth Server URL and the token claims tools may read. Save sends one PATCH; when the control
 * plane refuses (an unreachable URL, metadata missing fields) the reason is
 * shown inline and the form keeps what was typed. In OAuth 2.0 mode it shows
 * the protected-resource metadata URL and what an MCP client will see. Only
 * admins and owners change settings; others see them read-only.
 */
import { api, ApiError, segment } from './api.js';
import { announce, h, prettyJson, replaceChildren } from './dom.js';
import { disableControls, mayAdminister, readOnlyNote } from './permissions.js';
import { activeLabel, modeLabel } from './server-page.js';
import { createTenancyForm } from './tenancy-form.js';
import type { ServerInfo } from './types.js';

/** Renders the settings form of `server` into `panel`. */
export function renderSettingsTab(panel: HTMLElement, server: ServerInfo): void {
  const name = h('input', { id: 'settings-name', name: 'name', value: server.name });
  const active = h('input', { id: 'settings-active', type: 'checkbox', name: 'active' });
  active.checked = server.active;
  const mode = h(
    'select',
    { id: 'settings-mode', name: 'securityMode' },
    h('option', { value: 'none' }, 'none'),
    h('option', { value: 'oauth2' }, 'OAuth 2.0'),
    h('option', { value: 'apikey' }, 'API keys'),
  );
  mode.value = server.securityMode;
  mode.setAttribute('aria-describedby', 'settings-mode-help');
  const modeHelp = h(
    'span',
    { id: 'settings-mode-help', class: 'hint' },
    'API keys: every MCP client sends a key (Authorization: Bearer or X-API-Key) created on the ',
    h('a', { href: `#/servers/${segment(server.subdomain)}/apikeys` }, 'API keys tab'),
    '.',
  );
  const url = h('input', {
    id: 'settings-oauth-url',
    name: 'oauthServerUrl',
    type: 'url',
    value: server.oauthServerUrl ?? '',
    placeholder: 'https://auth.example.com',
    'aria-describedby': 'oauth-url-help',
  });
  const urlField = h(
    'div',
    { class: 'field' },
    h('label', { for: 'settings-oauth-url' }, 'OAuth Server URL'),
    url,
    h(
      'span',
      { id: 'oauth-url-help', class: 'hint' },
      'The Authorization Server issuer or its metadata document URL. It must publish issuer, authorization_endpoint, token_endpoint, registration_endpoint and jwks_uri.',
    ),
  );
  const claims = h('input', {
    id: 'settings-caller-claims',
    name: 'callerClaims',
    value: server.callerClaims.join(' '),
    autocomplete: 'off',
    spellcheck: false,
    'aria-describedby': 'caller-claims-help',
  });
  const claimsField = h(
    'div',
    { class: 'field' },
    h('label', { for: 'settings-caller-claims' }, 'Token claims tools may read'),
    claims,
    h(
      'span',
      { id: 'caller-claims-help', class: 'hint' },
      'Claim names separated by spaces (at most 32); tool code reads them in sdk.caller.claims. Empty: none. The token itself never reaches tool code.',
    ),
  );
  const showModeFields = () => {
    urlField.hidden = mode.value !== 'oauth2';
    claimsField.hidden = mode.value !== 'oauth2';
    modeHelp.hidden = mode.value !== 'apikey';
  };
  mode.addEventListener('change', showModeFields);
  showModeFields();
  const administer = mayAdminister();

  const errorBox = h('div', { role: 'alert', class: 'error', id: 'settings-error' });
  const saved = h('p', { role: 'status', class: 'ok' });
  const oauthPanel = h('section', { 'aria-labelledby': 'oauth-heading', class: 'card' });
  renderOAuthPanel(oauthPanel, server);

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'settings-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        errorBox.replaceChildren();
        saved.textContent = '';
        url.removeAttribute('aria-invalid');
        const body: Record<string, unknown> = {
          name: name.value.trim() || server.subdomain,
          active: active.checked,
          securityMode: mode.value,
        };
        if (mode.value === 'oauth2') {
          body.oauthServerUrl = url.value.trim() || null;
          body.callerClaims = claims.value.split(/[\s,]+/).filter((claim) => claim !== '');
        }
        try {
          const updated = await api<ServerInfo>(
            'PATCH',
            `/api/servers/${segment(server.subdomain)}/settings`,
            body,
          );
          Object.assign(server, updated);
          claims.value = server.callerClaims.join(' ');
          saved.textContent = 'Settings saved.';
          announce('Settings saved.');
          renderOAuthPanel(oauthPanel, server);
          document.getElementById('server-active-label')!.textContent = activeLabel(server);
          document.getElementById('server-mode-label')!.textContent = modeLabel(server);
        } catch (error) {
          // Nothing on the form changes: the operator fixes what they typed.
          showError(errorBox, error);
          if (mode.value === 'oauth2') url.setAttribute('aria-invalid', 'true');
        }
      },
    },
    h('h2', { id: 'settings-heading' }, 'Settings'),
    administer ? null : readOnlyNote('the settings of this server'),
    h('div', { class: 'field' }, h('label', { for: 'settings-name' }, 'Display name'), name),
    h(
      'div',
      { class: 'field checkbox' },
      active,
      h('label', { for: 'settings-active' }, 'Active (answers MCP clients)'),
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'settings-mode' }, 'Security mode'),
      mode,
      modeHelp,
    ),
    urlField,
    claimsField,
    errorBox,
    saved,
    administer ? h('button', { type: 'submit', class: 'primary' }, 'Save settings') : null,
  );
  const tenancy = createTenancyForm(server, (updated) => Object.assign(server, updated));
  if (!administer) {
    disableControls(form);
    disableControls(tenancy);
  }
  replaceChildren(panel, form, oauthPanel, tenancy);
}

/** The refusal, with the missing metadata fields listed when the control plane names them. */
function showError(box: HTMLElement, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ApiError ? (error.details as { missing?: unknown }) : undefined;
  const missing = Array.isArray(details?.missing) ? (details.missing as string[]) : [];
  replaceChildren(
    box,
    h('p', {}, h('strong', {}, 'Not saved: '), message),
    missing.length > 0
      ? h(
          'p',
          {},
          'Missing from the metadata: ',
          missing.map((field, i) => [i > 0 ? ', ' : '', h('code', {}, field)]).flat(),
        )
      : null,
  );
}

/** What clients discover in OAuth 2.0 mode, computed from the saved settings. */
function renderOAuthPanel(section: HTMLElement, server: ServerInfo): void {
  if (server.securityMode !== 'oauth2' || !server.oauth) {
    section.hidden = true;
    section.replaceChildren();
    return;
  }
  section.hidden = false;
  const metadata = {
    resource: server.oauth.resource,
    authorization_servers: [server.oauth.issuer],
    bearer_methods_supported: ['header'],
    ...(server.oauthRequiredScopes.length > 0
      ? { scopes_supported: server.oauthRequiredScopes }
      : {}),
  };
  replaceChildren(
    section,
    h('h2', { id: 'oauth-heading' }, 'OAuth 2.0 is active'),
    h(
      'dl',
      {},
      h('dt', {}, 'Protected-resource metadata URL'),
      h('dd', {}, h('code', { id: 'prm-url' }, server.oauth.protectedResourceMetadataUrl)),
      h('dt', {}, 'Authorization Server (issuer)'),
      h('dd', {}, h('code', {}, server.oauth.issuer)),
    ),
    server.warnings && server.warnings.length > 0
      ? h(
          'ul',
          { class: 'warnings', 'aria-label': 'Warnings' },
          server.warnings.map((w) => h('li', {}, w)),
        )
      : null,
    h('h3', {}, 'What a client will see'),
    h('p', {}, 'A request to ', h('code', {}, server.mcpUrl), ' without a token is answered:'),
    h(
      'pre',
      { tabindex: 0, 'aria-label': 'Unauthenticated answer' },
      `HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer resource_metadata="${server.oauth.protectedResourceMetadataUrl}"`,
    ),
    h('p', {}, 'and the metadata document says:'),
    h('pre', { tabindex: 0, 'aria-label': 'Protected-resource metadata' }, prettyJson(metadata)),
  );
}
