/**
 * What the prompt and resource editors share around their fields: the page
 * (a link back to the list, the form, a try-it panel, the version history),
 * saving (the whole definition; on refusal the problems at their fields and
 * nothing saved; on success the new version, a fresh try-it panel and
 * history), deleting after a confirmation, and reloading after a rollback.
 */
import { api } from './api.js';
import { announce, confirmDialog, h, replaceChildren, type Child } from './dom.js';
import { entryPath, entryRoute } from './entry-api.js';
import { clearProblems, showSaveError, type ProblemSlot } from './field-problems.js';
import type { EntryInputs, EntryKind, EntryRecord } from '../../store/index.js';
import type { ServerInfo } from './types.js';
import { renderVersionHistory } from './versions-panel.js';

/** The editor's part: its fields and how to read them. */
export interface EntryEditorOptions<K extends EntryKind> {
  server: ServerInfo;
  kind: K;
  name: string;
  /** The saved entry; undefined for a new name. */
  record: EntryRecord<K> | undefined;
  /** The form's fields, between its heading and its error box. */
  fields: Child[];
  /** The definition as typed. */
  collect(): EntryInputs[K];
  /** Where problems with the definition show (read after `collect`: rows sent are indexed). */
  slots(): ProblemSlot[];
  /** Title of the try-it panel ("Render", "Preview"). */
  tryTitle: string;
  /** Fills the try-it panel for a saved version. */
  renderTry(section: HTMLElement, record: EntryRecord<K>): void;
  /** Renders the editor again from the store (after a rollback). */
  reload(): void;
}

/** Renders the page of the editor into `panel`. */
export async function renderEntryEditor<K extends EntryKind>(
  panel: HTMLElement,
  options: EntryEditorOptions<K>,
): Promise<void> {
  const { server, kind, name, record } = options;
  const noun = kind === 'prompt' ? 'Prompt' : 'Resource';
  const path = entryPath(server.subdomain, kind, name);
  const errorBox = h('div', { role: 'alert', class: 'error', id: `${kind}-error` });
  const status = h('p', { role: 'status', class: 'ok', id: `${kind}-status` });
  const tryPanel = h('section', { class: 'card' });
  const versions = h('section', { class: 'card' });
  const heading = h(
    'h2',
    { id: 'editor-heading' },
    record ? `${noun} ${name} (version ${record.version})` : `New ${kind} ${name}`,
  );
  const showSaved = async (saved: EntryRecord<K>) => {
    options.renderTry(tryPanel, saved);
    versions.hidden = false;
    await renderVersionHistory(versions, { base: path, name, onRolledBack: options.reload });
  };
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      hidden: record === undefined,
      onclick: async () => {
        if (!(await confirmDialog(`Delete ${kind} ${name} and its history?`, `Delete ${name}`)))
          return;
        try {
          await api('DELETE', path);
          announce(`${noun} ${name} deleted.`);
          location.hash = entryRoute(server.subdomain, kind);
        } catch (error) {
          replaceChildren(errorBox, h('p', {}, (error as Error).message));
        }
      },
    },
    `Delete ${kind}`,
  );

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'editor-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        errorBox.replaceChildren();
        status.textContent = '';
        const definition = options.collect();
        const slots = options.slots();
        clearProblems(slots);
        try {
          const saved = await api<EntryRecord<K>>('PUT', path, definition);
          status.textContent = `Saved as version ${saved.version}.`;
          heading.textContent = `${noun} ${name} (version ${saved.version})`;
          deleteButton.hidden = false;
          announce(status.textContent);
          await showSaved(saved);
        } catch (error) {
          showSaveError(errorBox, slots, error);
        }
      },
    },
    heading,
    options.fields,
    errorBox,
    status,
    h(
      'div',
      { class: 'form-actions' },
      h('button', { type: 'submit', class: 'primary' }, `Save ${kind}`),
      deleteButton,
    ),
  );
  replaceChildren(
    panel,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: entryRoute(server.subdomain, kind) }, `All ${kind}s`),
    ),
    form,
    tryPanel,
    versions,
  );
  if (record) {
    await showSaved(record);
  } else {
    replaceChildren(
      tryPanel,
      h('h2', {}, options.tryTitle),
      h('p', { class: 'hint' }, `Save the ${kind} to try it.`),
    );
    versions.hidden = true;
  }
}
