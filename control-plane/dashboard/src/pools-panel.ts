/**
 * The warm-pools card of a server: what it holds of the shared container
 * budget (containers by state, queue, starts and evictions in the last minute
 * and hour, its fair share and ceiling), the size of its pools (editable: the
 * server's shared pools, and each tool that has containers of its own), and
 * every pool of the server with its shape, and a legend of the terms
 * (`pool-terms.ts`). A refresh never overwrites a size
 * the operator is typing. Sizes are read-only to those who may not change the server.
 */
import { api, segment } from './api.js';
import { announce, h, replaceChildren } from './dom.js';
import { mayOperate } from './permissions.js';
import { describeShape, poolTermsLegend } from './pool-terms.js';
import type { PoolStats } from '../../sandbox/index.js';
import type { ToolRecord } from '../../store/index.js';
import type { PoolsAnswer, ServerInfo } from './types.js';

interface SizeRow {
  /** `""` for the server's shared pools, else the tool's name. */
  tool: string;
  min: HTMLInputElement;
  max: HTMLInputElement;
  dirty: boolean;
}

/** The card and its refresh. */
export function createPoolsPanel(
  server: ServerInfo,
  tools: ToolRecord[],
): { element: HTMLElement; refresh(): Promise<void> } {
  const sub = server.subdomain;
  const operate = mayOperate(sub);
  const summary = h('p', { id: 'pool-summary' }, '—');
  const error = h('p', { role: 'alert', class: 'error' });
  const poolBody = h('tbody');
  // Tools with their own containers: every tool under isolation "tool", strict tools always.
  // The server's size is the shared pools' size and the default of its tools' own pools.
  const ownPoolTools = tools.filter((tool) => server.isolation === 'tool' || tool.strict);
  const sizeRows: SizeRow[] = [
    sizeRow(
      '',
      server.isolation === 'tool' ? `the pools of ${sub}'s tools` : `the shared pools of ${sub}`,
    ),
    ...ownPoolTools.map((tool) => sizeRow(tool.name, `the pool of ${tool.name}`)),
  ];

  function sizeRow(tool: string, what: string): SizeRow {
    const id = tool === '' ? 'server' : `tool-${tool}`;
    const row: SizeRow = {
      tool,
      min: h('input', { id: `pool-min-${id}`, type: 'number', min: 0, class: 'short' }),
      max: h('input', { id: `pool-max-${id}`, type: 'number', min: 1, class: 'short' }),
      dirty: false,
    };
    const markDirty = () => (row.dirty = true);
    row.min.addEventListener('input', markDirty);
    row.max.addEventListener('input', markDirty);
    row.min.disabled = row.max.disabled = !operate;
    row.min.setAttribute('aria-label', `Minimum containers kept for ${what}`);
    row.max.setAttribute('aria-label', `Maximum size of ${what}`);
    return row;
  }

  async function save(row: SizeRow): Promise<void> {
    error.textContent = '';
    const path =
      row.tool === ''
        ? `/api/pools/${segment(sub)}`
        : `/api/pools/${segment(sub)}/${segment(row.tool)}`;
    const label = row.tool === '' ? sub : `${sub}/${row.tool}`;
    try {
      await api('PUT', path, { minWarm: Number(row.min.value), maxSize: Number(row.max.value) });
      row.dirty = false;
      announce(`Pools of ${label} sized ${row.min.value}–${row.max.value}.`);
      await refresh();
    } catch (failure) {
      error.textContent = `${label}: ${(failure as Error).message}`;
    }
  }

  const sizeBody = h(
    'tbody',
    {},
    sizeRows.map((row) =>
      h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row' },
          row.tool !== ''
            ? row.tool
            : server.isolation === 'tool'
              ? `${sub} (every tool without its own size)`
              : `${sub} (shared)`,
        ),
        h('td', {}, row.min),
        h('td', {}, row.max),
        operate &&
          h(
            'td',
            { class: 'actions' },
            h(
              'button',
              {
                type: 'button',
                'aria-label': `Save pool size for ${row.tool === '' ? sub : row.tool}`,
                onclick: () => void save(row),
              },
              'Save',
            ),
          ),
      ),
    ),
  );

  async function refresh(): Promise<void> {
    const answer = await api<PoolsAnswer>('GET', '/api/pools');
    const mine = answer.pools.filter((pool) => pool.server === sub);
    const figures = answer.servers.find((entry) => entry.server === sub);
    summary.textContent = figures
      ? `${plural(figures.containers.total, 'container')} (${figures.containers.warm} warm, ${figures.containers.busy} busy, ${figures.containers.warming} starting), ${figures.queued} queued · ` +
        `started ${figures.starts.lastMinute} in the last minute, ${figures.starts.lastHour} in the hour · ` +
        `evicted ${figures.evictions.lastMinute} in the last minute, ${figures.evictions.lastHour} in the hour · ` +
        `fair share ${figures.share.fair} of the machine's ${answer.budget.maxTotal}, at most ${figures.share.ceiling}` +
        (figures.share.maxContainers === null ? '' : ' (set by an admin)')
      : `No containers yet: the first call starts one (budget ${answer.budget.used} of ${answer.budget.maxTotal} in use).`;
    replaceChildren(poolBody, mine.map(poolRow));
    if (mine.length === 0) {
      replaceChildren(poolBody, h('tr', {}, h('td', { colspan: 9 }, 'No pool is running.')));
    }
    // What is saved, else (for a tool) its server's size, else the defaults.
    const savedSize = (unit: string) => answer.sizes.find((entry) => entry.unit === unit);
    for (const row of sizeRows) {
      if (row.dirty || document.activeElement === row.min || document.activeElement === row.max) {
        continue;
      }
      const size =
        savedSize(row.tool === '' ? sub : `${sub}/${row.tool}`) ??
        savedSize(sub) ??
        answer.defaults;
      row.min.value = String(size.minWarm);
      row.max.value = String(size.maxSize);
    }
  }

  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'pools-heading' },
    h('h2', { id: 'pools-heading' }, 'Warm pools'),
    h(
      'p',
      { class: 'hint' },
      server.isolation === 'tool'
        ? 'Isolation "tool": each tool has containers of its own.'
        : 'Isolation "server": the tools of this server share its containers; each call runs in a fresh context with only its own tool’s secrets.',
    ),
    summary,
    error,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { 'aria-label': 'Pool sizes' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Pools of', 'Min kept', 'Max size'].map((t) => h('th', { scope: 'col' }, t)),
            operate ? h('th', { scope: 'col', class: 'actions' }, 'Action') : null,
          ),
        ),
        sizeBody,
      ),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { 'aria-label': 'Running pools' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              'Pool',
              'Shape',
              'Warm',
              'Busy',
              'Starting',
              'Total',
              'Queued',
              'Started',
              'From generic',
            ].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        poolBody,
      ),
    ),
    poolTermsLegend(),
  );
  return { element, refresh };
}

function poolRow(pool: PoolStats): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h(
      'th',
      { scope: 'row' },
      pool.tool ?? '(shared)',
      // The pool keeps its last failure, however old: a warning to read, not a state.
      pool.lastError
        ? h(
            'div',
            { class: 'warnings pool-error' },
            `Last start or runner failure: ${pool.lastError}`,
          )
        : null,
    ),
    h(
      'td',
      { class: 'shape' },
      h('code', {}, pool.shape),
      h('div', { class: 'hint' }, describeShape(pool.shape)),
    ),
    ...(['warm', 'busy', 'warming', 'total', 'queued', 'started', 'adopted'] as const).map((key) =>
      h('td', { class: 'number' }, String(pool[key])),
    ),
  );
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
