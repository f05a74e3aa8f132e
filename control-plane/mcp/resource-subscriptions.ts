/**
 * The resource URIs one session subscribed to (`resources/subscribe`), each
 * with the resource that served it then, and the updates it is owed when an
 * admin changes one. Bounded: a session is a shared resource, and every
 * configuration change of its server walks its subscriptions.
 */
import { McphostError } from '../errors.js';
import type { ResourceChanges } from './resource-updates.js';

/** The most URIs one session may subscribe to, and their total length. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 100;
export const MAX_SUBSCRIBED_CHARACTERS = 64 * 1024;

export class ResourceSubscriptions {
  /** URI → name of the resource (static or template) that served it when subscribed. */
  readonly #uris = new Map<string, string>();
  #characters = 0;

  get size(): number {
    return this.#uris.size;
  }

  add(uri: string, resource: string): void {
    if (this.#uris.has(uri)) {
      this.#uris.set(uri, resource);
      return;
    }
    if (
      this.#uris.size >= MAX_SUBSCRIPTIONS_PER_SESSION ||
      this.#characters + uri.length > MAX_SUBSCRIBED_CHARACTERS
    ) {
      throw new McphostError(
        'ERR_VALIDATION',
        `a session subscribes to at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resources of ${MAX_SUBSCRIBED_CHARACTERS} characters of URIs in all; unsubscribe from one first`,
      );
    }
    this.#uris.set(uri, resource);
    this.#characters += uri.length;
  }

  delete(uri: string): void {
    if (this.#uris.delete(uri)) this.#characters -= uri.length;
  }

  /** Every subscription as [URI, resource name]. */
  entries(): [string, string][] {
    return [...this.#uris];
  }

  /** Takes the subscriptions another replica recorded (within the same bounds, which it checked). */
  replace(entries: readonly [string, string][]): void {
    this.#uris.clear();
    this.#characters = 0;
    for (const [uri, resource] of entries.slice(0, MAX_SUBSCRIPTIONS_PER_SESSION)) {
      this.#uris.set(uri, resource);
      this.#characters += uri.length;
    }
  }

  /** The subscribed URIs a change touched. */
  affected(changes: ResourceChanges): string[] {
    const touched: string[] = [];
    for (const [uri, resource] of this.#uris) {
      if (changes.names.has(resource) || changes.uris.has(uri)) touched.push(uri);
    }
    return touched;
  }
}
