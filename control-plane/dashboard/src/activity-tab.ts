/**
 * Pools & activity: the server's warm pools (see `pools-panel.ts`) and the
 * invocation log with filters (each row opens to the call's details, see
 * `invocation-rows.ts`), headed by the calls refused before any code
 * ran, which the log counts per code rather than listing one by one. Both
 * refresh every few seconds while the tab is open.
 */
import { api, segment } from './api.js';
import { formatTime, h, replaceChildren } from './dom.js';
import { createInvocationRows, INVOCATION_COLUMNS } from './invocation-rows.js';
import { createPoolsPanel } from './pools-panel.js';
import type { InvocationRecord, RefusalTotal, ToolRecord } from '../../store/index.js';
import type { ServerInfo } from './types.js';

/** How often the figures refresh while the tab is open, in milliseconds. */
const REFRESH_MS = 2000;

/** The kinds of code the invocation log records, as the filter offers them. */
const KINDS: [string, string][] = [
  ['tool', 'Tools'],
  ['prompt', 'Prompts'],
  ['resource', 'Resources'],
  ['completion', 'Completions'],
];

/** Renders the tab; resolves the cleanup that stops refreshing. */
export async function renderActivityTab(
  panel: HTMLElement,
  server: ServerInfo,
): Promise<() => void> {
  const sub = server.subdomain;
  const { tools } = await api<{ tools: ToolRecord[] }>('GET', `/api/servers/${segment(sub)}/tools`);
  const pools = createPoolsPanel(server, tools);
  const updated = h('p', { class: 'hint', id: 'refreshed' });

  // The invocation log with its filters (tool, outcome, how many).
  const toolFilter = h(
    'select',
    { id: 'filter-tool' },
    h('option', { value: '' }, 'All tools'),
    tools.map((t) => h('option', { value: t.name }, t.name)),
  );
  // Prompts', resources' and completions' code runs are logged beside tool calls.
  const kindFilter = h(
    'select',
    { id: 'filter-kind' },
    h('option', { value: '' }, 'All kinds'),
    KINDS.map(([value, label]) => h('option', { value }, label)),
  );
  const outcomeFilter = h(
    'select',
    { id: 'filter-outcome' },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'ok' }, 'Succeeded'),
    h('option', { value: 'failed' }, 'Failed'),
  );
  const limitFilter = h(
    'select',
    { id: 'filter-limit' },
    ['20', '50', '100', '500'].map((n) => h('option', { value: n }, n)),
  );
  const log = createInvocationRows();
  const refusedSummary = h('p', { class: 'hint', id: 'refused-summary' });
  const refreshLog = async () => {
    const query = new URLSearchParams({ server: sub, limit: limitFilter.value });
    if (toolFilter.value) query.set('tool', toolFilter.value);
    if (kindFilter.value) query.set('kind', kindFilter.value);
    const { invocations, refused } = await api<{
      invocations: InvocationRecord[];
      refused: RefusalTotal[];
    }>('GET', `/api/invocations?${query}`);
    showRefused(refusedSummary, refused);
    const shown = invocations.filter(
      (i) => outcomeFilter.value === '' || (outcomeFilter.value === 'ok') === i.ok,
    );
    log.show(shown);
  };
  for (const filter of [kindFilter, toolFilter, outcomeFilter, limitFilter])
    filter.addEventListener('change', () => void refreshLog());

  replaceChildren(
    panel,
    updated,
    pools.element,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'log-heading' },
      h('h2', { id: 'log-heading' }, 'Invocation log'),
      h(
        'p',
        { class: 'hint' },
        'Open a row for who called, from where, its request id and its console lines.',
      ),
      h(
        'div',
        { class: 'fields filters' },
        h('div', { class: 'field' }, h('label', { for: 'filter-kind' }, 'Kind'), kindFilter),
        h('div', { class: 'field' }, h('label', { for: 'filter-tool' }, 'Tool'), toolFilter),
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'filter-outcome' }, 'Outcome'),
          outcomeFilter,
        ),
        h('div', { class: 'field' }, h('label', { for: 'filter-limit' }, 'Show'), limitFilter),
      ),
      refusedSummary,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { 'aria-labelledby': 'log-heading' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              INVOCATION_COLUMNS.map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          log.body,
        ),
      ),
    ),
  );

  const refresh = async () => {
    try {
      await Promise.all([pools.refresh(), refreshLog()]);
      updated.textContent = `Refreshed ${new Date().toLocaleTimeString()}; refreshes every ${REFRESH_MS / 1000} s.`;
      updated.classList.remove('error');
    } catch (failure) {
      updated.textContent = `Refresh failed: ${(failure as Error).message}`;
      updated.classList.add('error');
    }
  };
  await refresh();
  const timer = window.setInterval(() => void refresh(), REFRESH_MS);
  return () => window.clearInterval(timer);
}

/**
 * The server's refused calls, one count per code over the kept buckets (the
 * filters do not apply: the counts have no tool or kind), or that none were.
 */
function showRefused(target: HTMLElement, refused: readonly RefusalTotal[]): void {
  if (refused.length === 0) {
    target.textContent = 'No calls refused before running.';
    return;
  }
  const first = refused.map((each) => each.firstBucket).sort()[0]!;
  const last = refused.map((each) => each.lastBucket).sort()[refused.length - 1]!;
  const byCode = refused.map((each) => `${each.code} ${each.count}`).join(' · ');
  target.textContent =
    `Refused before running, counted per error code rather than listed below: ${byCode} ` +
    `(counted since ${formatTime(first)}; the latest in the time bucket starting ${formatTime(last)}).`;
}
