/**
 * The list half of the Prompts and Resources tabs: a table of the server's
 * entries (the name links to the editor) and, for those who may change
 * them, a form that opens the editor of a new name. The tabs say which columns they show.
 */
import { entryRoute } from './entry-api.js';
import { formatTime, h, type Child } from './dom.js';
import { mayOperate } from './permissions.js';
import type { EntryKind } from '../../store/index.js';
import type { ServerInfo } from './types.js';

/** A column after the name: its heading and cell. */
export interface EntryColumn<R> {
  title: string;
  cell(record: R): Child;
  numeric?: boolean;
}

/** The elements of the list: heading, table (or a note that there is none), new-entry form. */
export function entryList<R extends { name: string; version: number; updatedAt: string }>(
  server: ServerInfo,
  kind: EntryKind,
  records: readonly R[],
  columns: readonly EntryColumn<R>[],
): HTMLElement[] {
  const noun = kind === 'prompt' ? 'Prompt' : 'Resource';
  const plural = `${noun}s`;
  const allColumns: EntryColumn<R>[] = [
    ...columns,
    { title: 'Version', cell: (record) => record.version, numeric: true },
    { title: 'Updated', cell: (record) => formatTime(record.updatedAt) },
  ];
  const newName = h('input', {
    id: `new-${kind}-name`,
    name: `${kind}Name`,
    required: true,
    pattern: '[A-Za-z0-9_.\\-]{1,128}',
    autocomplete: 'off',
    'aria-describedby': `new-${kind}-help`,
  });
  const error = h('p', { role: 'alert', class: 'error' });
  const newForm = h(
    'form',
    {
      class: 'card inline-form',
      'aria-labelledby': `new-${kind}-heading`,
      onsubmit: (event) => {
        event.preventDefault();
        const name = newName.value.trim();
        if (records.some((record) => record.name === name)) {
          error.textContent = `A ${kind} named ${name} already exists; open it from the list.`;
          return;
        }
        location.hash = entryRoute(server.subdomain, kind, name);
      },
    },
    h('h2', { id: `new-${kind}-heading` }, `Add a ${kind}`),
    h(
      'div',
      { class: 'field' },
      h('label', { for: newName.id }, `${noun} name`),
      newName,
      h('span', { id: `new-${kind}-help`, class: 'hint' }, '1–128 of A–Z a–z 0–9 _ - .'),
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, `New ${kind}`),
  );
  const elements: (HTMLElement | null)[] = [
    h('h2', {}, plural),
    records.length === 0
      ? h('p', {}, `No ${kind}s yet.`)
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('caption', { class: 'visually-hidden' }, `${plural} of ${server.subdomain}`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Name'),
                allColumns.map((column) => h('th', { scope: 'col' }, column.title)),
              ),
            ),
            h(
              'tbody',
              {},
              records.map((record) =>
                h(
                  'tr',
                  {},
                  h(
                    'th',
                    { scope: 'row' },
                    h('a', { href: entryRoute(server.subdomain, kind, record.name) }, record.name),
                  ),
                  allColumns.map((column) =>
                    h('td', column.numeric ? { class: 'number' } : {}, column.cell(record)),
                  ),
                ),
              ),
            ),
          ),
        ),
    mayOperate(server.subdomain) ? newForm : null,
  ];
  return elements.filter((element): element is HTMLElement => element !== null);
}
