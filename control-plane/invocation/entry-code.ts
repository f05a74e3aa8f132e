/**
 * The code of a prompt, a resource template or a completion, in the shape the
 * invoker runs: an InvocableTool marked with its `kind`, taking the owner's
 * name, version, secrets and limits, and declaring its `params` as string
 * parameters so they are checked like a tool's before a container is touched.
 * Built once per saved record (a save replaces the record object).
 */
import type { PromptRecord, ResourceRecord, ToolParameter } from '../store/index.js';
import { templateOf } from './resource-lookup.js';
import type { InvocableTool } from './tool-invoker.js';

const promptCodes = new WeakMap<PromptRecord, InvocableTool>();
const resourceCodes = new WeakMap<ResourceRecord, InvocableTool>();
const completionCodes = new WeakMap<PromptRecord | ResourceRecord, Map<string, InvocableTool>>();

/** A prompt's code; `params` holds its arguments. */
export function promptCode(prompt: PromptRecord & { code: string }): InvocableTool {
  let code = promptCodes.get(prompt);
  if (!code) {
    const parameters = prompt.arguments.map((argument): ToolParameter => ({
      name: argument.name,
      type: 'string',
      required: argument.required,
    }));
    code = entryCode(prompt, 'prompt', prompt.code, parameters);
    promptCodes.set(prompt, code);
  }
  return code;
}

/** A resource template's code; `params` holds the template's variables. */
export function resourceCode(
  resource: ResourceRecord & { uriTemplate: string; code: string },
): InvocableTool {
  let code = resourceCodes.get(resource);
  if (!code) {
    const parameters = templateOf(resource).variables.map((name): ToolParameter => ({
      name,
      type: 'string',
      required: true,
    }));
    code = entryCode(resource, 'resource', resource.code, parameters);
    resourceCodes.set(resource, code);
  }
  return code;
}

/** What completion code receives as `params`. */
const COMPLETION_PARAMETERS: ToolParameter[] = [
  { name: 'argument', type: 'string', required: true },
  { name: 'value', type: 'string', required: true },
  { name: 'arguments', type: 'object', required: true },
];

/** The completion code of one argument (or template variable) of `owner`. */
export function completionCode(
  owner: PromptRecord | ResourceRecord,
  argument: string,
  source: string,
): InvocableTool {
  let codes = completionCodes.get(owner);
  if (!codes) completionCodes.set(owner, (codes = new Map()));
  let code = codes.get(argument);
  if (!code) {
    code = entryCode(owner, 'completion', source, COMPLETION_PARAMETERS);
    codes.set(argument, code);
  }
  return code;
}

function entryCode(
  owner: PromptRecord | ResourceRecord,
  kind: 'prompt' | 'resource' | 'completion',
  code: string,
  parameters: ToolParameter[],
): InvocableTool {
  return {
    kind,
    subdomain: owner.subdomain,
    name: owner.name,
    version: owner.version,
    description: owner.description ?? '',
    code,
    parameters,
    secrets: owner.secrets,
    limits: owner.limits,
    strict: false,
  };
}
