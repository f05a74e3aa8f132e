/**
 * Where the admin API's objections to a save are shown. Each field of an
 * editor registers a slot under the path of the definition it edits
 * (`arguments.0.name`, `messages.1.content`, `complete.city`); a problem
 * goes to the slot with the longest path that holds it — the control marked
 * invalid, the message under it, a code editor's line highlighted for a
 * syntax error — and every problem is also listed in the form's error box,
 * so none is lost when no field claims it. Nothing is saved on any of them.
 * The tool editor, whose schema fields show their problems their own way,
 * shares the reading of the answer and the list in the box.
 */
import { ApiError } from './api.js';
import type { CodeEditor } from './code-editor.js';
import { h, replaceChildren } from './dom.js';
import type { FieldProblem } from './schema-fields.js';

/** A field that shows the problems at or below `path`. */
export interface ProblemSlot {
  /** Dotted path in the definition, as the admin API reports problems. */
  path: string;
  /** Marked `aria-invalid` while a problem is shown (an input, a select, a textarea). */
  control?: HTMLElement;
  /** Where the messages go; one element may serve several slots of a row. */
  message: HTMLElement;
  /** A code editor whose line a syntax error marks. */
  editor?: CodeEditor;
}

/** The element a slot's messages go in; `id` lets a control name it in `aria-describedby`. */
export function problemMessage(id: string): HTMLElement {
  return h('div', { id, class: 'error field-error' });
}

/** Removes every shown problem. */
export function clearProblems(slots: readonly ProblemSlot[]): void {
  for (const slot of slots) {
    slot.control?.removeAttribute('aria-invalid');
    slot.message.replaceChildren();
    slot.editor?.markError(null);
  }
}

/**
 * Shows a failed save: at its fields and in `errorBox`. Errors that are not
 * about the definition (the network, a 5xx) go to the box alone.
 */
export function showSaveError(
  errorBox: HTMLElement,
  slots: readonly ProblemSlot[],
  error: unknown,
): void {
  clearProblems(slots);
  const syntax = syntaxProblem(error);
  if (syntax) {
    const slot = slotFor(slots, syntax.field);
    const where = `line ${syntax.line}, column ${syntax.column ?? '?'}`;
    if (slot) {
      slot.editor?.markError(syntax.line, syntax.message, syntax.column);
      showAt(slot, `Syntax error at ${where}: ${syntax.message}`);
    }
    replaceChildren(
      errorBox,
      h(
        'p',
        {},
        h('strong', {}, `Syntax error at line ${syntax.line}`),
        `, column ${syntax.column ?? '?'}`,
        syntax.field ? ` in ${syntax.field}` : '',
        `: ${sentence(syntax.message)} Nothing was saved.`,
      ),
    );
    return;
  }
  const problems = validationProblems(error);
  for (const problem of problems) {
    const slot = slotFor(slots, problem.path);
    if (slot) showAt(slot, problem.message);
  }
  listProblems(errorBox, error, problems);
}

/**
 * "Not saved:" and the error's message in `errorBox`, then every problem
 * when there are several (the message names only the first few).
 */
export function listProblems(
  errorBox: HTMLElement,
  error: unknown,
  problems: readonly FieldProblem[],
): void {
  replaceChildren(
    errorBox,
    h('p', {}, h('strong', {}, 'Not saved: '), (error as Error).message),
    problems.length > 1
      ? h(
          'ul',
          {},
          problems.map((problem) =>
            h('li', {}, problem.path ? `${problem.path}: ` : '', problem.message),
          ),
        )
      : null,
  );
}

/** The slot with the longest path that is `path` or holds it. */
function slotFor(slots: readonly ProblemSlot[], path: string | undefined): ProblemSlot | undefined {
  if (path === undefined) return undefined;
  let best: ProblemSlot | undefined;
  for (const slot of slots) {
    const holds = path === slot.path || path.startsWith(`${slot.path}.`);
    if (holds && (best === undefined || slot.path.length > best.path.length)) best = slot;
  }
  return best;
}

/** A message ending as a sentence, so the next one reads apart. */
export function sentence(message: string): string {
  return /[.!?]$/.test(message) ? message : `${message}.`;
}

function showAt(slot: ProblemSlot, message: string): void {
  slot.control?.setAttribute('aria-invalid', 'true');
  slot.message.append(h('p', {}, message));
}

/** ERR_TOOL_SYNTAX's details: where in which code field (`code`, or a completion's). */
export function syntaxProblem(
  error: unknown,
): { line: number; column?: number; message: string; field?: string } | undefined {
  if (!(error instanceof ApiError) || error.code !== 'ERR_TOOL_SYNTAX') return undefined;
  const details = error.details as
    { line?: unknown; column?: unknown; message?: unknown; field?: unknown } | undefined;
  if (typeof details?.line !== 'number') return undefined;
  return {
    line: details.line,
    column: typeof details.column === 'number' ? details.column : undefined,
    message: typeof details.message === 'string' ? details.message : error.message,
    field: typeof details.field === 'string' ? details.field : 'code',
  };
}

/** The per-field problems of an ERR_VALIDATION answer (none for other errors). */
export function validationProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError) || error.code !== 'ERR_VALIDATION') return [];
  const details = error.details as { issues?: unknown } | unknown[] | undefined;
  // The problems are `details` itself, or `details.issues`.
  const list = Array.isArray(details) ? details : (details as { issues?: unknown })?.issues;
  if (!Array.isArray(list)) return [];
  const problems: FieldProblem[] = [];
  for (const detail of list as { path?: unknown; message?: unknown }[]) {
    if (typeof detail?.message !== 'string') continue;
    // A dotted path, or zod's array of keys.
    const path = Array.isArray(detail.path) ? detail.path.join('.') : detail.path;
    if (typeof path === 'string') problems.push({ path, message: detail.message });
  }
  return problems;
}
