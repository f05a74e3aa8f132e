/**
 * The page every editor of a saved, versioned definition shares (tools,
 * prompts, resources), around the fields of its own: a link back to the
 * list, the form, a try-it panel and the version history. Saving sends the
 * whole definition; on refusal the editor shows why and nothing is saved,
 * on success the new version gets a fresh try-it panel and history. Delete
 * asks first; a rollback reloads the editor. A principal that may not change
 * the server reads the definition and its history, with no control to save,
 * delete, try or roll back.
 */
import { api } from './api.js';
import { makeEditorsReadOnly } from './code-editor.js';
import { announce, confirmDialog, h, replaceChildren, type Child } from './dom.js';
import { disableControls, mayOperate, readOnlyNote, roleNote } from './permissions.js';
import { renderVersionHistory } from './versions-panel.js';

/** What an editor brings to the page. */
export interface EditorPageOptions<R extends { version: number }> {
  /** What is edited, as the page names it ("tool", "prompt", "resource"). */
  kind: string;
  name: string;
  /** The server the definition belongs to: who may change it depends on it. */
  subdomain: string;
  /** The definition's admin API path (PUT, DELETE, `/versions`, `/rollback`). */
  path: string;
  /** The dashboard route of the kind's list, linked as "All {kind}s". */
  listRoute: string;
  /** The saved definition; undefined for a new name. */
  record: R | undefined;
  /** The form's fields, between its heading and its error box. */
  fields: (Child | Child[])[];
  /**
   * The definition as typed, after clearing what the last refusal showed.
   * It may throw to refuse the form before anything is sent; `showError`
   * then shows the error as it shows the server's.
   */
  collect(): unknown;
  /** Shows why a save was refused: in `errorBox`, and at the fields it is about. */
  showError(errorBox: HTMLElement, error: unknown): void;
  /** Whether the page offers to delete a saved definition. */
  canDelete: boolean;
  /** The try-it panel: its title, its note before a first save, and its contents for a saved version. */
  tryPanel: { title: string; unsavedHint: string; render(section: HTMLElement, record: R): void };
  /** Renders the editor again from the store (after a rollback). */
  reload(): void;
}

/** Renders the editor's page into `panel`. */
export async function renderEditorPage<R extends { version: number }>(
  panel: HTMLElement,
  options: EditorPageOptions<R>,
): Promise<void> {
  const { kind, name, path, record } = options;
  const noun = `${kind[0]!.toUpperCase()}${kind.slice(1)}`;
  const editable = mayOperate(options.subdomain);
  if (!editable && !record) {
    replaceChildren(
      panel,
      h('p', { class: 'crumbs' }, h('a', { href: options.listRoute }, `All ${kind}s`)),
      h('h2', {}, `No ${kind} ${name}`),
      h('p', {}, `This server has no ${kind} named ${name}.`),
    );
    return;
  }
  const errorBox = h('div', { role: 'alert', class: 'error', id: `${kind}-error` });
  const status = h('p', { role: 'status', class: 'ok', id: `${kind}-status` });
  const tryPanel = h('section', { class: 'card' });
  const versions = h('section', { class: 'card' });
  const heading = h(
    'h2',
    { id: 'editor-heading' },
    record ? `${noun} ${name} (version ${record.version})` : `New ${kind} ${name}`,
  );
  const showSaved = async (saved: R) => {
    if (editable) {
      options.tryPanel.render(tryPanel, saved);
    } else {
      replaceChildren(
        tryPanel,
        h('h2', {}, options.tryPanel.title),
        roleNote(`may not use ${options.tryPanel.title} on this server.`),
      );
    }
    versions.hidden = false;
    await renderVersionHistory(versions, {
      base: path,
      name,
      onRolledBack: options.reload,
      canRollBack: editable,
    });
  };
  const deleteButton =
    editable && options.canDelete
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            hidden: record === undefined,
            onclick: async () => {
              if (
                !(await confirmDialog(`Delete ${kind} ${name} and its history?`, `Delete ${name}`))
              )
                return;
              try {
                await api('DELETE', path);
                announce(`${noun} ${name} deleted.`);
                location.hash = options.listRoute;
              } catch (error) {
                replaceChildren(errorBox, h('p', {}, (error as Error).message));
              }
            },
          },
          `Delete ${kind}`,
        )
      : null;

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'editor-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        errorBox.replaceChildren();
        status.textContent = '';
        try {
          const saved = await api<R>('PUT', path, options.collect());
          status.textContent = `Saved as version ${saved.version}.`;
          heading.textContent = `${noun} ${name} (version ${saved.version})`;
          if (deleteButton) deleteButton.hidden = false;
          announce(status.textContent);
          await showSaved(saved);
        } catch (error) {
          options.showError(errorBox, error);
        }
      },
    },
    heading,
    editable ? null : readOnlyNote(`this ${kind}`),
    ...options.fields,
    errorBox,
    status,
    editable
      ? h(
          'div',
          { class: 'form-actions' },
          h('button', { type: 'submit', class: 'primary' }, `Save ${kind}`),
          deleteButton,
        )
      : null,
  );
  if (!editable) {
    disableControls(form);
    makeEditorsReadOnly(form);
  }
  replaceChildren(
    panel,
    h('p', { class: 'crumbs' }, h('a', { href: options.listRoute }, `All ${kind}s`)),
    form,
    tryPanel,
    versions,
  );
  if (record) {
    await showSaved(record);
  } else {
    replaceChildren(
      tryPanel,
      h('h2', {}, options.tryPanel.title),
      h('p', { class: 'hint' }, options.tryPanel.unsavedHint),
    );
    versions.hidden = true;
  }
}
