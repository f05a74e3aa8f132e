/**
 * The title and description a prompt or resource shows to clients, with
 * the messages of their problems. What is sent of them is the editor's
 * call: a prompt always has a description, a resource only a non-blank one.
 */
import { h } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import type { EntryKind } from '../../store/index.js';

export interface EntryTextFields {
  /** The title field and the description field. */
  readonly elements: HTMLElement[];
  /** The title (trimmed, left out when blank: it is optional) and the description as typed. */
  value(): { title?: string; description: string };
  readonly slots: ProblemSlot[];
}

/** Builds the fields with `initial` values, under ids `{kind}-title` and `{kind}-description`. */
export function createEntryTextFields(
  kind: EntryKind,
  initial: { title?: string; description?: string } | undefined,
  descriptionLabel: string,
): EntryTextFields {
  const titleMessage = problemMessage(`${kind}-title-error`);
  const title = h('input', {
    id: `${kind}-title`,
    value: initial?.title ?? '',
    autocomplete: 'off',
    maxlength: 256,
    'aria-describedby': titleMessage.id,
  });
  const descriptionMessage = problemMessage(`${kind}-description-error`);
  const description = h('textarea', {
    id: `${kind}-description`,
    rows: 2,
    'aria-describedby': descriptionMessage.id,
  });
  description.value = initial?.description ?? '';
  return {
    elements: [
      h(
        'div',
        { class: 'field' },
        h('label', { for: title.id }, 'Title (optional)'),
        title,
        titleMessage,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: description.id }, descriptionLabel),
        description,
        descriptionMessage,
      ),
    ],
    value: () => ({
      ...(title.value.trim() ? { title: title.value.trim() } : {}),
      description: description.value,
    }),
    slots: [
      { path: 'title', control: title, message: titleMessage },
      { path: 'description', control: description, message: descriptionMessage },
    ],
  };
}
