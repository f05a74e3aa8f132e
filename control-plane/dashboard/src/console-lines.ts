/**
 * What code printed while it ran (tool test runs, prompt renders, resource
 * previews): a "Console" heading and the captured lines, each with its level.
 */
import { h } from './dom.js';
import type { LogEntry } from '../../sandbox/index.js';

/** The heading (id `headingId`) and the lines, or a note that nothing was logged. */
export function consoleLines(logs: readonly LogEntry[], headingId: string): HTMLElement[] {
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
