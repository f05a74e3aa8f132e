/**
 * Which resource of a server a URI names: a static resource with that URI,
 * else the first template (by name) that matches it. Templates are parsed
 * once per saved record; a template whose literal head (the text before its
 * first `{`) the URI does not start with is skipped before RE2 runs, so a
 * read costs a string comparison per unrelated template.
 */
import type { ResourceRecord, UriTemplate } from '../store/index.js';
import { parseUriTemplate } from '../store/index.js';

export interface ResourceMatch {
  resource: ResourceRecord;
  /** The template's variables, for a template; absent for a static resource. */
  variables?: Record<string, string>;
}

interface ParsedTemplate {
  template: UriTemplate;
  head: string;
}

const parsed = new WeakMap<ResourceRecord, ParsedTemplate>();

/** The parsed template of a template resource (cached per record). */
export function templateOf(resource: ResourceRecord & { uriTemplate: string }): UriTemplate {
  return parsedTemplate(resource).template;
}

function parsedTemplate(resource: ResourceRecord & { uriTemplate: string }): ParsedTemplate {
  let entry = parsed.get(resource);
  if (!entry) {
    const { uriTemplate } = resource;
    const brace = uriTemplate.indexOf('{');
    entry = {
      template: parseUriTemplate(uriTemplate),
      head: brace === -1 ? uriTemplate : uriTemplate.slice(0, brace),
    };
    parsed.set(resource, entry);
  }
  return entry;
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
    const { template, head } = parsedTemplate(resource);
    if (!uri.startsWith(head)) continue;
    const variables = template.match(uri);
    if (variables) return { resource, variables };
  }
  return undefined;
}

export function isTemplate(
  resource: ResourceRecord,
): resource is ResourceRecord & { uriTemplate: string; code: string } {
  return resource.uriTemplate !== undefined;
}
