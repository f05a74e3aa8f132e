/**
 * What the try-it panels share (a tool's test run, a prompt's render, a
 * resource's preview): a form whose button POSTs to the admin API — the
 * same path an MCP client's request takes — disabled while the answer is
 * awaited; the answer as a headline, what came back or the failure, and
 * the console of the code that ran; and the input for one value with its
 * known values suggested.
 */
import { api } from './api.js';
import { consoleLines } from './console-lines.js';
import { announce, h, replaceChildren, type Child } from './dom.js';
import type { LogEntry, OutcomeError } from '../../sandbox/index.js';

/** One panel: its heading, its controls and where their values go. */
export interface TryFormOptions<A> {
  title: string;
  /** Id of the heading, which labels the panel. */
  headingId: string;
  /** The button's text ("Run"), and what shows while the answer is awaited ("Running…"). */
  button: string;
  busy: string;
  /** The controls before the button. */
  fields: (Child | Child[])[];
  /** The admin API path the form POSTs to. */
  path: string;
  /** The request body as typed; throws an Error whose message is shown, and nothing is sent. */
  body(): unknown;
  /** Shows the answer in `output`. */
  show(output: HTMLElement, answer: A): void;
  /** What a screen reader is told when the answer has come. */
  announcement(answer: A): string;
}

/** Renders the panel into `section`. */
export function renderTryForm<A>(section: HTMLElement, options: TryFormOptions<A>): void {
  const output = h('div', { class: 'run-output', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'primary' }, options.button);
  const showFailure = (error: unknown) =>
    replaceChildren(output, h('p', { role: 'alert', class: 'error' }, (error as Error).message));
  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        let body: unknown;
        try {
          body = options.body();
        } catch (error) {
          showFailure(error);
          return;
        }
        run.disabled = true;
        replaceChildren(output, h('p', {}, options.busy));
        try {
          const answer = await api<A>('POST', options.path, body);
          options.show(output, answer);
          announce(options.announcement(answer));
        } catch (error) {
          showFailure(error);
        } finally {
          run.disabled = false;
        }
      },
    },
    ...options.fields,
    run,
  );
  replaceChildren(section, h('h2', { id: options.headingId }, options.title), form, output);
  section.setAttribute('aria-labelledby', options.headingId);
}

/** An answer of the admin API to a try: ok, or the failure. */
type TryAnswer = { ok: true } | { ok: false; error: OutcomeError };

/** How one answer shows. */
export interface AnswerView<A extends TryAnswer> {
  /** Id of the headline, which says how it went ("Succeeded in 12 ms"). */
  outcomeId: string;
  headline: string;
  /** What came back, for an ok answer. */
  success(answer: Extract<A, { ok: true }>): Child | Child[];
  /** The console lines to show; undefined for no console. */
  logs: readonly LogEntry[] | undefined;
  logsHeadingId: string;
}

/** Shows `answer` in `output`: the headline, what came back or the failure, the console. */
export function showAnswer<A extends TryAnswer>(
  output: HTMLElement,
  answer: A,
  view: AnswerView<A>,
): void {
  replaceChildren(
    output,
    h('p', { class: answer.ok ? 'ok' : 'error', id: view.outcomeId }, view.headline),
    answer.ok
      ? view.success(answer as Extract<A, { ok: true }>)
      : h(
          'p',
          { role: 'alert', class: 'error' },
          h('strong', {}, answer.error.code),
          ': ',
          answer.error.message,
          answer.error.line === undefined
            ? ''
            : ` (at line ${answer.error.line}, column ${answer.error.column ?? '?'})`,
        ),
    view.logs ? consoleLines(view.logs, view.logsHeadingId) : null,
  );
}

/** " in 12 ms", or nothing when no code ran. */
export function took(durationMs: number | undefined): string {
  return durationMs === undefined ? '' : ` in ${durationMs} ms`;
}

/** A text input for one value, its `values` offered as suggestions (any other may be typed). */
export function valueField(
  id: string,
  options: { label: Child[]; required: boolean; hint?: string; values: readonly string[] },
): { input: HTMLInputElement; field: HTMLElement } {
  const { values } = options;
  const input = h('input', {
    id,
    required: options.required,
    autocomplete: 'off',
    list: values.length > 0 ? `${id}-values` : undefined,
  });
  const field = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, options.label),
    input,
    options.hint ? h('span', { class: 'hint' }, options.hint) : null,
    values.length > 0
      ? h(
          'datalist',
          { id: `${id}-values` },
          values.map((value) => h('option', { value })),
        )
      : null,
  );
  return { input, field };
}
