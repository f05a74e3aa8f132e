/**
 * How the code of a prompt or resource template runs: the secrets it (and
 * its completion code) may read from `env`, and its limits, each optional
 * (the server's, then the defaults, apply otherwise). The same fields as a
 * tool's, under ids with the editor's `prefix`.
 */
import { h } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import type { ToolLimits } from '../../store/index.js';

export interface RunSettingsFields {
  readonly element: HTMLElement;
  /** The secret names as typed. */
  secretNames(): string[];
  value(): { secrets: string[]; limits: ToolLimits };
  readonly slots: ProblemSlot[];
}

/** Builds the fields with `initial` values (a new entry: none). */
export function createRunSettingsFields(
  prefix: string,
  initial: { secrets?: string[]; limits?: ToolLimits } | undefined,
): RunSettingsFields {
  const secrets = h('input', {
    id: `${prefix}-secrets`,
    value: (initial?.secrets ?? []).join(', '),
    autocomplete: 'off',
    'aria-describedby': `${prefix}-secrets-help ${prefix}-secrets-error`,
  });
  const timeout = h('input', {
    id: `${prefix}-timeout`,
    type: 'number',
    min: 1,
    value: initial?.limits?.timeoutMs ?? '',
    'aria-describedby': `${prefix}-limits-error`,
  });
  const memory = h('input', {
    id: `${prefix}-memory`,
    type: 'number',
    min: 16,
    value: initial?.limits?.memoryMb ?? '',
    'aria-describedby': `${prefix}-limits-error`,
  });
  const secretsError = problemMessage(`${prefix}-secrets-error`);
  const limitsError = problemMessage(`${prefix}-limits-error`);
  const secretNames = () => secrets.value.split(/[\s,]+/).filter((name) => name !== '');
  const element = h(
    'div',
    {},
    h(
      'div',
      { class: 'field' },
      h('label', { for: secrets.id }, 'Secrets used'),
      secrets,
      h(
        'span',
        { id: `${prefix}-secrets-help`, class: 'hint' },
        'Secret names, separated by commas; the code sees them as env.NAME. Set values on the Secrets tab.',
      ),
      secretsError,
    ),
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: timeout.id }, 'Timeout (ms, optional)'),
        timeout,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: memory.id }, 'Memory (MiB, optional)'),
        memory,
      ),
    ),
    limitsError,
  );
  return {
    element,
    secretNames,
    value: () => ({
      secrets: secretNames(),
      limits: {
        ...(timeout.value ? { timeoutMs: Number(timeout.value) } : {}),
        ...(memory.value ? { memoryMb: Number(memory.value) } : {}),
      },
    }),
    slots: [
      { path: 'secrets', control: secrets, message: secretsError },
      { path: 'limits', message: limitsError },
      { path: 'limits.timeoutMs', control: timeout, message: limitsError },
      { path: 'limits.memoryMb', control: memory, message: limitsError },
    ],
  };
}
