/**
 * The preview panel of a saved resource: what `resources/read` would answer.
 * A static resource shows its contents; a template takes a value per
 * variable of its URI template (its completion values suggested) and runs
 * its code, showing the contents, or the failure, with the code's console
 * and the time it ran (POST …/read).
 */
import { api } from './api.js';
import { consoleLines } from './console-lines.js';
import { contentsList } from './content-view.js';
import { announce, h, replaceChildren } from './dom.js';
import { entryPath } from './entry-api.js';
import { templateVariables } from './template-variables.js';
import type { ResourceRecord } from '../../store/index.js';
import type { ResourceReadAnswer } from './types.js';

/** Renders the panel for the saved `resource` into `section`. */
export function renderResourcePreview(
  section: HTMLElement,
  subdomain: string,
  resource: ResourceRecord,
): void {
  const output = h('div', { class: 'run-output', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Preview');
  const variables = templateVariables(resource.uriTemplate ?? '').map((name) => {
    const id = `preview-${name}`;
    const source = resource.complete?.[name];
    const values = source && 'values' in source ? source.values : [];
    const input = h('input', {
      id,
      required: true,
      autocomplete: 'off',
      list: values.length > 0 ? `${id}-values` : undefined,
    });
    const field = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, name),
      input,
      values.length > 0
        ? h(
            'datalist',
            { id: `${id}-values` },
            values.map((value) => h('option', { value })),
          )
        : null,
    );
    return { name, input, field };
  });
  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        const body =
          resource.uriTemplate === undefined
            ? {}
            : {
                variables: Object.fromEntries(
                  variables.map(({ name, input }) => [name, input.value]),
                ),
              };
        run.disabled = true;
        replaceChildren(output, h('p', {}, 'Reading…'));
        try {
          const answer = await api<ResourceReadAnswer>(
            'POST',
            `${entryPath(subdomain, 'resource', resource.name)}/read`,
            body,
          );
          showAnswer(output, answer);
          announce(answer.ok ? 'Read.' : 'Read failed.');
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
    resource.uriTemplate === undefined
      ? h(
          'p',
          { class: 'hint' },
          'Shows the contents clients read at ',
          h('code', {}, resource.uri ?? ''),
          '.',
        )
      : h(
          'p',
          { class: 'hint' },
          'A value for each variable of ',
          h('code', {}, resource.uriTemplate),
          '; the code runs as for a client reading that URI.',
        ),
    variables.map(({ field }) => field),
    run,
  );
  replaceChildren(section, h('h2', { id: 'preview-heading' }, 'Preview'), form, output);
  section.setAttribute('aria-labelledby', 'preview-heading');
}

function showAnswer(output: HTMLElement, answer: ResourceReadAnswer): void {
  const took = answer.durationMs === undefined ? '' : ` in ${answer.durationMs} ms`;
  replaceChildren(
    output,
    h(
      'p',
      { class: answer.ok ? 'ok' : 'error', id: 'preview-outcome' },
      answer.ok ? `Read${took}` : `Failed${took}`,
    ),
    answer.ok
      ? contentsList(answer.result.contents)
      : h(
          'p',
          { role: 'alert', class: 'error' },
          h('strong', {}, answer.error.code),
          ': ',
          answer.error.message,
        ),
    answer.logs ? consoleLines(answer.logs, 'preview-logs-heading') : null,
  );
}
