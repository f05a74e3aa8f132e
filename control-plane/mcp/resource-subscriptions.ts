/**
 * The resource URIs one session subscribed to (`resources/subscribe`), and
 * the updates it is owed when an admin changes what they name. Bounded: a
 * session is a shared resource, and every configuration change walks its
 * subscriptions.
 */
import { McphostError } from '../errors.js';

/** The most URIs one session may subscribe to. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1000;

export class ResourceSubscriptions {
  readonly #uris = new Set<string>();

  get size(): number {
    return this.#uris.size;
  }

  add(uri: string): void {
    if (!this.#uris.has(uri) && this.#uris.size >= MAX_SUBSCRIPTIONS_PER_SESSION) {
      throw new McphostError(
        'ERR_VALIDATION',
        `a session subscribes to at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resources; unsubscribe from one first`,
      );
    }
    this.#uris.add(uri);
  }

  delete(uri: string): void {
    this.#uris.delete(uri);
  }

  /** The subscribed URIs `changed` says are affected. */
  affected(changed: (uri: string) => boolean): string[] {
    return [...this.#uris].filter(changed);
  }
}
