/**
 * What code printed while it ran (tool test runs, prompt renders, resource
 * previews, the invocation log's entries): a "Console" heading and the captured lines, each with its level.
 */
import { h } from './dom.js';
import type { LogEntry } from '../../sandbox/index.js';

/** The heading (id `headingId`) and the lines, or a note that nothing was logged. */
export function consoleLines(
  // The invocation log keeps a line's level as plain text.
  logs: readonly { level: string; text: LogEntry['text'] }[],
  headingId: string,
): HTMLElement[] {
  return [
    h('h3', { id: headingId }, 'Console'),
    logs.length === 0
      ? h('p', { class: 'hint' }, 'Nothing was logged.')
      : h(
          'ol',
          { class: 'logs', 'aria-labelledby': headingId },
          logs.map((line) =>
            h(
              'li',
              { class: `log-${line.level}` },
              h('span', { class: 'level' }, line.level),
              ' ',
              line.text,
            ),
          ),
        ),
  ];
}
