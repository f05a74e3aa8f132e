/**
 * `#/audit`: the audit log, newest first — who (actor, client address), when
 * (time, request id), what (action, server, target), the outcome and the
 * summary of what changed — with filters on actor, action, server, outcome
 * and a time range kept in the URL (`#/audit?server=…&outcome=denied`), and
 * "Older entries" paging on. Operators see their servers' entries only.
 */
import { api } from './api.js';
import { auditSummaryView } from './audit-summary.js';
import { announce, formatTime, h, replaceChildren } from './dom.js';
import type { AuditEntry, AuditPage } from './account-types.js';

/** Entries per page. */
const PAGE_SIZE = 50;
/** The filters, as the API and the URL name them. */
const FILTERS = ['actor', 'action', 'server', 'outcome', 'since', 'until'] as const;
const OUTCOMES: [string, string][] = [
  ['', 'All'],
  ['ok', 'Done'],
  ['denied', 'Denied'],
  ['failed', 'Failed'],
];

/** Renders the log, filtered by `query` (from the URL), into `main`. */
export async function renderAuditPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  const filters = new URLSearchParams();
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value) filters.set(name, value);
  }
  const first = await fetchPage(filters, null);

  const text = (name: string, label: string, hint?: string) => {
    const input = h('input', {
      id: `audit-${name}`,
      name,
      value: filters.get(name) ?? '',
      autocomplete: 'off',
      'aria-describedby': hint ? `audit-${name}-help` : undefined,
    });
    return {
      input,
      field: h(
        'div',
        { class: 'field' },
        h('label', { for: input.id }, label),
        input,
        hint ? h('span', { id: `audit-${name}-help`, class: 'hint' }, hint) : null,
      ),
    };
  };
  const actor = text('actor', 'Actor', 'An e-mail, an account id or “admin token”; exact.');
  const action = text('action', 'Action', 'Exact, e.g. account.create or server.settings.');
  const server = text('server', 'Server', 'Its subdomain.');
  const outcome = h(
    'select',
    { id: 'audit-outcome', name: 'outcome' },
    OUTCOMES.map(([value, label]) => h('option', { value }, label)),
  );
  outcome.value = filters.get('outcome') ?? '';
  const since = timeInput('since', filters.get('since'));
  const until = timeInput('until', filters.get('until'));

  const form = h(
    'form',
    {
      class: 'card filters',
      'aria-labelledby': 'audit-filter-heading',
      onsubmit: (event) => {
        event.preventDefault();
        const next = new URLSearchParams();
        for (const [name, value] of [
          ['actor', actor.input.value.trim()],
          ['action', action.input.value.trim()],
          ['server', server.input.value.trim()],
          ['outcome', outcome.value],
          ['since', isoOf(since.value)],
          ['until', isoOf(until.value)],
        ] as const) {
          if (value) next.set(name, value);
        }
        const hash = next.toString() ? `#/audit?${next}` : '#/audit';
        // The same filters again: no hashchange, so render here.
        if (location.hash === hash) void renderAuditPage(main, next);
        else location.hash = hash;
      },
    },
    h('h2', { id: 'audit-filter-heading' }, 'Filter'),
    h(
      'div',
      { class: 'fields' },
      actor.field,
      action.field,
      server.field,
      h('div', { class: 'field' }, h('label', { for: outcome.id }, 'Outcome'), outcome),
      h('div', { class: 'field' }, h('label', { for: since.id }, 'From'), since),
      h('div', { class: 'field' }, h('label', { for: until.id }, 'Until'), until),
    ),
    h(
      'div',
      { class: 'form-actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Show entries'),
      filters.toString()
        ? h('a', { href: '#/audit', class: 'button-link' }, 'Clear filters')
        : null,
    ),
  );

  const body = h('tbody', {}, first.entries.map(entryRow));
  const error = h('p', { role: 'alert', class: 'error' });
  let cursor = first.nextCursor;
  const older = h(
    'button',
    {
      type: 'button',
      hidden: cursor === null,
      onclick: async () => {
        if (cursor === null) return;
        error.textContent = '';
        older.disabled = true;
        try {
          const page = await fetchPage(filters, cursor);
          body.append(...page.entries.map(entryRow));
          cursor = page.nextCursor;
          older.hidden = cursor === null;
          announce(
            `${page.entries.length} older entries shown${cursor === null ? '; that is all' : ''}.`,
          );
        } catch (failure) {
          error.textContent = (failure as Error).message;
        } finally {
          older.disabled = false;
        }
      },
    },
    'Older entries',
  );

  replaceChildren(
    main,
    h('h1', { tabindex: -1 }, 'Audit log'),
    h(
      'p',
      { class: 'hint' },
      'Every change made on the admin side, every sign-in and every refused request, newest first. Secret values, passwords, tokens and keys are never recorded.',
    ),
    form,
    first.entries.length === 0
      ? h('p', { id: 'audit-empty' }, 'No entries match.')
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'audit' },
            h('caption', { class: 'visually-hidden' }, 'Audit log entries, newest first'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['When', 'Who', 'Action', 'Server', 'Outcome', 'What changed'].map((title) =>
                  h('th', { scope: 'col' }, title),
                ),
              ),
            ),
            body,
          ),
        ),
    error,
    older,
  );
}

function fetchPage(filters: URLSearchParams, cursor: string | null): Promise<AuditPage> {
  const query = new URLSearchParams(filters);
  query.set('limit', String(PAGE_SIZE));
  if (cursor !== null) query.set('cursor', cursor);
  return api<AuditPage>('GET', `/api/audit?${query}`);
}

const OUTCOME_WORDS: Record<AuditEntry['outcome'], string> = {
  ok: 'Done',
  denied: 'Denied',
  failed: 'Failed',
};

function entryRow(entry: AuditEntry): HTMLTableRowElement {
  return h(
    'tr',
    { class: `outcome-${entry.outcome}` },
    h(
      'td',
      {},
      h('time', { datetime: entry.at }, formatTime(entry.at)),
      entry.requestId
        ? h('div', { class: 'hint' }, 'Request ', h('code', {}, entry.requestId))
        : null,
    ),
    h(
      'td',
      {},
      entry.actor.label,
      entry.actor.kind === 'anonymous' ? h('div', { class: 'hint' }, 'not signed in') : null,
      entry.clientAddress
        ? h('div', { class: 'hint' }, 'from ', h('code', {}, entry.clientAddress))
        : null,
    ),
    h(
      'th',
      { scope: 'row' },
      h('code', {}, entry.action),
      entry.target ? h('div', { class: 'hint' }, entry.target) : null,
    ),
    h('td', {}, entry.server ?? '—'),
    h('td', {}, OUTCOME_WORDS[entry.outcome] ?? entry.outcome),
    h('td', {}, auditSummaryView(entry.summary)),
  );
}

/** A local date-and-time input showing `iso` (a filter from the URL). */
function timeInput(name: 'since' | 'until', iso: string | null): HTMLInputElement {
  const input = h('input', { id: `audit-${name}`, name, type: 'datetime-local' });
  const date = iso ? new Date(iso) : null;
  if (date && !Number.isNaN(date.getTime())) {
    const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
    input.value = local.toISOString().slice(0, 16);
  }
  return input;
}

/** A local date-and-time input's value as ISO; empty stays empty. */
function isoOf(local: string): string {
  if (!local) return '';
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
