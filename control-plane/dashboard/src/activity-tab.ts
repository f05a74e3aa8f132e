/**
 * Pools & activity: per tool of this server, its warm pool (warm, busy,
 * warming, total, queued) with min/max editable, and the invocation log with
 * filters. Both refresh every few seconds while the tab is open; a figure
 * refresh never overwrites a size the operator is typing.
 */
import { api, segment } from './api.js';
import { announce, formatTime, h, replaceChildren } from './dom.js';
import type { InvocationInfo, PoolsAnswer, ServerInfo, ToolInfo } from './types.js';

/** How often the figures refresh while the tab is open, in milliseconds. */
const REFRESH_MS = 2000;

/** Renders the tab; resolves the cleanup that stops refreshing. */
export async function renderActivityTab(
  panel: HTMLElement,
  server: ServerInfo,
): Promise<() => void> {
  const sub = server.subdomain;
  const { tools } = await api<{ tools: ToolInfo[] }>('GET', `/api/servers/${segment(sub)}/tools`);
  const poolBody = h('tbody');
  const poolError = h('p', { role: 'alert', class: 'error' });
  const updated = h('p', { class: 'hint', id: 'refreshed' });
  const poolRows = new Map<
    string,
    {
      cells: Record<string, HTMLTableCellElement>;
      min: HTMLInputElement;
      max: HTMLInputElement;
      dirty: boolean;
    }
  >();

  for (const tool of tools) {
    const cells: Record<string, HTMLTableCellElement> = {};
    for (const key of ['warm', 'busy', 'warming', 'total', 'queued'])
      cells[key] = h('td', { class: 'number' }, '—');
    const min = h('input', { id: `pool-min-${tool.name}`, type: 'number', min: 0, class: 'short' });
    const max = h('input', { id: `pool-max-${tool.name}`, type: 'number', min: 1, class: 'short' });
    const entry = { cells, min, max, dirty: false };
    const markDirty = () => (entry.dirty = true);
    min.addEventListener('input', markDirty);
    max.addEventListener('input', markDirty);
    poolRows.set(tool.name, entry);
    poolBody.append(
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, tool.name),
        cells.warm,
        cells.busy,
        cells.warming,
        cells.total,
        cells.queued,
        h(
          'td',
          {},
          h('label', { for: min.id, class: 'visually-hidden' }, `Minimum warm for ${tool.name}`),
          min,
        ),
        h(
          'td',
          {},
          h('label', { for: max.id, class: 'visually-hidden' }, `Maximum size for ${tool.name}`),
          max,
        ),
        h(
          'td',
          {},
          h(
            'button',
            {
              type: 'button',
              'aria-label': `Save pool size for ${tool.name}`,
              onclick: async () => {
                poolError.textContent = '';
                try {
                  await api('PUT', `/api/pools/${segment(sub)}/${segment(tool.name)}`, {
                    minWarm: Number(min.value),
                    maxSize: Number(max.value),
                  });
                  entry.dirty = false;
                  announce(`Pool of ${tool.name} resized to ${min.value}–${max.value}.`);
                  await refreshPools();
                } catch (failure) {
                  poolError.textContent = `${tool.name}: ${(failure as Error).message}`;
                }
              },
            },
            'Save',
          ),
        ),
      ),
    );
  }

  const refreshPools = async () => {
    const answer = await api<PoolsAnswer>('GET', '/api/pools');
    for (const [toolName, row] of poolRows) {
      const pool = answer.pools.find((p) => p.poolKey === `${sub}/${toolName}`);
      for (const key of ['warm', 'busy', 'warming', 'total', 'queued'] as const)
        row.cells[key]!.textContent = pool ? String(pool[key]) : '0';
      if (!row.dirty && document.activeElement !== row.min && document.activeElement !== row.max) {
        row.min.value = String(pool?.minWarm ?? answer.defaults.minWarm);
        row.max.value = String(pool?.maxSize ?? answer.defaults.maxSize);
      }
    }
  };

  // The invocation log with its filters (tool, outcome, how many).
  const toolFilter = h(
    'select',
    { id: 'filter-tool' },
    h('option', { value: '' }, 'All tools'),
    tools.map((t) => h('option', { value: t.name }, t.name)),
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
  const logBody = h('tbody');
  const refreshLog = async () => {
    const query = new URLSearchParams({ server: sub, limit: limitFilter.value });
    if (toolFilter.value) query.set('tool', toolFilter.value);
    const { invocations } = await api<{ invocations: InvocationInfo[] }>(
      'GET',
      `/api/invocations?${query}`,
    );
    const shown = invocations.filter(
      (i) => outcomeFilter.value === '' || (outcomeFilter.value === 'ok') === i.ok,
    );
    replaceChildren(
      logBody,
      shown.length === 0
        ? h('tr', {}, h('td', { colspan: 6 }, 'No invocations match.'))
        : shown.map((i) =>
            h(
              'tr',
              {},
              h('td', {}, formatTime(i.at)),
              h('th', { scope: 'row' }, i.tool),
              h('td', { class: 'number' }, i.version),
              h('td', { class: 'number' }, `${Math.round(i.durationMs)} ms`),
              h('td', {}, i.ok ? 'OK' : 'Failed'),
              h('td', {}, i.ok ? '' : `${i.errorCode ?? ''} ${i.errorMessage ?? ''}`.trim()),
            ),
          ),
    );
  };
  for (const filter of [toolFilter, outcomeFilter, limitFilter])
    filter.addEventListener('change', () => void refreshLog());

  replaceChildren(
    panel,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'pools-heading' },
      h('h2', { id: 'pools-heading' }, 'Warm pools'),
      updated,
      poolError,
      tools.length === 0
        ? h('p', {}, 'No tools, so no pools.')
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { 'aria-labelledby': 'pools-heading' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  [
                    'Tool',
                    'Warm',
                    'Busy',
                    'Warming',
                    'Total',
                    'Queued',
                    'Min warm',
                    'Max size',
                    'Action',
                  ].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              poolBody,
            ),
          ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'log-heading' },
      h('h2', { id: 'log-heading' }, 'Invocation log'),
      h(
        'div',
        { class: 'fields filters' },
        h('div', { class: 'field' }, h('label', { for: 'filter-tool' }, 'Tool'), toolFilter),
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'filter-outcome' }, 'Outcome'),
          outcomeFilter,
        ),
        h('div', { class: 'field' }, h('label', { for: 'filter-limit' }, 'Show'), limitFilter),
      ),
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
              ['Time', 'Tool', 'Version', 'Duration', 'Outcome', 'Error'].map((t) =>
                h('th', { scope: 'col' }, t),
              ),
            ),
          ),
          logBody,
        ),
      ),
    ),
  );

  const refresh = async () => {
    try {
      await Promise.all([refreshPools(), refreshLog()]);
      updated.textContent = `Refreshed ${new Date().toLocaleTimeString()}; refreshes every ${REFRESH_MS / 1000} s.`;
    } catch (failure) {
      updated.textContent = `Refresh failed: ${(failure as Error).message}`;
    }
  };
  await refresh();
  const timer = window.setInterval(() => void refresh(), REFRESH_MS);
  return () => window.clearInterval(timer);
}
