/**
 * The version history of a tool, prompt or resource, newest first, with a
 * rollback button on each older version (a rollback saves that version again
 * as the newest) for those who may change it. It says how many versions the
 * service keeps and which older ones were pruned: a rollback can only reach
 * what is kept.
 */
import { api } from './api.js';
import { announce, confirmDialog, formatTime, h, replaceChildren } from './dom.js';
import type { VersionRetention } from '../../store/index.js';

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
  const { versions, retention } = await api<{
    versions: VersionSummary[];
    retention?: VersionRetention;
  }>('GET', `${base}/versions`);
  const error = h('p', { role: 'alert', class: 'error' });
  const newest = versions[0]?.version;
  replaceChildren(
    section,
    h('h2', { id: 'versions-heading' }, 'Version history'),
    retention === undefined ? '' : h('p', { class: 'hint' }, retentionNote(versions, retention)),
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
            ['Version', 'Saved', 'Description'].map((title) => h('th', { scope: 'col' }, title)),
            h('th', { scope: 'col', class: 'actions' }, 'Action'),
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
                { class: 'actions' },
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

/** What is kept, and what of this history was pruned. */
function retentionNote(versions: VersionSummary[], retention: VersionRetention): string {
  const kept = `The newest ${retention.versionsKept} versions are kept, within ${mebibytes(retention.maxBytes)} (and ${mebibytes(retention.serverMaxBytes)} for the whole server); older ones are pruned when a newer one is saved.`;
  const oldest = versions.at(-1)?.version ?? 1;
  if (oldest <= 1) return kept;
  return `${kept} ${oldest === 2 ? 'Version 1 was' : `Versions 1–${oldest - 1} were`} pruned.`;
}

function mebibytes(bytes: number): string {
  const value = bytes / (1024 * 1024);
  return `${Number.isInteger(value) ? value : value.toFixed(1)} MiB`;
}
