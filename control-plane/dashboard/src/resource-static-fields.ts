/**
 * A static resource's fields: its URI and its contents — text, or binary
 * data as base64 (typed, pasted or read from a file). The contents are kept
 * in memory by every replica, so their size counts against the server's
 * bound (the save says when it is exceeded).
 */
import { decodedBytes } from './content-view.js';
import { h } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import { fileAsBase64 } from './file-base64.js';
import { createRadioChoice } from './radio-choice.js';
import type { ResourceRecord } from '../../store/index.js';

export interface StaticFields {
  readonly element: HTMLElement;
  value(): { uri: string; text: string } | { uri: string; blob: string };
  readonly slots: ProblemSlot[];
}

/** Builds the fields of `resource` (a template or a new resource: empty). */
export function createStaticFields(resource: ResourceRecord | undefined): StaticFields {
  const uriMessage = problemMessage('resource-uri-error');
  const contentsMessage = problemMessage('resource-contents-error');
  const uri = h('input', {
    id: 'resource-uri',
    value: resource?.uri ?? '',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'docs://handbook',
    'aria-describedby': `resource-uri-help ${uriMessage.id}`,
  });
  const text = h('textarea', {
    id: 'resource-text',
    rows: 8,
    'aria-describedby': contentsMessage.id,
  });
  text.value = resource?.text ?? '';
  const blob = h('textarea', {
    id: 'resource-blob',
    rows: 4,
    class: 'json',
    spellcheck: 'false',
    'aria-describedby': `resource-blob-help ${contentsMessage.id}`,
  });
  blob.value = resource?.blob ?? '';
  const size = h('span', { id: 'resource-blob-help', class: 'hint' });
  const showSize = () => {
    const base64 = blob.value.replace(/\s+/g, '');
    size.textContent = base64
      ? `${decodedBytes(base64)} bytes. Base64, or read from a file.`
      : 'Base64, or read from a file.';
  };
  blob.addEventListener('input', showSize);
  showSize();
  const file = h('input', { id: 'resource-file', type: 'file' });
  file.addEventListener('change', async () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    blob.value = await fileAsBase64(chosen);
    showSize();
  });
  const textField = h('div', { class: 'field' }, h('label', { for: text.id }, 'Text'), text);
  const blobField = h(
    'div',
    { class: 'field' },
    h('label', { for: blob.id }, 'Contents (base64)'),
    blob,
    h('label', { for: file.id }, 'Read from a file'),
    file,
    size,
  );
  const contents = createRadioChoice({
    name: 'resource-contents',
    label: 'Contents',
    groupLabel: 'Contents',
    options: [
      { value: 'text', id: 'resource-as-text', label: 'Text' },
      { value: 'blob', id: 'resource-as-blob', label: 'Binary' },
    ],
    initial: resource?.blob !== undefined ? 'blob' : 'text',
    onChange: (chosen) => {
      textField.hidden = chosen === 'blob';
      blobField.hidden = chosen !== 'blob';
    },
  });

  return {
    element: h(
      'div',
      {},
      h(
        'div',
        { class: 'field' },
        h('label', { for: uri.id }, 'URI'),
        uri,
        h(
          'span',
          { id: 'resource-uri-help', class: 'hint' },
          'An absolute URI, one per static resource of this server.',
        ),
        uriMessage,
      ),
      contents.element,
      textField,
      blobField,
      contentsMessage,
    ),
    value: () =>
      contents.value() === 'blob'
        ? { uri: uri.value.trim(), blob: blob.value.replace(/\s+/g, '') }
        : { uri: uri.value.trim(), text: text.value },
    slots: [
      { path: 'uri', control: uri, message: uriMessage },
      { path: 'text', control: text, message: contentsMessage },
      { path: 'blob', control: blob, message: contentsMessage },
    ],
  };
}
