/**
 * A list of rows the operator adds and removes with buttons (a tool's
 * parameters, a prompt's arguments and messages). Rows are numbered in
 * their labels ("Argument 2 name") so a screen reader tells them apart, and
 * renumbered when one goes. Focus follows the change: to the new row's
 * first control, or to the add button when a row is removed (its own
 * button is gone).
 */
import { h, replaceChildren } from './dom.js';

/** What the list needs of a row. */
export interface ListRow {
  readonly element: HTMLLIElement;
}

export interface RowListOptions<T, R extends ListRow> {
  /** The class of the `<ol>`. */
  listClass: string;
  /** The add button's text ("Add argument"). */
  addLabel: string;
  /** The rows to start with; `undefined` stands for an empty row. */
  initial: readonly (T | undefined)[];
  /** Builds a row for `item` (undefined: an empty one); `remove` takes it out of the list. */
  build(item: T | undefined, remove: () => void): R;
  /** Names the row's labels after its `position` (from 1). */
  relabel(row: R, position: number): void;
  /** The control a new row's focus goes to. */
  firstControl(row: R): HTMLElement;
  /** Runs after every change of the rows (added, removed, and at the start). */
  onChange?(): void;
}

export interface RowList<R extends ListRow> {
  /** The `<ol>` of the rows. */
  readonly list: HTMLOListElement;
  readonly addButton: HTMLButtonElement;
  /** The rows, in order. */
  rows(): readonly R[];
}

/** Builds the list with its `initial` rows. */
export function createRowList<T, R extends ListRow>(options: RowListOptions<T, R>): RowList<R> {
  const list = h('ol', { class: options.listClass });
  let rows: R[] = [];

  const render = () => {
    replaceChildren(
      list,
      rows.map((row) => row.element),
    );
    rows.forEach((row, index) => options.relabel(row, index + 1));
    options.onChange?.();
  };
  const addRow = (item: T | undefined) => {
    const row: R = options.build(item, () => {
      rows = rows.filter((other) => other !== row);
      render();
      addButton.focus();
    });
    rows.push(row);
  };
  const addButton = h(
    'button',
    {
      type: 'button',
      onclick: () => {
        addRow(undefined);
        render();
        const added = rows.at(-1);
        if (added) options.firstControl(added).focus();
      },
    },
    options.addLabel,
  );

  for (const item of options.initial) addRow(item);
  render();
  return { list, addButton, rows: () => rows };
}
