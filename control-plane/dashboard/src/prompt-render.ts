/**
 * The render panel of a saved prompt: an input per argument (its values
 * suggested when it has a list), Render, then what `prompts/get` would
 * answer — the messages as a client would show them, or the failure — with
 * the console of prompt code and the time it ran. Renders go through the
 * same path as `prompts/get` (POST …/render).
 */
import { api } from './api.js';
import { consoleLines } from './console-lines.js';
import { messageList } from './content-view.js';
import { announce, h, replaceChildren } from './dom.js';
import { entryPath } from './entry-api.js';
import type { PromptRecord } from '../../store/index.js';
import type { PromptRenderAnswer } from './types.js';

/** Renders the panel for the saved `prompt` into `section`. */
export function renderPromptRender(
  section: HTMLElement,
  subdomain: string,
  prompt: PromptRecord,
): void {
  const output = h('div', { class: 'run-output', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Render');
  const inputs = prompt.arguments.map((argument) => {
    const id = `render-${argument.name}`;
    const values =
      argument.complete && 'values' in argument.complete ? argument.complete.values : [];
    const input = h('input', {
      id,
      required: argument.required,
      autocomplete: 'off',
      list: values.length > 0 ? `${id}-values` : undefined,
    });
    const field = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, argument.name, argument.required ? '' : ' (optional)'),
      input,
      argument.description ? h('span', { class: 'hint' }, argument.description) : null,
      values.length > 0
        ? h(
            'datalist',
            { id: `${id}-values` },
            values.map((value) => h('option', { value })),
          )
        : null,
    );
    return { name: argument.name, input, field };
  });
  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        // Left empty, an optional argument is absent (its placeholders render empty).
        const args: Record<string, string> = {};
        for (const { name, input } of inputs) if (input.value !== '') args[name] = input.value;
        run.disabled = true;
        replaceChildren(output, h('p', {}, 'Rendering…'));
        try {
          const answer = await api<PromptRenderAnswer>(
            'POST',
            `${entryPath(subdomain, 'prompt', prompt.name)}/render`,
            { arguments: args },
          );
          showAnswer(output, answer, prompt.code !== undefined);
          announce(answer.ok ? 'Rendered.' : 'Render failed.');
        } catch (error) {
          replaceChildren(
            output,
            h('p', { role: 'alert', class: 'error' }, (error as Error).message),
          );
        } finally {
          run.disabled = false;
        }
      },
    },
    inputs.length === 0 ? h('p', { class: 'hint' }, 'This prompt takes no arguments.') : null,
    inputs.map(({ field }) => field),
    run,
  );
  replaceChildren(section, h('h2', { id: 'render-heading' }, 'Render'), form, output);
  section.setAttribute('aria-labelledby', 'render-heading');
}

/** The outcome; the console only when code ran (a template logs nothing). */
function showAnswer(output: HTMLElement, answer: PromptRenderAnswer, ranCode: boolean): void {
  const took = answer.durationMs === undefined ? '' : ` in ${answer.durationMs} ms`;
  replaceChildren(
    output,
    h(
      'p',
      { class: answer.ok ? 'ok' : 'error', id: 'render-outcome' },
      answer.ok ? `Rendered${took}` : `Failed${took}`,
    ),
    answer.ok
      ? [
          answer.result.description
            ? h('p', { class: 'hint' }, 'Description: ', answer.result.description)
            : null,
          h('h3', {}, `Messages (${answer.result.messages.length})`),
          messageList(answer.result.messages),
        ]
      : h(
          'p',
          { role: 'alert', class: 'error' },
          h('strong', {}, answer.error.code),
          ': ',
          answer.error.message,
        ),
    answer.logs && (ranCode || answer.logs.length > 0)
      ? consoleLines(answer.logs, 'render-logs-heading')
      : null,
  );
}
