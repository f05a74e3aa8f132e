/**
 * An audit entry's summary as readable text: what was changed (each field
 * that differs, before → after, leaving out the update time every change
 * moves), what was created or removed (its fields), and the note. Values
 * show as short text: a string as itself, a list joined, anything else as
 * compact JSON, long ones cut.
 */
import { h, type Child } from './dom.js';
import type { AuditEntry } from './account-types.js';

/** Longest a value shows, in characters; the rest is cut with an ellipsis. */
const MAX_VALUE_LENGTH = 160;
/** Fields every change moves, which say nothing about what changed. */
const BOOKKEEPING = new Set(['updatedAt']);

/** An entry's `summary` as elements, or a dash when it says nothing. */
export function auditSummaryView(summary: AuditEntry['summary']): Child {
  const { before, after, note, count } = summary ?? {};
  const parts: Child[] = [];
  if (note) parts.push(h('p', { class: 'audit-note' }, note));
  // A refusal entry stands for every refusal of its kind in the minute from its time.
  if (count !== undefined && count > 1) {
    parts.push(h('p', { class: 'audit-note' }, `${count} times in that minute`));
  }
  if (before !== undefined && after !== undefined) {
    parts.push(changeList(before, after));
  } else if (after !== undefined) {
    parts.push(fieldList('Now', after));
  } else if (before !== undefined) {
    parts.push(fieldList('Was', before));
  }
  return parts.length > 0 ? h('div', { class: 'audit-summary' }, parts) : '—';
}

/** Each field that differs: `name: before → after`. */
function changeList(before: unknown, after: unknown): Child {
  if (!isRecord(before) || !isRecord(after)) {
    return h('p', {}, `${valueText(before)} → ${valueText(after)}`);
  }
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = names.filter(
    (name) =>
      !BOOKKEEPING.has(name) && JSON.stringify(before[name]) !== JSON.stringify(after[name]),
  );
  if (changed.length === 0) {
    // What changed is what the log never records: a password, a secret value, a key.
    return h(
      'p',
      {},
      'No recorded field changed (passwords, secret values and keys are never recorded).',
    );
  }
  return h(
    'ul',
    { class: 'audit-changes' },
    changed.map((name) =>
      h(
        'li',
        {},
        h('span', { class: 'audit-field' }, `${name}: `),
        name in before ? valueText(before[name]) : '(none)',
        ' → ',
        name in after ? valueText(after[name]) : '(removed)',
      ),
    ),
  );
}

/** The fields of something created ("Now") or removed ("Was"). */
function fieldList(title: string, value: unknown): Child {
  if (!isRecord(value)) return h('p', {}, `${title}: ${valueText(value)}`);
  return h(
    'ul',
    { class: 'audit-changes', 'aria-label': title },
    Object.entries(value).map(([name, field]) =>
      h('li', {}, h('span', { class: 'audit-field' }, `${name}: `), valueText(field)),
    ),
  );
}

/** A value as short text. */
export function valueText(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = 'none';
  else if (typeof value === 'string') text = value === '' ? '(empty)' : value;
  else if (Array.isArray(value) && value.every((item) => typeof item !== 'object'))
    text = value.length === 0 ? '(none)' : value.join(', ');
  else text = JSON.stringify(value);
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
