/**
 * The rows of the invocation log. Each entry is a row (a failed one marked
 * as such, not by colour alone) that opens, by its Details button or a click
 * anywhere on it, to a row beneath with what the log keeps of the call: who
 * called (and with which API key), from which address, its request id, the
 * protocol era, the error, and the console lines. Entries do not change once
 * logged, so the rows of entries already shown are kept across refreshes:
 * an open row stays open and a focused button keeps focus.
 */
import { consoleLines } from './console-lines.js';
import { formatTime, h, replaceChildren, type Child } from './dom.js';
import type { InvocationRecord } from '../../store/index.js';

/** Columns of a row, for the "nothing matches" row and the details row to span. */
export const INVOCATION_COLUMNS = [
  'Time',
  'Kind',
  'Name',
  'Version',
  'Duration',
  'Outcome',
  'Error',
];

interface ShownEntry {
  row: HTMLTableRowElement;
  details: HTMLTableRowElement;
}

/** A `<tbody>` and how to show a page of entries in it. */
export function createInvocationRows(): {
  body: HTMLTableSectionElement;
  show(invocations: readonly InvocationRecord[]): void;
} {
  const body = h('tbody');
  let shown = new Map<string, ShownEntry>();
  return {
    body,
    show(invocations) {
      const next = new Map<string, ShownEntry>();
      for (const invocation of invocations) {
        next.set(invocation.id, shown.get(invocation.id) ?? entryRows(invocation));
      }
      shown = next;
      if (invocations.length === 0) {
        replaceChildren(
          body,
          h('tr', {}, h('td', { colspan: INVOCATION_COLUMNS.length }, 'No invocations match.')),
        );
        return;
      }
      placeRows(
        body,
        [...next.values()].flatMap(({ row, details }) => [row, details]),
      );
    },
  };
}

/**
 * Puts `rows` into `body` in order, moving only what is out of place: a row
 * that is removed and put back loses focus, so rows that stay are left alone.
 */
function placeRows(body: HTMLTableSectionElement, rows: readonly HTMLTableRowElement[]): void {
  let next: ChildNode | null = body.firstChild;
  for (const row of rows) {
    if (row === next) {
      next = row.nextSibling;
      continue;
    }
    body.insertBefore(row, next);
  }
  while (next) {
    const stale: ChildNode = next;
    next = next.nextSibling;
    stale.remove();
  }
}

/** The row of one entry and its (closed) details row. */
function entryRows(invocation: InvocationRecord): ShownEntry {
  const detailsId = `invocation-${invocation.id.replace(/[^\w-]/g, '_')}`;
  const when = formatTime(invocation.at);
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'disclosure',
      'aria-expanded': 'false',
      'aria-controls': detailsId,
      'aria-label': `Details of ${invocation.tool} at ${when}`,
    },
    h('span', { class: 'chevron', 'aria-hidden': 'true' }),
    when,
  );
  const details = h(
    'tr',
    { id: detailsId, class: 'invocation-details', hidden: true },
    h(
      'td',
      { colspan: INVOCATION_COLUMNS.length },
      // Held to the window's width at the frame's left edge: on a phone the table scrolls, the details need not.
      h('div', { class: 'details-body' }, detailsOf(invocation, detailsId)),
    ),
  );
  const setOpen = (open: boolean) => {
    toggle.setAttribute('aria-expanded', String(open));
    details.hidden = !open;
    row.classList.toggle('open', open);
  };
  toggle.addEventListener('click', (event) => {
    event.stopPropagation();
    setOpen(details.hidden);
  });
  const failed = !invocation.ok;
  const row = h(
    'tr',
    {
      class: `invocation ${failed ? 'outcome-failed' : 'outcome-ok'}`,
      // A click anywhere on the row opens it too, unless it ends a text selection.
      onclick: () => {
        if (window.getSelection()?.isCollapsed !== false) setOpen(details.hidden);
      },
    },
    h('td', { class: 'when' }, toggle),
    h('td', {}, invocation.kind),
    h('th', { scope: 'row' }, invocation.tool),
    h('td', { class: 'number' }, invocation.version),
    h('td', { class: 'number' }, `${Math.round(invocation.durationMs)} ms`),
    h(
      'td',
      { class: failed ? 'status-failed' : 'status-ok' },
      h('span', { 'aria-hidden': 'true' }, failed ? '✕ ' : '✓ '),
      failed ? 'Failed' : 'OK',
    ),
    h('td', {}, failed ? errorText(invocation) : ''),
  );
  return { row, details };
}

/** What the log keeps of the call, as a definition list and the console lines. */
function detailsOf(invocation: InvocationRecord, idPrefix: string): Child[] {
  const caller = describeCaller(invocation.caller);
  const facts: [string, Child][] = [
    ['Caller', caller.who],
    ...(caller.apiKey === undefined ? [] : [['API key', caller.apiKey] as [string, Child]]),
    ['Client address', invocation.client ?? 'Not recorded (a test run, or no address was known)'],
    ['Request id', invocation.requestId ? h('code', {}, invocation.requestId) : 'None'],
    ['Protocol', eraText(invocation)],
    ['Invocation id', h('code', {}, invocation.id)],
  ];
  if (!invocation.ok) facts.push(['Error', h('span', { class: 'error' }, errorText(invocation))]);
  return [
    h(
      'dl',
      { class: 'facts' },
      facts.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
    ),
    ...consoleLines(invocation.logs, `${idPrefix}-console`),
  ];
}

/** Who called, in words, and the label of the API key used, if one was. */
function describeCaller(caller: unknown): { who: string; apiKey?: string } {
  const record = (typeof caller === 'object' && caller !== null ? caller : {}) as Record<
    string,
    unknown
  >;
  const text = (key: string) => (typeof record[key] === 'string' ? record[key] : undefined);
  switch (record.kind) {
    case 'admin':
      return { who: `Test run from the dashboard or admin API by ${text('actor') ?? 'an admin'}` };
    case 'anonymous':
      return { who: 'Anonymous MCP client (the server asks no authentication)' };
    case 'oauth': {
      const parts = [
        text('subject') ? `subject ${text('subject')}` : undefined,
        text('clientId') ? `client ${text('clientId')}` : undefined,
      ].filter((part) => part !== undefined);
      return { who: `OAuth 2.0 token${parts.length > 0 ? `: ${parts.join(', ')}` : ''}` };
    }
    case 'apikey':
      return {
        who: 'MCP client with an API key',
        apiKey: `“${text('label') ?? '?'}”${text('keyId') ? ` (id ${text('keyId')})` : ''}`,
      };
    default:
      return { who: 'Not recorded' };
  }
}

function eraText(invocation: InvocationRecord): string {
  const rounds =
    invocation.inputRounds > 0
      ? `; waited ${invocation.inputRounds} time${invocation.inputRounds === 1 ? '' : 's'} for the client's input`
      : '';
  switch (invocation.era) {
    case 'modern':
      return `MCP 2026-07-28 (modern)${rounds}`;
    case 'legacy':
      return `MCP 2025-11-25 or older (legacy)${rounds}`;
    default:
      return `No MCP request (a test run)${rounds}`;
  }
}

function errorText(invocation: InvocationRecord): string {
  return `${invocation.errorCode ?? ''} ${invocation.errorMessage ?? ''}`.trim();
}
