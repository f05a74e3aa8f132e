/**
 * The parameter declarations of a tool: one row per parameter (name, type,
 * required, description), rows added and removed with buttons. Each control
 * is labelled with its row number so a screen reader tells them apart.
 */
import { h } from './dom.js';
import { createRowList } from './row-list.js';
import type { ToolParameter } from '../../store/index.js';

const TYPES: ToolParameter['type'][] = [
  'string',
  'number',
  'integer',
  'boolean',
  'object',
  'array',
];

/** The parameters fieldset and a reader of its current declarations. */
export interface ParametersEditor {
  readonly element: HTMLFieldSetElement;
  /** The declarations as typed (rows without a name are left out). */
  value(): ToolParameter[];
}

interface ParameterRow {
  element: HTMLLIElement;
  name: HTMLInputElement;
  type: HTMLSelectElement;
  required: HTMLInputElement;
  description: HTMLInputElement;
}

/** Builds the editor with `initial` rows; `onChange` runs after any edit. */
export function createParametersEditor(
  initial: ToolParameter[],
  onChange: () => void,
): ParametersEditor {
  const rows = createRowList({
    listClass: 'param-rows',
    addLabel: 'Add parameter',
    initial,
    build: (parameter: ToolParameter | undefined, remove) => buildRow(parameter, remove, onChange),
    relabel,
    firstControl: (row) => row.name,
    onChange,
  });
  const element = h(
    'fieldset',
    { class: 'card' },
    h('legend', {}, 'Parameters'),
    rows.list,
    rows.addButton,
  );
  return {
    element,
    value: () =>
      rows
        .rows()
        .filter((r) => r.name.value.trim() !== '')
        .map((r) => ({
          name: r.name.value.trim(),
          type: r.type.value as ToolParameter['type'],
          required: r.required.checked,
          ...(r.description.value.trim() ? { description: r.description.value.trim() } : {}),
        })),
  };
}

function buildRow(
  parameter: ToolParameter | undefined,
  remove: () => void,
  onChange: () => void,
): ParameterRow {
  const id = `param-${Math.random().toString(36).slice(2, 8)}`;
  const name = h('input', {
    id: `${id}-name`,
    value: parameter?.name ?? '',
    autocomplete: 'off',
    oninput: onChange,
  });
  const type = h(
    'select',
    { id: `${id}-type`, onchange: onChange },
    TYPES.map((t) => h('option', { value: t }, t)),
  );
  type.value = parameter?.type ?? 'string';
  const required = h('input', { id: `${id}-required`, type: 'checkbox', onchange: onChange });
  // A new parameter is optional (as in JSON Schema): required is a choice the author makes.
  required.checked = parameter?.required ?? false;
  const description = h('input', {
    id: `${id}-description`,
    value: parameter?.description ?? '',
    oninput: onChange,
  });
  const element = h(
    'li',
    { class: 'param-row' },
    h('div', { class: 'field' }, h('label', { for: name.id }), name),
    h('div', { class: 'field' }, h('label', { for: type.id }), type),
    h('div', { class: 'field checkbox' }, required, h('label', { for: required.id })),
    h('div', { class: 'field grow' }, h('label', { for: description.id }), description),
    h('button', { type: 'button', class: 'small', onclick: remove }, 'Remove'),
  );
  return { element, name, type, required, description };
}

/** Labels say which row they belong to ("Parameter 2 type"); the remove button too. */
function relabel({ element: row }: ParameterRow, position: number): void {
  const labels = row.querySelectorAll('label');
  const texts = ['name', 'type', 'required', 'description'];
  labels.forEach((label, i) => (label.textContent = `Parameter ${position} ${texts[i]}`));
  row.querySelector('button')?.setAttribute('aria-label', `Remove parameter ${position}`);
}
