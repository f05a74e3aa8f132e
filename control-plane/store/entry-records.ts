/**
 * Tools, prompts and resources are a server's *entries*: definitions kept by
 * name with a version history. One table pair holds every kind (definition
 * as JSON text, validated by the kind's schema on every save), so saving,
 * versions, rollback and the bounds on them are one mechanism
 * (entry-queries.ts); what differs by kind is in ENTRY_SPECS.
 */
import type { z } from 'zod';
import {
  toolDefinitionSchema,
  toolNameSchema,
  type ToolDefinition,
  type ToolDefinitionInput,
} from './records.js';
import {
  promptDefinitionSchema,
  promptNameSchema,
  type PromptDefinition,
  type PromptDefinitionInput,
} from './prompt-records.js';
import {
  resourceDefinitionSchema,
  resourceNameSchema,
  type ResourceDefinition,
  type ResourceDefinitionInput,
} from './resource-records.js';

export type EntryKind = 'tool' | 'prompt' | 'resource';
export const ENTRY_KINDS: readonly EntryKind[] = ['tool', 'prompt', 'resource'];

/** The most entries of one kind (tools, prompts, resources) a server may hold. */
export const MAX_ENTRIES_PER_KIND = 1000;
/**
 * The most resource templates a server may hold (of its resources): a read of
 * a URI no static resource has tries them in turn, on the main thread.
 */
export const MAX_TEMPLATES_PER_SERVER = 100;

/** A kind's definition as saved (defaults filled in) and as accepted. */
export interface EntryDefinitions {
  tool: ToolDefinition;
  prompt: PromptDefinition;
  resource: ResourceDefinition;
}
export interface EntryInputs {
  tool: ToolDefinitionInput;
  prompt: PromptDefinitionInput;
  resource: ResourceDefinitionInput;
}

/** How a kind is checked and named. */
export interface EntrySpec<K extends EntryKind> {
  kind: K;
  /** The word in messages. */
  noun: string;
  /** The admin API's path segment, and the kind of change the change feed announces. */
  plural: 'tools' | 'prompts' | 'resources';
  name: z.ZodType<string>;
  definition: z.ZodType<EntryDefinitions[K], EntryInputs[K]>;
  /**
   * The code a definition holds, each compiled before a save. `field` names it
   * where a definition may hold several (`arguments.1.complete.code`); a
   * tool's one piece of code goes unnamed.
   */
  codeFields(definition: EntryDefinitions[K]): CodeField[];
}

/** One piece of code in a definition. */
export interface CodeField {
  field?: string;
  code: string;
}

export const ENTRY_SPECS: { [K in EntryKind]: EntrySpec<K> } = {
  tool: {
    kind: 'tool',
    noun: 'tool',
    plural: 'tools',
    name: toolNameSchema,
    definition: toolDefinitionSchema,
    codeFields: (tool) => [{ code: tool.code }],
  },
  prompt: {
    kind: 'prompt',
    noun: 'prompt',
    plural: 'prompts',
    name: promptNameSchema,
    definition: promptDefinitionSchema,
    codeFields: (prompt) => [
      ...(prompt.code === undefined ? [] : [{ field: 'code', code: prompt.code }]),
      ...prompt.arguments.flatMap((argument, index) =>
        argument.complete !== undefined && 'code' in argument.complete
          ? [{ field: `arguments.${index}.complete.code`, code: argument.complete.code }]
          : [],
      ),
    ],
  },
  resource: {
    kind: 'resource',
    noun: 'resource',
    plural: 'resources',
    name: resourceNameSchema,
    definition: resourceDefinitionSchema,
    codeFields: (resource) => [
      ...(resource.code === undefined ? [] : [{ field: 'code', code: resource.code }]),
      ...Object.entries(resource.complete ?? {}).flatMap(([variable, source]) =>
        'code' in source ? [{ field: `complete.${variable}.code`, code: source.code }] : [],
      ),
    ],
  },
};

/** A saved entry: its current definition and version. */
export type EntryRecord<K extends EntryKind> = EntryDefinitions[K] & {
  readonly subdomain: string;
  readonly name: string;
  /** Starts at 1 and grows on every save (rollbacks included). */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
};

/** One saved version of an entry, as it was saved. */
export type EntryVersionRecord<K extends EntryKind> = EntryDefinitions[K] & {
  readonly subdomain: string;
  readonly name: string;
  readonly version: number;
  readonly savedAt: string;
};

export type PromptRecord = EntryRecord<'prompt'>;
export type ResourceRecord = EntryRecord<'resource'>;
