/**
 * Cursor pagination of `tools/list`, `prompts/list`, `resources/list` and
 * `resources/templates/list`: items come ordered by name in code-unit order
 * (the configuration cache's order, the same on every replica), and a page
 * holds at most PAGE_MAX_ITEMS items and PAGE_MAX_BYTES of them as JSON, or
 * one item larger than that (a tool's listing is bounded at save: 16 KiB of
 * description, 64 KiB per schema). A large catalogue costs a client more
 * requests, never the control plane one huge answer: a page's serialisation
 * is the longest the event loop serves one lister before anyone else. The cursor is the last name a page held (base64url, opaque to
 * clients); a page goes on after that name, so saves and deletions between
 * pages skip or repeat nothing that stayed, and a cursor one replica gave
 * means the same on another.
 */
import { McphostError } from '../errors.js';

/** Most items one page holds. */
export const PAGE_MAX_ITEMS = 100;

/**
 * Most bytes one page's items take as JSON (a page holds at least one item);
 * 256 KiB: a hundred tools of ordinary size fit in one page, and what one
 * request makes the event loop serialise stays small.
 */
export const PAGE_MAX_BYTES = 256 * 1024;

/** How much one page may hold. */
export interface PageBounds {
  /** Most items. */
  maxItems: number;
  /** Most bytes of the items as JSON (a page holds at least one item). */
  maxBytes: number;
}

/** The bounds of every list page. */
export const PAGE_BOUNDS: Readonly<PageBounds> = Object.freeze({
  maxItems: PAGE_MAX_ITEMS,
  maxBytes: PAGE_MAX_BYTES,
});

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

// Sizes are measured once per listing object: the describers build one per saved record.
const listedBytes = new WeakMap<object, number>();

/** UTF-8 bytes of `listed` as JSON, measured once per object. */
function bytesOf(listed: object): number {
  let bytes = listedBytes.get(listed);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(listed));
    listedBytes.set(listed, bytes);
  }
  return bytes;
}

/** The page after `cursor` of `items` (ordered by name, code units), each as `describe` lists it. */
export function paginate<T extends { readonly name: string }, Listed extends object>(
  items: readonly T[],
  cursor: string | undefined,
  describe: (item: T) => Listed,
  bounds: Readonly<PageBounds> = PAGE_BOUNDS,
): Page<Listed> {
  let index = cursor === undefined ? 0 : firstAfter(items, nameOf(cursor));
  const page: Listed[] = [];
  let bytes = 0;
  for (; index < items.length && page.length < bounds.maxItems; index++) {
    const listed = describe(items[index]!);
    const size = bytesOf(listed);
    if (page.length > 0 && bytes + size > bounds.maxBytes) break;
    page.push(listed);
    bytes += size;
  }
  return index < items.length
    ? { items: page, nextCursor: Buffer.from(items[index - 1]!.name).toString('base64url') }
    : { items: page };
}

/** Index of the first item whose name sorts after `name` (binary search). */
function firstAfter(items: readonly { readonly name: string }[], name: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (items[middle]!.name <= name) low = middle + 1;
    else high = middle;
  }
  return low;
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
