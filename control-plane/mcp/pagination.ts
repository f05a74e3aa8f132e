/**
 * Cursor pagination of `prompts/list`, `resources/list` and
 * `resources/templates/list`: items come ordered by name, and a cursor is
 * the last name a page held (base64url, opaque to clients). A page goes on
 * after that name, so saves and deletions between pages skip or repeat
 * nothing that stayed.
 */
import { McphostError } from '../errors.js';

/** Items per page. */
export const PAGE_SIZE = 100;

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export function paginate<T extends { name: string }>(
  items: readonly T[],
  cursor: string | undefined,
  pageSize = PAGE_SIZE,
): Page<T> {
  const after = cursor === undefined ? undefined : nameOf(cursor);
  const start = after === undefined ? 0 : items.findIndex((item) => item.name > after);
  const rest = start === -1 ? [] : items.slice(start);
  const page = rest.slice(0, pageSize);
  return rest.length > pageSize
    ? { items: page, nextCursor: Buffer.from(page.at(-1)!.name).toString('base64url') }
    : { items: page };
}

function nameOf(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (
    cursor.length > 512 ||
    name.length === 0 ||
    Buffer.from(name).toString('base64url') !== cursor
  ) {
    throw new McphostError('ERR_VALIDATION', 'Invalid cursor: pass back a nextCursor as it came');
  }
  return name;
}
