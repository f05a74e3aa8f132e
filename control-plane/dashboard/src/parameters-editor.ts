/**
 * The parameter declarations of a tool: one row per parameter (name, type,
 * required, description), rows added and removed with buttons. Each control
 * is labelled with its row number so a screen reader tells them apart.
 */
import { h, replaceChildren } from './dom.js';
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

/** Builds the editor with `initial` rows; `onChange` runs after any edit. */
export function createParametersEditor(
  initial: ToolParameter[],
  onChange: () => void,
): ParametersEditor {
  const list = h('ol', { class: 'param-rows' });
  let rows: {
    name: HTMLInputElement;
    type: HTMLSelectElement;
    required: HTMLInputElement;
    description: HTMLInputElement;
    row: HTMLLIElement;
  }[] = [];

  const render = () => {
    replaceChildren(
      list,
      rows.map((r) => r.row),
    );
    rows.forEach((r, index) => relabel(r.row, index + 1));
    onChange();
  };
  const addRow = (parameter?: ToolParameter) => {
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
    required.checked = parameter?.required ?? true;
    const description = h('input', {
      id: `${id}-description`,
      value: parameter?.description ?? '',
      oninput: onChange,
    });
    const entry = { name, type, required, description, row: h('li', { class: 'param-row' }) };
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'small',
        onclick: () => {
          rows = rows.filter((r) => r !== entry);
          render();
          addButton.focus();
        },
      },
      'Remove',
    );
    replaceChildren(
      entry.row,
      h('div', { class: 'field' }, h('label', { for: name.id }), name),
      h('div', { class: 'field' }, h('label', { for: type.id }), type),
      h('div', { class: 'field checkbox' }, required, h('label', { for: required.id })),
      h('div', { class: 'field grow' }, h('label', { for: description.id }), description),
      remove,
    );
    rows.push(entry);
  };
  const addButton = h(
    'button',
    {
      type: 'button',
      onclick: () => {
        addRow();
        render();
        rows.at(-1)?.name.focus();
      },
    },
    'Add parameter',
  );

  for (const parameter of initial) addRow(parameter);
  const element = h('fieldset', { class: 'card' }, h('legend', {}, 'Parameters'), list, addButton);
  render();
  return {
    element,
    value: () =>
      rows
        .filter((r) => r.name.value.trim() !== '')
        .map((r) => ({
          name: r.name.value.trim(),
          type: r.type.value as ToolParameter['type'],
          required: r.required.checked,
          ...(r.description.value.trim() ? { description: r.description.value.trim() } : {}),
        })),
  };
}

/** Labels say which row they belong to ("Parameter 2 type"); the remove button too. */
function relabel(row: HTMLLIElement, position: number): void {
  const labels = row.querySelectorAll('label');
  const texts = ['name', 'type', 'required', 'description'];
  labels.forEach((label, i) => (label.textContent = `Parameter ${position} ${texts[i]}`));
  row.querySelector('button')?.setAttribute('aria-label', `Remove parameter ${position}`);
}
