/**
 * Which resource of a server a URI names: a static resource with that URI,
 * else the first template (by name) that matches it. Templates are parsed
 * once per saved record; matching one is a few `indexOf`s (uri-template.ts),
 * and a server holds at most MAX_TEMPLATES_PER_SERVER of them.
 */
import type { ResourceRecord, UriTemplate } from '../store/index.js';
import { parseUriTemplate } from '../store/index.js';

export interface ResourceMatch {
  resource: ResourceRecord;
  /** The template's variables, for a template; absent for a static resource. */
  variables?: Record<string, string>;
}

const parsed = new WeakMap<ResourceRecord, UriTemplate>();

/** The parsed template of a template resource (cached per record). */
export function templateOf(resource: ResourceRecord & { uriTemplate: string }): UriTemplate {
  let template = parsed.get(resource);
  if (!template) {
    template = parseUriTemplate(resource.uriTemplate);
    parsed.set(resource, template);
  }
  return template;
}

/**
 * The resource `uri` names among `resources` (a server's, ordered by name);
 * with `only`, just that resource may answer.
 */
export function findResource(
  resources: readonly ResourceRecord[],
  uri: string,
  only?: string,
): ResourceMatch | undefined {
  const candidates = only === undefined ? resources : resources.filter((r) => r.name === only);
  for (const resource of candidates) {
    if (resource.uri === uri) return { resource };
  }
  for (const resource of candidates) {
    if (!isTemplate(resource)) continue;
    const variables = templateOf(resource).match(uri);
    if (variables) return { resource, variables };
  }
  return undefined;
}

export function isTemplate(
  resource: ResourceRecord,
): resource is ResourceRecord & { uriTemplate: string; code: string } {
  return resource.uriTemplate !== undefined;
}
