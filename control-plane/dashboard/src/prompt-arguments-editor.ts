/**
 * A prompt's arguments: one row each (name, description, required, where
 * its completions come from), added and removed with buttons. Labels carry
 * the row's position ("Argument 2 name") so a screen reader tells rows
 * apart; they are renumbered when a row goes.
 */
import {
  createCompletionSourceField,
  type CompletionSourceField,
} from './completion-source-field.js';
import { h } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import { createRowList } from './row-list.js';
import type { PromptArgument } from '../../store/index.js';

/** An argument as the admin API takes it. */
type ArgumentInput = Omit<PromptArgument, 'required'> & { required?: boolean };

export interface ArgumentsEditor {
  readonly element: HTMLFieldSetElement;
  /** The arguments as typed (rows without a name are left out). */
  value(): ArgumentInput[];
  /** The names typed, for completion of `params.` and checks of placeholders. */
  names(): string[];
  /** Problem slots of the rows sent by the last `value()`, by their index there. */
  slots(): ProblemSlot[];
}

interface Row {
  element: HTMLLIElement;
  name: HTMLInputElement;
  description: HTMLInputElement;
  required: HTMLInputElement;
  completion: CompletionSourceField;
  labels: HTMLLabelElement[];
  remove: HTMLButtonElement;
  message: HTMLElement;
  /** Kept as saved: the editor has no field for an argument's title. */
  title?: string;
}

let rowCount = 0;

/** Builds the editor with `initial` rows; `secrets` are offered to completion code. */
export function createArgumentsEditor(
  initial: readonly PromptArgument[],
  secrets: () => string[],
): ArgumentsEditor {
  const listMessage = problemMessage('arguments-error');
  const rows = createRowList({
    listClass: 'param-rows',
    addLabel: 'Add argument',
    initial,
    build: (argument: PromptArgument | undefined, remove) => buildRow(argument, remove, secrets),
    relabel,
    firstControl: (row) => row.name,
  });
  const sent = () => rows.rows().filter((row) => row.name.value.trim() !== '');
  return {
    element: h(
      'fieldset',
      { class: 'card' },
      h('legend', {}, 'Arguments'),
      h(
        'p',
        { class: 'hint' },
        'Each is a {{placeholder}} in template messages and a params key in code: letters, digits and _.',
      ),
      rows.list,
      listMessage,
      rows.addButton,
    ),
    value: () =>
      sent().map((row) => {
        const complete = row.completion.value();
        return {
          name: row.name.value.trim(),
          ...(row.title ? { title: row.title } : {}),
          ...(row.description.value.trim() ? { description: row.description.value.trim() } : {}),
          required: row.required.checked,
          ...(complete ? { complete } : {}),
        };
      }),
    names: () => sent().map((row) => row.name.value.trim()),
    slots: () => [
      { path: 'arguments', message: listMessage },
      ...sent().flatMap((row, index) => [
        { path: `arguments.${index}`, message: row.message },
        { path: `arguments.${index}.name`, control: row.name, message: row.message },
        {
          path: `arguments.${index}.description`,
          control: row.description,
          message: row.message,
        },
        ...row.completion.slots(`arguments.${index}.complete`),
      ]),
    ],
  };
}

function buildRow(
  argument: PromptArgument | undefined,
  remove: () => void,
  secrets: () => string[],
): Row {
  const id = `argument-${++rowCount}`;
  const message = problemMessage(`${id}-error`);
  const name = h('input', {
    id: `${id}-name`,
    value: argument?.name ?? '',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': message.id,
  });
  const description = h('input', { id: `${id}-description`, value: argument?.description ?? '' });
  const required = h('input', { id: `${id}-required`, type: 'checkbox' });
  required.checked = argument?.required ?? false;
  const completion = createCompletionSourceField('Argument', argument?.complete, secrets);
  const labels = [name, description, required].map((control) => h('label', { for: control.id }));
  const removeButton = h('button', { type: 'button', class: 'small', onclick: remove }, 'Remove');
  return {
    element: h(
      'li',
      { class: 'param-row argument-row' },
      h('div', { class: 'field' }, labels[0], name),
      h('div', { class: 'field grow' }, labels[1], description),
      h('div', { class: 'field checkbox' }, required, labels[2]),
      removeButton,
      message,
      completion.element,
    ),
    name,
    description,
    required,
    completion,
    labels,
    message,
    title: argument?.title,
    remove: removeButton,
  };
}

function relabel(row: Row, position: number): void {
  const words = ['name', 'description', 'required'];
  row.labels.forEach(
    (label, index) => (label.textContent = `Argument ${position} ${words[index]}`),
  );
  row.remove.setAttribute('aria-label', `Remove argument ${position}`);
  row.completion.relabel(`Argument ${position}`);
}
