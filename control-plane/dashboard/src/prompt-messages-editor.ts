/**
 * A prompt's template messages: one row each — role, content type, and the
 * content: text; an image or audio clip (base64, typed or read from a file);
 * or an embedded resource (URI, MIME type, text). `{{argument}}` in text and
 * in a resource's URI and text is replaced when the prompt is rendered.
 * Labels carry the row's position ("Message 2 text").
 */
import { h, replaceChildren } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import { fileAsBase64 } from './file-base64.js';
import { createRowList } from './row-list.js';
import type { PromptMessage } from '../../store/index.js';

type ContentType = PromptMessage['content']['type'];
const CONTENT_TYPES: { type: ContentType; label: string }[] = [
  { type: 'text', label: 'Text' },
  { type: 'image', label: 'Image' },
  { type: 'audio', label: 'Audio' },
  { type: 'resource', label: 'Embedded resource' },
];

export interface MessagesEditor {
  readonly element: HTMLFieldSetElement;
  value(): PromptMessage[];
  slots(): ProblemSlot[];
}

interface Row {
  element: HTMLLIElement;
  role: HTMLSelectElement;
  type: HTMLSelectElement;
  text: HTMLTextAreaElement;
  mimeType: HTMLInputElement;
  data: HTMLTextAreaElement;
  file: HTMLInputElement;
  uri: HTMLInputElement;
  /** An embedded resource's binary contents as saved (the editor edits text ones). */
  blob?: string;
  groups: { text: HTMLElement; mime: HTMLElement; data: HTMLElement; resource: HTMLElement };
  remove: HTMLButtonElement;
  message: HTMLElement;
}

let rowCount = 0;

/** Builds the editor with `initial` rows (a new prompt: one empty user text message). */
export function createMessagesEditor(initial: readonly PromptMessage[]): MessagesEditor {
  const listMessage = problemMessage('messages-error');
  const rows = createRowList({
    listClass: 'message-rows',
    addLabel: 'Add message',
    initial: initial.length > 0 ? initial : [undefined],
    build: buildRow,
    relabel,
    firstControl: (row) => row.text,
  });

  return {
    element: h(
      'fieldset',
      { class: 'card' },
      h('legend', {}, 'Template messages'),
      h(
        'p',
        { class: 'hint' },
        '{{argument}} in text, and in a resource’s URI and text, is replaced by the argument’s value (empty when an optional one is left out).',
      ),
      rows.list,
      listMessage,
      rows.addButton,
    ),
    value: () => rows.rows().map(messageOf),
    slots: () => [
      { path: 'messages', message: listMessage },
      ...rows.rows().flatMap((row, index) => [
        { path: `messages.${index}`, message: row.message },
        { path: `messages.${index}.role`, control: row.role, message: row.message },
        { path: `messages.${index}.content`, control: contentControl(row), message: row.message },
        {
          path: `messages.${index}.content.mimeType`,
          control: row.mimeType,
          message: row.message,
        },
        { path: `messages.${index}.content.data`, control: row.data, message: row.message },
        { path: `messages.${index}.content.resource`, control: row.text, message: row.message },
        {
          path: `messages.${index}.content.resource.uri`,
          control: row.uri,
          message: row.message,
        },
        {
          path: `messages.${index}.content.resource.mimeType`,
          control: row.mimeType,
          message: row.message,
        },
      ]),
    ],
  };
}

function buildRow(message: PromptMessage | undefined, onRemove: () => void): Row {
  const id = `message-${++rowCount}`;
  const error = problemMessage(`${id}-error`);
  const content = message?.content;
  const role = h(
    'select',
    { id: `${id}-role` },
    h('option', { value: 'user' }, 'user'),
    h('option', { value: 'assistant' }, 'assistant'),
  );
  role.value = message?.role ?? 'user';
  const type = h(
    'select',
    { id: `${id}-type` },
    CONTENT_TYPES.map(({ type: value, label }) => h('option', { value }, label)),
  );
  type.value = content?.type ?? 'text';
  const text = h('textarea', { id: `${id}-text`, rows: 3, 'aria-describedby': error.id });
  const mimeType = h('input', { id: `${id}-mime`, autocomplete: 'off', spellcheck: 'false' });
  const data = h('textarea', {
    id: `${id}-data`,
    rows: 2,
    class: 'json',
    spellcheck: 'false',
    'aria-describedby': `${id}-data-help`,
  });
  const file = h('input', { id: `${id}-file`, type: 'file' });
  const uri = h('input', { id: `${id}-uri`, autocomplete: 'off', spellcheck: 'false' });
  let blob: string | undefined;
  if (content?.type === 'text') text.value = content.text;
  if (content?.type === 'image' || content?.type === 'audio') {
    data.value = content.data;
    mimeType.value = content.mimeType;
  }
  if (content?.type === 'resource') {
    uri.value = content.resource.uri;
    mimeType.value = content.resource.mimeType ?? '';
    if ('text' in content.resource) text.value = content.resource.text;
    else blob = content.resource.blob;
  }
  file.addEventListener('change', () => void readFile(file, data, mimeType));

  const groups = {
    text: h('div', { class: 'field grow' }, h('label', { for: text.id }), text),
    mime: h('div', { class: 'field' }, h('label', { for: mimeType.id }), mimeType),
    data: h(
      'div',
      { class: 'field grow' },
      h('label', { for: data.id }),
      data,
      h('label', { for: file.id }),
      file,
      h('span', { id: `${id}-data-help`, class: 'hint' }, 'Base64, or read from a file.'),
    ),
    resource: h('div', { class: 'field grow' }, h('label', { for: uri.id }), uri),
  };
  const row: Row = {
    element: h('li', { class: 'message-row' }),
    role,
    type,
    text,
    mimeType,
    data,
    file,
    uri,
    blob,
    groups,
    message: error,
    remove: h('button', { type: 'button', class: 'small', onclick: onRemove }, 'Remove'),
  };
  const show = () => {
    const kind = type.value as ContentType;
    groups.text.hidden = kind !== 'text' && kind !== 'resource';
    groups.mime.hidden = kind === 'text';
    groups.data.hidden = kind !== 'image' && kind !== 'audio';
    groups.resource.hidden = kind !== 'resource';
    relabelText(row);
  };
  type.addEventListener('change', show);
  replaceChildren(
    row.element,
    h(
      'div',
      { class: 'message-head' },
      h('div', { class: 'field' }, h('label', { for: role.id }), role),
      h('div', { class: 'field' }, h('label', { for: type.id }), type),
      row.remove,
    ),
    groups.resource,
    groups.mime,
    groups.text,
    groups.data,
    error,
  );
  show();
  return row;
}

/** The message a row stands for. */
function messageOf(row: Row): PromptMessage {
  const role = row.role.value as PromptMessage['role'];
  const mimeType = row.mimeType.value.trim();
  switch (row.type.value as ContentType) {
    case 'image':
    case 'audio':
      return {
        role,
        content: {
          type: row.type.value as 'image' | 'audio',
          data: row.data.value.replace(/\s+/g, ''),
          mimeType,
        },
      };
    case 'resource': {
      const base = { uri: row.uri.value.trim(), ...(mimeType ? { mimeType } : {}) };
      return {
        role,
        content: {
          type: 'resource',
          // Saved binary contents stay until text is typed in their place.
          resource:
            row.blob !== undefined && row.text.value === ''
              ? { ...base, blob: row.blob }
              : { ...base, text: row.text.value },
        },
      };
    }
    default:
      return { role, content: { type: 'text', text: row.text.value } };
  }
}

/** The control that holds a row's content, for a problem with it. */
function contentControl(row: Row): HTMLElement {
  switch (row.type.value as ContentType) {
    case 'image':
    case 'audio':
      return row.data;
    case 'resource':
      return row.uri;
    default:
      return row.text;
  }
}

/** Reads the chosen file as base64 into `data`, and its type into `mimeType` when empty. */
async function readFile(
  file: HTMLInputElement,
  data: HTMLTextAreaElement,
  mimeType: HTMLInputElement,
): Promise<void> {
  const chosen = file.files?.[0];
  if (!chosen) return;
  data.value = await fileAsBase64(chosen);
  if (mimeType.value.trim() === '' && chosen.type) mimeType.value = chosen.type;
}

function relabel(row: Row, position: number): void {
  const set = (control: HTMLElement, text: string) => {
    const label = row.element.querySelector(`label[for="${control.id}"]`);
    if (label) label.textContent = `Message ${position} ${text}`;
  };
  set(row.role, 'role');
  set(row.type, 'content type');
  set(row.mimeType, 'MIME type');
  set(row.data, 'data (base64)');
  set(row.file, 'file');
  set(row.uri, 'resource URI');
  row.element.dataset.position = String(position);
  relabelText(row);
  row.remove.setAttribute('aria-label', `Remove message ${position}`);
}

/** The text field is the message's text, or the embedded resource's. */
function relabelText(row: Row): void {
  const position = row.element.dataset.position ?? '';
  const label = row.element.querySelector(`label[for="${row.text.id}"]`);
  if (label) {
    label.textContent =
      row.type.value === 'resource'
        ? `Message ${position} resource text`
        : `Message ${position} text`;
  }
}
