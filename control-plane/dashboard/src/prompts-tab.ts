/**
 * The Prompts tab: the server's prompts (name, title, arguments, where the
 * messages come from, version, update time) and a form to start a new one;
 * with a prompt name in the URL it opens the editor instead.
 */
import { replaceChildren } from './dom.js';
import { listEntries } from './entry-api.js';
import { entryList } from './entry-list.js';
import { renderPromptEditor } from './prompt-editor.js';
import type { ServerInfo } from './types.js';

/** Renders the prompt list, or the editor of `promptName`. */
export async function renderPromptsTab(
  panel: HTMLElement,
  server: ServerInfo,
  promptName?: string,
): Promise<void> {
  if (promptName !== undefined) {
    await renderPromptEditor(panel, server, promptName);
    return;
  }
  const prompts = await listEntries(server.subdomain, 'prompt');
  replaceChildren(
    panel,
    entryList(server, 'prompt', prompts, [
      { title: 'Title', cell: (prompt) => prompt.title ?? '—' },
      {
        title: 'Arguments',
        cell: (prompt) => prompt.arguments.map((argument) => argument.name).join(', ') || '—',
      },
      { title: 'Messages', cell: (prompt) => (prompt.code === undefined ? 'Template' : 'Code') },
    ]),
  );
}
