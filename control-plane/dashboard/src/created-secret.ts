/**
 * A new API key or personal token, shown the only time it can be: in a
 * read-only field, focused and selected, with a Copy button (the clipboard,
 * or selecting it for Ctrl+C where the browser refuses the clipboard), and
 * the reminder that only its hash is kept.
 */
import { announce, h, replaceChildren } from './dom.js';

/** What was created and how it is used. */
export interface CreatedSecret {
  /** Starts the ids of the elements ("api-key"). */
  idPrefix: string;
  /** What it is, lower case ("API key", "token"). */
  noun: string;
  /** Its label, as its creator named it. */
  label: string;
  /** The secret itself. */
  value: string;
  /** How the value is sent, said under it. */
  usage: string;
}

/** Shows the new value in `section`, focused and selected, with a copy button. */
export function showCreatedSecret(section: HTMLElement, created: CreatedSecret): void {
  const { idPrefix, noun, label, value } = created;
  const field = h('input', {
    id: `${idPrefix}-value`,
    readonly: true,
    value,
    class: 'secret-value',
    spellcheck: false,
    autocomplete: 'off',
    'aria-describedby': `${idPrefix}-value-help`,
  });
  const copied = h('p', { role: 'status', class: 'ok' });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      copied.textContent = 'Copied.';
    } catch {
      // No clipboard access (an insecure origin, a refused permission): the text is selected instead.
      field.select();
      copied.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy it.';
    }
  };
  replaceChildren(
    section,
    h(
      'h2',
      { id: `${idPrefix}-created-heading` },
      `${capitalised(noun)} “${label}” created: copy it now`,
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: field.id }, `New ${noun}`),
      h(
        'div',
        { class: 'copy-row' },
        field,
        h('button', { type: 'button', onclick: () => void copy() }, 'Copy'),
      ),
      h(
        'span',
        { id: `${idPrefix}-value-help`, class: 'hint' },
        `It is shown only this once: mcphost keeps only a hash of it. If it is lost, revoke it and create another. ${created.usage}`,
      ),
    ),
    copied,
  );
  section.hidden = false;
  field.focus();
  field.select();
  announce(`${capitalised(noun)} ${label} created. Copy it now: it is shown only once.`);
}

/** "API key" → "API key", "token" → "Token": a noun starting a sentence. */
export function capitalised(noun: string): string {
  return `${noun[0]!.toUpperCase()}${noun.slice(1)}`;
}
