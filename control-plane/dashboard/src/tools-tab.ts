/**
 * The Tools tab: the server's tools (name, description, version, update
 * time; a secret it lists without a value is said under its name) and,
 * for those who may change them, a form to start a new one; with
 * a tool name in the URL it opens the editor instead.
 */
import { entryRoute, listEntries } from './entry-api.js';
import { formatTime, h, replaceChildren } from './dom.js';
import { fetchSecretNames, missingSecrets, missingSecretsNote } from './missing-secrets.js';
import { mayOperate } from './permissions.js';
import { renderToolEditor } from './tool-editor.js';
import type { ServerInfo } from './types.js';

/** Renders the tool list, or the editor of `toolName`. */
export async function renderToolsTab(
  panel: HTMLElement,
  server: ServerInfo,
  toolName?: string,
): Promise<void> {
  if (toolName !== undefined) {
    await renderToolEditor(panel, server, toolName);
    return;
  }
  const [tools, secretNames] = await Promise.all([
    listEntries(server.subdomain, 'tool'),
    fetchSecretNames(server.subdomain),
  ]);
  const newName = h('input', {
    id: 'new-tool-name',
    name: 'toolName',
    required: true,
    pattern: '[A-Za-z0-9_.\\-]{1,128}',
    autocomplete: 'off',
    'aria-describedby': 'new-tool-help',
  });
  const error = h('p', { role: 'alert', class: 'error' });
  const newForm = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': 'new-tool-heading',
      onsubmit: (event) => {
        event.preventDefault();
        const name = newName.value.trim();
        if (tools.some((tool) => tool.name === name)) {
          error.textContent = `A tool named ${name} already exists; open it from the list.`;
          return;
        }
        location.hash = entryRoute(server.subdomain, 'tool', name);
      },
    },
    h('h2', { id: 'new-tool-heading' }, 'New tool'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'new-tool-name' }, 'Tool name'),
      newName,
      h('span', { id: 'new-tool-help', class: 'hint' }, '1–128 of A–Z a–z 0–9 _ - .'),
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Write tool'),
  );
  replaceChildren(
    panel,
    h('h2', {}, 'Tools'),
    tools.length === 0
      ? h(
          'p',
          {},
          mayOperate(server.subdomain)
            ? 'No tools yet. Name the first one below, then write its code.'
            : 'No tools yet.',
        )
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('caption', { class: 'visually-hidden' }, `Tools of ${server.subdomain}`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Description', 'Parameters', 'Version', 'Updated'].map((title) =>
                  h('th', { scope: 'col' }, title),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              tools.map((tool) =>
                h(
                  'tr',
                  {},
                  h(
                    'th',
                    { scope: 'row' },
                    h(
                      'a',
                      {
                        href: entryRoute(server.subdomain, 'tool', tool.name),
                      },
                      tool.name,
                    ),
                    warningOf(
                      missingSecretsNote(
                        server.subdomain,
                        missingSecrets(tool.secrets, secretNames),
                      ),
                    ),
                  ),
                  h('td', {}, tool.description),
                  h('td', {}, tool.parameters.map((p) => p.name).join(', ') || '—'),
                  h('td', { class: 'number' }, tool.version),
                  h('td', {}, formatTime(tool.updatedAt)),
                ),
              ),
            ),
          ),
        ),
    mayOperate(server.subdomain) ? newForm : null,
  );
}

/** A note under a tool's name, in the warning colour; nothing for no note. */
function warningOf(note: HTMLElement | null): HTMLElement | null {
  return note && h('div', { class: 'warnings' }, note);
}
