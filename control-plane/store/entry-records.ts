/**
 * Prompts and resources are a server's *entries*: definitions kept by name
 * with a version history, saved and rolled back exactly as tools are. One
 * table pair holds both kinds (definition as JSON text, validated by the
 * kind's schema on every save), so versions and rollback are one mechanism.
 */
import type { z } from 'zod';
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

export type EntryKind = 'prompt' | 'resource';
export const ENTRY_KINDS: readonly EntryKind[] = ['prompt', 'resource'];

/** The most entries of one kind a server may hold. */
export const MAX_ENTRIES_PER_KIND = 1000;
/**
 * The most resource templates a server may hold (of its resources): a read of
 * a URI no static resource has tries them in turn, on the main thread.
 */
export const MAX_TEMPLATES_PER_SERVER = 100;

/** A kind's definition as saved (defaults filled in) and as accepted. */
export interface EntryDefinitions {
  prompt: PromptDefinition;
  resource: ResourceDefinition;
}
export interface EntryInputs {
  prompt: PromptDefinitionInput;
  resource: ResourceDefinitionInput;
}

/** How a kind is checked and named. */
export interface EntrySpec<K extends EntryKind> {
  kind: K;
  /** The word in messages and in the admin API's paths (`prompts`). */
  noun: string;
  plural: string;
  name: z.ZodType<string>;
  definition: z.ZodType<EntryDefinitions[K], EntryInputs[K]>;
}

export const ENTRY_SPECS: { [K in EntryKind]: EntrySpec<K> } = {
  prompt: {
    kind: 'prompt',
    noun: 'prompt',
    plural: 'prompts',
    name: promptNameSchema,
    definition: promptDefinitionSchema,
  },
  resource: {
    kind: 'resource',
    noun: 'resource',
    plural: 'resources',
    name: resourceNameSchema,
    definition: resourceDefinitionSchema,
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
