/**
 * The render panel of a saved prompt: an input per argument (its values
 * suggested when it has a list), Render, then what `prompts/get` would
 * answer — the messages as a client would show them, or the failure — with
 * the console of prompt code and the time it ran. Renders go through the
 * same path as `prompts/get` (POST …/render).
 */
import { messageList } from './content-view.js';
import { h } from './dom.js';
import { entryPath } from './entry-api.js';
import { renderTryForm, showAnswer, took, valueField } from './try-panel.js';
import type { PromptRecord } from '../../store/index.js';
import type { PromptRenderAnswer } from './types.js';

/** Renders the panel for the saved `prompt` into `section`. */
export function renderPromptRender(
  section: HTMLElement,
  subdomain: string,
  prompt: PromptRecord,
): void {
  const inputs = prompt.arguments.map((argument) => {
    const { input, field } = valueField(`render-${argument.name}`, {
      label: [argument.name, argument.required ? '' : ' (optional)'],
      required: argument.required,
      hint: argument.description,
      values: argument.complete && 'values' in argument.complete ? argument.complete.values : [],
    });
    return { name: argument.name, input, field };
  });
  renderTryForm<PromptRenderAnswer>(section, {
    title: 'Render',
    headingId: 'render-heading',
    button: 'Render',
    busy: 'Rendering…',
    fields: [
      inputs.length === 0 ? h('p', { class: 'hint' }, 'This prompt takes no arguments.') : null,
      inputs.map(({ field }) => field),
    ],
    path: `${entryPath(subdomain, 'prompt', prompt.name)}/render`,
    body: () => {
      // Left empty, an optional argument is absent (its placeholders render empty).
      const args: Record<string, string> = {};
      for (const { name, input } of inputs) if (input.value !== '') args[name] = input.value;
      return { arguments: args };
    },
    show: (output, answer) =>
      showAnswer(output, answer, {
        outcomeId: 'render-outcome',
        headline: `${answer.ok ? 'Rendered' : 'Failed'}${took(answer.durationMs)}`,
        success: ({ result }) => [
          result.description
            ? h('p', { class: 'hint' }, 'Description: ', result.description)
            : null,
          h('h3', {}, `Messages (${result.messages.length})`),
          messageList(result.messages),
        ],
        // The console only when code ran (a template logs nothing).
        logs:
          answer.logs && (prompt.code !== undefined || answer.logs.length > 0)
            ? answer.logs
            : undefined,
        logsHeadingId: 'render-logs-heading',
      }),
    announcement: (answer) => (answer.ok ? 'Rendered.' : 'Render failed.'),
  });
}
