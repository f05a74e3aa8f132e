/**
 * How prompts and resources appear in `prompts/list`, `resources/list` and
 * `resources/templates/list`: built once per saved record (a save replaces
 * the record object), not on every list.
 */
import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { PromptRecord, ResourceRecord } from '../store/index.js';
import { contentBytes } from '../store/index.js';

const prompts = new WeakMap<PromptRecord, Prompt>();
const resources = new WeakMap<ResourceRecord, Resource | ResourceTemplate>();

export function describePrompt(prompt: PromptRecord): Prompt {
  let described = prompts.get(prompt);
  if (!described) {
    described = {
      name: prompt.name,
      ...optional('title', prompt.title),
      description: prompt.description,
      arguments: prompt.arguments.map((argument) => ({
        name: argument.name,
        ...optional('title', argument.title),
        ...optional('description', argument.description),
        required: argument.required,
      })),
    };
    prompts.set(prompt, described);
  }
  return described;
}

/** A static resource as `resources/list` shows it (with its size in bytes). */
export function describeResource(resource: ResourceRecord): Resource {
  return described(resource, () => ({
    uri: resource.uri!,
    size: contentBytes(resource),
  })) as Resource;
}

/** A template as `resources/templates/list` shows it. */
export function describeTemplate(resource: ResourceRecord): ResourceTemplate {
  return described(resource, () => ({ uriTemplate: resource.uriTemplate! })) as ResourceTemplate;
}

function described(
  resource: ResourceRecord,
  address: () => Record<string, unknown>,
): Resource | ResourceTemplate {
  let entry = resources.get(resource);
  if (!entry) {
    entry = {
      ...address(),
      name: resource.name,
      ...optional('title', resource.title),
      ...optional('description', resource.description),
      ...optional('mimeType', resource.mimeType),
      ...optional('annotations', resource.annotations),
    } as Resource | ResourceTemplate;
    resources.set(resource, entry);
  }
  return entry;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
