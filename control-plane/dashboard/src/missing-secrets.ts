/**
 * Secrets a tool lists that its server holds no value for: the tool would
 * see `env.NAME` as undefined. Said on the tools list and under the editor's
 * "Secrets used" field, with the way to the Secrets tab. The server's
 * secrets come by name from the API (never their values).
 */
import { api, segment } from './api.js';
import { h } from './dom.js';
import type { SecretSummary } from '../../store/index.js';

/** The names of the server's secrets; undefined when they could not be read (then nothing is said). */
export async function fetchSecretNames(subdomain: string): Promise<Set<string> | undefined> {
  try {
    const { secrets } = await api<{ secrets: SecretSummary[] }>(
      'GET',
      `/api/servers/${segment(subdomain)}/secrets`,
    );
    return new Set(secrets.map((secret) => secret.name));
  } catch {
    return undefined;
  }
}

/** The names in `listed` the server has no value for, each once. */
export function missingSecrets(
  listed: readonly string[],
  known: Set<string> | undefined,
): string[] {
  if (known === undefined) return [];
  return [...new Set(listed)].filter((name) => !known.has(name));
}

/** The sentence that says so, with a link to the Secrets tab; null when none is missing. */
export function missingSecretsNote(
  subdomain: string,
  missing: readonly string[],
): HTMLElement | null {
  if (missing.length === 0) return null;
  const one = missing.length === 1;
  const names = missing.map((name, index) => [index === 0 ? '' : ', ', h('code', {}, name)]);
  return h(
    'span',
    { class: 'missing-secrets' },
    one ? 'No value set for secret ' : 'No value set for secrets ',
    names.flat(),
    `: the tool sees ${one ? 'it' : 'them'} as undefined. `,
    h(
      'a',
      { href: `#/servers/${segment(subdomain)}/secrets` },
      `Set ${one ? 'it' : 'them'} on the Secrets tab`,
    ),
    '.',
  );
}
