/**
 * Resources of a hosted server (MCP `resources/*`). A resource is either
 * static — a `uri` with its contents, text or base64 `blob`, kept in the
 * store and served from memory — or a template: an RFC 6570 `uriTemplate`
 * whose contents come from code run in the sandbox like a tool's, with the
 * template's variables as `params`.
 */
import { z } from 'zod';
import { Base64, MimeType, ResourceUri } from '../../src/protocol/index.js';
import { completionSourceSchema } from './completion-records.js';
import { secretNameSchema, toolLimitsSchema } from './records.js';
import { parseUriTemplate, UriTemplateError } from './uri-template.js';

/** A resource name: the admin API's key, and the `name` clients see. */
export const resourceNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a resource name is 1–128 of A–Z a–z 0–9 _ - .');

/** MCP resource annotations: hints for clients. */
export const resourceAnnotationsSchema = z.strictObject({
  audience: z
    .array(z.enum(['user', 'assistant']))
    .max(2)
    .optional(),
  priority: z.number().min(0).max(1).optional(),
});

export const resourceDefinitionSchema = z
  .strictObject({
    /** A static resource's URI. Exactly one of `uri` and `uriTemplate`. */
    uri: ResourceUri.optional(),
    /** A resource template (RFC 6570), e.g. `weather://{city}/today`. */
    uriTemplate: z.string().max(2048).optional(),
    title: z.string().min(1).max(256).optional(),
    description: z.string().max(16_384).optional(),
    mimeType: MimeType.optional(),
    annotations: resourceAnnotationsSchema.optional(),
    /** A static resource's contents: `text`, or `blob` (base64), exactly one. */
    text: z.string().optional(),
    blob: Base64.optional(),
    /** A template's code, returning the contents of one URI. */
    code: z.string().min(1).max(1_048_576).optional(),
    /** Completions of a template's variables, by variable name. */
    complete: z.record(z.string(), completionSourceSchema).optional(),
    /** Secrets a template's code may read from `env`. */
    secrets: z.array(secretNameSchema).max(128).default([]),
    limits: toolLimitsSchema.default({}),
  })
  .superRefine((definition, context) => {
    const issue = (path: string, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    const isStatic = definition.uri !== undefined;
    if (isStatic === (definition.uriTemplate !== undefined)) {
      issue('uri', 'a resource has either a uri (static) or a uriTemplate, exactly one of them');
      return;
    }
    if (isStatic) {
      if ((definition.text === undefined) === (definition.blob === undefined)) {
        issue('text', 'a static resource has either text or blob, exactly one of them');
      }
      for (const field of ['code', 'complete'] as const) {
        if (definition[field] !== undefined) {
          issue(
            field,
            `${field} belongs to a resource template (uriTemplate), not a static resource`,
          );
        }
      }
      if (definition.secrets.length > 0) {
        issue('secrets', 'a static resource runs no code: it lists no secrets');
      }
      return;
    }
    for (const field of ['text', 'blob'] as const) {
      if (definition[field] !== undefined) {
        issue(field, `a resource template's contents come from its code, not ${field}`);
      }
    }
    if (definition.code === undefined) issue('code', 'a resource template needs code');
    let variables: readonly string[] = [];
    try {
      variables = parseUriTemplate(definition.uriTemplate!).variables;
    } catch (error) {
      if (!(error instanceof UriTemplateError)) throw error;
      issue('uriTemplate', error.message);
      return;
    }
    for (const name of Object.keys(definition.complete ?? {})) {
      if (!variables.includes(name)) {
        issue('complete', `"${name}" is not a variable of ${definition.uriTemplate}`);
      }
    }
  });
export type ResourceDefinitionInput = z.input<typeof resourceDefinitionSchema>;
export type ResourceDefinition = z.output<typeof resourceDefinitionSchema>;

/** Bytes a static resource's contents take (UTF-8 text, or the decoded blob); 0 for a template. */
export function contentBytes(definition: ResourceDefinition): number {
  if (definition.text !== undefined) return Buffer.byteLength(definition.text, 'utf8');
  if (definition.blob !== undefined) {
    const { blob } = definition;
    const padding = blob.endsWith('==') ? 2 : blob.endsWith('=') ? 1 : 0;
    return (blob.length / 4) * 3 - padding;
  }
  return 0;
}
