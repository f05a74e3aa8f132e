/**
 * The Resources tab: the server's static resources and resource templates
 * (name, URI or URI template, type, version, update time) and a form to
 * start a new one; with a resource name in the URL it opens the editor
 * instead.
 */
import { h, replaceChildren } from './dom.js';
import { listEntries } from './entry-api.js';
import { entryList } from './entry-list.js';
import { renderResourceEditor } from './resource-editor.js';
import type { ServerInfo } from './types.js';

/** Renders the resource list, or the editor of `resourceName`. */
export async function renderResourcesTab(
  panel: HTMLElement,
  server: ServerInfo,
  resourceName?: string,
): Promise<void> {
  if (resourceName !== undefined) {
    await renderResourceEditor(panel, server, resourceName);
    return;
  }
  const resources = await listEntries(server.subdomain, 'resource');
  replaceChildren(
    panel,
    entryList(server, 'resource', resources, [
      { title: 'Kind', cell: (resource) => (resource.uri === undefined ? 'Template' : 'Static') },
      {
        title: 'URI or template',
        cell: (resource) => h('code', {}, resource.uri ?? resource.uriTemplate ?? ''),
      },
      { title: 'Title', cell: (resource) => resource.title ?? '—' },
      { title: 'MIME type', cell: (resource) => resource.mimeType ?? '—' },
    ]),
  );
}
