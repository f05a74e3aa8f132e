/**
 * The editor page as prompts and resources use it: their paths in the admin
 * API, delete offered, and the problems of a refused save shown at the
 * fields through problem slots (see field-problems.ts).
 */
import { renderEditorPage } from './editor-page.js';
import { entryPath, entryRoute } from './entry-api.js';
import { clearProblems, showSaveError, type ProblemSlot } from './field-problems.js';
import type { Child } from './dom.js';
import type { EntryInputs, EntryKind, EntryRecord } from '../../store/index.js';
import type { ServerInfo } from './types.js';

/** The editor's part: its fields and how to read them. */
export interface EntryEditorOptions<K extends EntryKind> {
  server: ServerInfo;
  kind: K;
  name: string;
  /** The saved entry; undefined for a new name. */
  record: EntryRecord<K> | undefined;
  /** The form's fields, between its heading and its error box. */
  fields: (Child | Child[])[];
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
  const { server, kind, name } = options;
  // The slots of the definition last sent: a refusal indexes the rows it had.
  let slots: ProblemSlot[] = [];
  await renderEditorPage(panel, {
    kind,
    name,
    subdomain: server.subdomain,
    path: entryPath(server.subdomain, kind, name),
    listRoute: entryRoute(server.subdomain, kind),
    record: options.record,
    fields: options.fields,
    collect: () => {
      const definition = options.collect();
      slots = options.slots();
      clearProblems(slots);
      return definition;
    },
    showError: (errorBox, error) => showSaveError(errorBox, slots, error),
    canDelete: true,
    tryPanel: {
      title: options.tryTitle,
      unsavedHint: `Save the ${kind} to try it.`,
      render: options.renderTry,
    },
    reload: options.reload,
  });
}
