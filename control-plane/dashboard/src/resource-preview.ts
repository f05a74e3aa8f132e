/**
 * The preview panel of a saved resource: what `resources/read` would answer.
 * A static resource shows its contents; a template takes a value per
 * variable of its URI template (its completion values suggested) and runs
 * its code, showing the contents, or the failure, with the code's console
 * and the time it ran (POST …/read).
 */
import { contentsList } from './content-view.js';
import { h } from './dom.js';
import { entryPath } from './entry-api.js';
import { templateVariables } from './template-variables.js';
import { renderTryForm, showAnswer, took, valueField } from './try-panel.js';
import type { ResourceRecord } from '../../store/index.js';
import type { ResourceReadAnswer } from './types.js';

/** Renders the panel for the saved `resource` into `section`. */
export function renderResourcePreview(
  section: HTMLElement,
  subdomain: string,
  resource: ResourceRecord,
): void {
  const variables = templateVariables(resource.uriTemplate ?? '').map((name) => {
    const source = resource.complete?.[name];
    const { input, field } = valueField(`preview-${name}`, {
      label: [name],
      required: true,
      values: source && 'values' in source ? source.values : [],
    });
    return { name, input, field };
  });
  renderTryForm<ResourceReadAnswer>(section, {
    title: 'Preview',
    headingId: 'preview-heading',
    button: 'Preview',
    busy: 'Reading…',
    fields: [
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
    ],
    path: `${entryPath(subdomain, 'resource', resource.name)}/read`,
    body: () =>
      resource.uriTemplate === undefined
        ? {}
        : {
            variables: Object.fromEntries(variables.map(({ name, input }) => [name, input.value])),
          },
    show: (output, answer) =>
      showAnswer(output, answer, {
        outcomeId: 'preview-outcome',
        headline: `${answer.ok ? 'Read' : 'Failed'}${took(answer.durationMs)}`,
        success: ({ result }) => contentsList(result.contents),
        logs: answer.logs,
        logsHeadingId: 'preview-logs-heading',
      }),
    announcement: (answer) => (answer.ok ? 'Read.' : 'Read failed.'),
  });
}
