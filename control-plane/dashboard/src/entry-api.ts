/**
 * The admin API of a server's tools, prompts and resources ("entries"): their
 * paths, and reading one that may not exist yet (a new name opens an empty
 * editor).
 */
import { api, ApiError, segment } from './api.js';
import type { EntryKind, EntryRecord } from '../../store/index.js';

const PLURAL: Record<EntryKind, string> = {
  tool: 'tools',
  prompt: 'prompts',
  resource: 'resources',
};

/** `/api/servers/{sub}/tools` (or `/prompts`, `/resources`), with `/{name}` when named. */
export function entryPath(subdomain: string, kind: EntryKind, name?: string): string {
  const base = `/api/servers/${segment(subdomain)}/${PLURAL[kind]}`;
  return name === undefined ? base : `${base}/${segment(name)}`;
}

/** The dashboard route of an entry's editor, or of the kind's list. */
export function entryRoute(subdomain: string, kind: EntryKind, name?: string): string {
  const base = `#/servers/${segment(subdomain)}/${PLURAL[kind]}`;
  return name === undefined ? base : `${base}/${segment(name)}`;
}

/** The server's entries of `kind`, ordered by name. */
export async function listEntries<K extends EntryKind>(
  subdomain: string,
  kind: K,
): Promise<EntryRecord<K>[]> {
  const answer = await api<Record<string, EntryRecord<K>[]>>('GET', entryPath(subdomain, kind));
  return answer[PLURAL[kind]] ?? [];
}

/** The saved entry, or undefined when it does not exist yet. */
export async function fetchEntry<K extends EntryKind>(
  subdomain: string,
  kind: K,
  name: string,
): Promise<EntryRecord<K> | undefined> {
  try {
    return await api<EntryRecord<K>>('GET', entryPath(subdomain, kind, name));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.message.includes(kind))
      return undefined;
    throw error;
  }
}
