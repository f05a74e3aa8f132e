/**
 * The version history of a tool, prompt or resource, newest first, with a
 * rollback button on each older version (a rollback saves that version again
 * as the newest) for those who may change it.
 */
import { api } from './api.js';
import { announce, confirmDialog, formatTime, h, replaceChildren } from './dom.js';

/** What the panel shows of one saved version. */
interface VersionSummary {
  version: number;
  savedAt: string;
  description?: string;
}

/**
 * Lists the versions of the tool, prompt or resource at `base` (its admin API path, which has
 * `/versions` and `/rollback` below it) into `section`.
 */
export async function renderVersionHistory(
  section: HTMLElement,
  options: {
    base: string;
    name: string;
    onRolledBack: () => void;
    /** Whether to offer rollbacks (the principal may change the server); default true. */
    canRollBack?: boolean;
  },
): Promise<void> {
  const { base, name, onRolledBack, canRollBack = true } = options;
  const { versions } = await api<{ versions: VersionSummary[] }>('GET', `${base}/versions`);
  const error = h('p', { role: 'alert', class: 'error' });
  const newest = versions[0]?.version;
  replaceChildren(
    section,
    h('h2', { id: 'versions-heading' }, 'Version history'),
    error,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { 'aria-labelledby': 'versions-heading' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Version', 'Saved', 'Description', 'Action'].map((title) =>
              h('th', { scope: 'col' }, title),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          versions.map((version) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, version.version),
              h('td', {}, formatTime(version.savedAt)),
              h('td', {}, version.description),
              h(
                'td',
                {},
                version.version === newest
                  ? 'current'
                  : !canRollBack
                    ? ''
                    : h(
                        'button',
                        {
                          type: 'button',
                          onclick: async () => {
                            if (
                              !(await confirmDialog(
                                `Roll back ${name} to version ${version.version}? It is saved again as a new version.`,
                                `Roll back to ${version.version}`,
                              ))
                            )
                              return;
                            try {
                              await api('POST', `${base}/rollback`, { version: version.version });
                              announce(`Rolled back to version ${version.version}.`);
                              onRolledBack();
                            } catch (failure) {
                              error.textContent = (failure as Error).message;
                            }
                          },
                        },
                        `Roll back to version ${version.version}`,
                      ),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}
