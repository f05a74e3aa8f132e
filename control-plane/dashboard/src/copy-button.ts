/**
 * A Copy button for a text shown beside it (an MCP address). It writes the
 * clipboard through `navigator.clipboard` where the page may (a secure
 * origin: HTTPS, or the loopback address), else through the older copy
 * command on a hidden field (plain HTTP on a LAN name), else it selects the
 * text on the page for Ctrl+C. The button says "Copied" for a moment, and a
 * screen reader is told.
 */
import { announce, h } from './dom.js';

/** How long the button says "Copied", in milliseconds. */
const COPIED_MS = 2000;

/** The button that copies `text`; `what` names it for assistive technology ("MCP address of acme"); `shown` is the element that shows the text, selected when nothing else works. */
export function copyButton(text: string, what: string, shown?: HTMLElement): HTMLButtonElement {
  let reset: number | undefined;
  const button: HTMLButtonElement = h(
    'button',
    {
      type: 'button',
      class: 'small copy',
      'aria-label': `Copy ${what}`,
      'data-copy': text,
      onclick: async () => {
        const copied = await copyText(text);
        // The legacy path focused its hidden field: keyboard users stay on the button.
        button.focus();
        window.clearTimeout(reset);
        if (copied) {
          button.textContent = 'Copied';
          button.classList.add('copied');
          announce(`Copied ${what}.`);
        } else {
          if (shown) selectContents(shown);
          button.textContent = 'Press Ctrl+C';
          announce(`${what} is selected: press Ctrl+C (⌘C on a Mac) to copy it.`);
        }
        reset = window.setTimeout(() => {
          button.textContent = 'Copy';
          button.classList.remove('copied');
        }, COPIED_MS);
      },
    },
    'Copy',
  );
  return button;
}

/** Puts `text` on the clipboard; false when the browser refused every way. */
export async function copyText(text: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // A refused permission: the copy command may still be allowed for a click.
    }
  }
  return copyWithCommand(text);
}

/**
 * The copy command on a hidden, read-only field: deprecated, yet the only
 * clipboard access a page served over plain HTTP has (no `navigator.clipboard`).
 */
function copyWithCommand(text: string): boolean {
  const field = h('textarea', {
    readonly: true,
    class: 'copy-source',
    'aria-hidden': 'true',
    tabindex: -1,
  });
  field.value = text;
  document.body.append(field);
  field.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    field.remove();
  }
}

/** Selects what `element` shows, for the user to copy by hand. */
function selectContents(element: HTMLElement): void {
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}
