/**
 * What an admin's change of a server's resources touched, as subscriptions
 * see it: the names of resources saved, rolled back or deleted, and the URIs
 * of static resources before and after. A subscription is owed an update when
 * the resource that served its URI at subscription changed, or when its URI
 * is a changed static resource's. No template is matched here: a change would
 * otherwise cost a RE2 run per subscribed URI of every session.
 */
import type { ResourceRecord } from '../store/index.js';

export interface ResourceChanges {
  /** Names of the resources that changed or went away. */
  names: ReadonlySet<string>;
  /** URIs of static resources that changed, appeared or went away. */
  uris: ReadonlySet<string>;
}

/** Resources by name, as the configuration held them. */
type ResourcesByName = ReadonlyMap<string, ResourceRecord>;

/** The changes between two states of a server's resources; undefined when none. */
export function findResourceChanges(
  before: ResourcesByName,
  after: ResourcesByName,
): ResourceChanges | undefined {
  const names = new Set<string>();
  const uris = new Set<string>();
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const old = before.get(name);
    const now = after.get(name);
    if (old !== undefined && old.version === now?.version) continue;
    names.add(name);
    for (const record of [old, now]) if (record?.uri !== undefined) uris.add(record.uri);
  }
  return names.size === 0 ? undefined : { names, uris };
}
