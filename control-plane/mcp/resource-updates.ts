/**
 * Which subscribed URIs an admin's change of a server's resources touched:
 * a static resource's URI (before and after) when the resource was saved,
 * rolled back or deleted; any URI a changed template matched (before or
 * after). The answer is a predicate each session applies to its own
 * subscriptions.
 */
import { templateOf } from '../invocation/index.js';
import type { ResourceRecord } from '../store/index.js';

/** Resources by name, as the configuration held them. */
type ResourcesByName = ReadonlyMap<string, ResourceRecord>;

/** Accepts the URIs whose contents may differ between `before` and `after`; undefined when none. */
export function findAffectedUris(
  before: ResourcesByName,
  after: ResourcesByName,
): ((uri: string) => boolean) | undefined {
  const uris = new Set<string>();
  const templates: ResourceRecord[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const old = before.get(name);
    const now = after.get(name);
    if (old?.version === now?.version && old !== undefined) continue;
    for (const record of [old, now]) {
      if (record?.uri !== undefined) uris.add(record.uri);
      if (record?.uriTemplate !== undefined) templates.push(record);
    }
  }
  if (uris.size === 0 && templates.length === 0) return undefined;
  return (uri) =>
    uris.has(uri) ||
    templates.some(
      (template) =>
        templateOf(template as ResourceRecord & { uriTemplate: string }).match(uri) !== undefined,
    );
}
