/**
 * Where the completions of one prompt argument or template variable come
 * from: none, a list of values (one per line or separated by commas), or
 * code run in the sandbox (CodeMirror, completing `params.argument`,
 * `params.value`, `params.arguments` and the listed secrets). Its labels
 * carry the owner's current name ("Argument 2 completion"), changed with
 * `relabel` when rows move.
 */
import { createCodeEditor } from './code-editor.js';
import { h } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import type { CompletionSource } from '../../store/index.js';

const STARTER_CODE = `// params.value: what the user typed; params.arguments: the other arguments.
return ['first', 'second'].filter((v) => v.startsWith(params.value));
`;

type Mode = 'none' | 'values' | 'code';

export interface CompletionSourceField {
  readonly element: HTMLFieldSetElement;
  /** The source as typed; undefined for none. */
  value(): CompletionSource | undefined;
  /** The values as a list, for a preview form's suggestions. */
  values(): string[];
  /** Renames the labels: `owner` is e.g. "Argument 2" or "Variable city". */
  relabel(owner: string): void;
  /** Where problems at `path` (this source's path in the definition) show. */
  slots(path: string): ProblemSlot[];
}

let fieldCount = 0;

/** Builds the field with `initial`; `secrets` names what `env` holds, for completion. */
export function createCompletionSourceField(
  owner: string,
  initial: CompletionSource | undefined,
  secrets: () => string[],
): CompletionSourceField {
  const id = `completion-${++fieldCount}`;
  const legend = h('legend', {});
  const radios = (['none', 'values', 'code'] as const).map((mode) =>
    h('input', { type: 'radio', name: `${id}-mode`, id: `${id}-mode-${mode}`, value: mode }),
  );
  const radioLabels = radios.map((radio) => h('label', { for: radio.id }));
  const valuesArea = h('textarea', {
    id: `${id}-values`,
    rows: 3,
    'aria-describedby': `${id}-values-help ${id}-error`,
  });
  const valuesLabel = h('label', { for: valuesArea.id });
  const codeLabel = h('span', { class: 'label', id: `${id}-code-label` });
  const editorHost = h('div', { class: 'code-editor small-editor' });
  const editor = createCodeEditor(editorHost, {
    doc: initial && 'code' in initial ? initial.code : STARTER_CODE,
    labelledBy: codeLabel.id,
    describedBy: `${id}-code-help`,
    scope: { parameters: () => ['argument', 'value', 'arguments'], secrets },
  });
  const message = problemMessage(`${id}-error`);
  if (initial && 'values' in initial) valuesArea.value = initial.values.join('\n');

  const valuesField = h(
    'div',
    { class: 'field' },
    valuesLabel,
    valuesArea,
    h(
      'span',
      { id: `${id}-values-help`, class: 'hint' },
      'One per line, or separated by commas. Clients get those that start with, then contain, what the user typed.',
    ),
  );
  const codeField = h(
    'div',
    { class: 'field' },
    codeLabel,
    editorHost,
    h(
      'span',
      { id: `${id}-code-help`, class: 'hint' },
      'Runs in the sandbox; returns an array of strings (or {values, total?, hasMore?}).',
    ),
  );
  const mode = (): Mode => (radios.find((radio) => radio.checked)?.value as Mode) ?? 'none';
  const show = () => {
    valuesField.hidden = mode() !== 'values';
    codeField.hidden = mode() !== 'code';
  };
  const initialMode: Mode =
    initial === undefined ? 'none' : 'values' in initial ? 'values' : 'code';
  for (const radio of radios) {
    radio.checked = radio.value === initialMode;
    radio.addEventListener('change', show);
  }
  show();

  const values = () =>
    valuesArea.value
      .split(/[\n,]/)
      .map((value) => value.trim())
      .filter((value) => value !== '');
  const element = h(
    'fieldset',
    { class: 'completion-source' },
    legend,
    h(
      'div',
      { class: 'choices' },
      radios.map((radio, index) => h('span', { class: 'choice' }, radio, radioLabels[index]!)),
    ),
    valuesField,
    codeField,
    message,
  );
  const relabel = (name: string) => {
    legend.textContent = `${name} completion`;
    // The radios are named by their legend's group, so their own labels stay short.
    const words = ['No completion', 'Values', 'Code'];
    radioLabels.forEach((label, index) => (label.textContent = words[index]!));
    valuesLabel.textContent = `${name} completion values`;
    codeLabel.textContent = `${name} completion code`;
  };
  relabel(owner);
  return {
    element,
    value: () => {
      switch (mode()) {
        case 'values':
          return { values: values() };
        case 'code':
          return { code: editor.value() };
        default:
          return undefined;
      }
    },
    values: () => (mode() === 'values' ? values() : []),
    relabel,
    slots: (path) => [
      { path, control: valuesArea, message },
      { path: `${path}.values`, control: valuesArea, message },
      { path: `${path}.code`, message, editor },
    ],
  };
}
