/**
 * A few DOM helpers so views read as markup: `h()` builds an element,
 * `announce()` speaks a status to screen readers, `confirmDialog()` asks
 * before something that cannot be undone.
 */

/** Attribute values: strings and numbers are set, `true` sets an empty attribute, false/undefined skip it; `on*` functions become listeners. */
export type Attributes = Record<
  string,
  string | number | boolean | undefined | ((event: Event) => void)
>;
/** What may go inside an element; null/undefined/false are skipped so conditions read inline. */
export type Child = Node | string | number | null | undefined | false;

/** Builds an element with attributes, listeners and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

/** Appends children, flattening arrays and skipping empty ones. */
export function append(parent: Node, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replaceChildren(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Tells screen-reader users about a change that happened out of their focus. */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  // Cleared first so repeating the same message is spoken again.
  region.textContent = '';
  window.setTimeout(() => (region.textContent = message), 50);
}

/** A modal confirmation; resolves true when the operator confirms. Focus returns to where it was. */
export function confirmDialog(question: string, confirmLabel: string): Promise<boolean> {
  const previous = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-question', class: 'confirm' });
    const finish = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      previous?.focus();
      resolve(answer);
    };
    append(
      dialog,
      h('p', { id: 'confirm-question' }, question),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => finish(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => finish(true) }, confirmLabel),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

/** An ISO time as a short local date and time. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** A value as indented JSON (undefined shows as the word). */
export function prettyJson(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value, null, 2);
}
