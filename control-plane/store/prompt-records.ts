/**
 * Prompts of a hosted server (MCP `prompts/*`): arguments, and messages
 * either from a template — user/assistant messages whose text (and embedded
 * resources' `uri` and `text`) may hold `{{argument}}` placeholders — or from
 * code run in the sandbox like a tool's (`params` holds the arguments, `env`
 * the secrets it lists; it returns messages).
 */
import { z } from 'zod';
import { Base64, MimeType } from '../../src/protocol/index.js';
import { argumentNameSchema, completionSourceSchema } from './completion-records.js';
import { secretNameSchema, toolLimitsSchema } from './records.js';

/** A prompt name: what clients list and ask for (1–128 of A–Z a–z 0–9 _ - .). */
export const promptNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a prompt name is 1–128 of A–Z a–z 0–9 _ - .');

export const promptArgumentSchema = z.strictObject({
  name: argumentNameSchema,
  title: z.string().min(1).max(256).optional(),
  description: z.string().max(4096).optional(),
  /** A `prompts/get` without it is refused. Default false. */
  required: z.boolean().default(false),
  /** Values offered by `completion/complete` for this argument. */
  complete: completionSourceSchema.optional(),
});
export type PromptArgument = z.output<typeof promptArgumentSchema>;

/** An embedded resource's URI in a template: absolute, or made so by a placeholder. */
const templatedUri = z
  .string()
  .min(1)
  .max(8192)
  .refine(
    (uri) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri) || uri.includes('{{'),
    'must be an absolute URI (or hold a {{placeholder}} that makes one)',
  );

/** The content of a template message: an MCP content block (text, image, audio, embedded resource). */
export const promptContentSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('image'), data: Base64, mimeType: MimeType }),
  z.strictObject({ type: z.literal('audio'), data: Base64, mimeType: MimeType }),
  z.strictObject({
    type: z.literal('resource'),
    resource: z.union([
      z.strictObject({ uri: templatedUri, mimeType: MimeType.optional(), text: z.string() }),
      z.strictObject({ uri: templatedUri, mimeType: MimeType.optional(), blob: Base64 }),
    ]),
  }),
]);

/** One message of a template. */
export const promptMessageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: promptContentSchema,
});
export type PromptMessage = z.infer<typeof promptMessageSchema>;

/** The most text (in characters) and placeholders one template may hold. */
export const MAX_TEMPLATE_CHARACTERS = 1_048_576;
export const MAX_PLACEHOLDERS = 1000;

/** `{{ name }}`: a placeholder of a template. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export const promptDefinitionSchema = z
  .strictObject({
    title: z.string().min(1).max(256).optional(),
    description: z.string().max(16_384),
    arguments: z.array(promptArgumentSchema).max(64).default([]),
    /** The messages, from a template. Exactly one of `messages` and `code`. */
    messages: z.array(promptMessageSchema).min(1).max(100).optional(),
    /** Code returning the messages. */
    code: z.string().min(1).max(1_048_576).optional(),
    /** Secrets the code (prompt and completion code) may read from `env`. */
    secrets: z.array(secretNameSchema).max(128).default([]),
    limits: toolLimitsSchema.default({}),
  })
  .superRefine((definition, context) => {
    if ((definition.messages === undefined) === (definition.code === undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['messages'],
        message: 'a prompt has either messages (a template) or code, exactly one of them',
      });
    }
    const declared = new Set<string>();
    definition.arguments.forEach((argument, index) => {
      if (declared.has(argument.name)) {
        context.addIssue({
          code: 'custom',
          path: ['arguments', index, 'name'],
          message: `argument "${argument.name}" is declared twice`,
        });
      }
      declared.add(argument.name);
    });
    let characters = 0;
    let placeholders = 0;
    definition.messages?.forEach((message, index) => {
      for (const text of templatedTexts(message)) {
        characters += text.length;
        for (const [, name] of text.matchAll(PLACEHOLDER)) {
          placeholders += 1;
          if (!declared.has(name!)) {
            context.addIssue({
              code: 'custom',
              path: ['messages', index, 'content'],
              message: `{{${name}}} is not a declared argument`,
            });
          }
        }
      }
    });
    // Every render walks the template: its size and its placeholders are bounded.
    if (characters > MAX_TEMPLATE_CHARACTERS || placeholders > MAX_PLACEHOLDERS) {
      context.addIssue({
        code: 'custom',
        path: ['messages'],
        message: `a template holds at most ${MAX_TEMPLATE_CHARACTERS} characters of text and ${MAX_PLACEHOLDERS} placeholders (this one ${characters} and ${placeholders})`,
      });
    }
  });
export type PromptDefinitionInput = z.input<typeof promptDefinitionSchema>;
export type PromptDefinition = z.output<typeof promptDefinitionSchema>;

/** The texts of a message in which placeholders are replaced. */
export function templatedTexts(message: PromptMessage): string[] {
  const { content } = message;
  if (content.type === 'text') return [content.text];
  if (content.type === 'resource') {
    const { resource } = content;
    return 'text' in resource ? [resource.uri, resource.text] : [resource.uri];
  }
  return [];
}
