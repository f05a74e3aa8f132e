/**
 * Where the completions of a prompt argument or a template variable come
 * from (MCP `completion/complete`): a fixed list of values, ranked by how
 * well they match what the user typed, or code run in the sandbox like a
 * tool's (`params` holds `{argument, value, arguments}`; it returns an array
 * of strings or `{values, total?, hasMore?}`).
 */
import { z } from 'zod';

/** The most values a completion list may hold (MCP answers at most 100 at a time). */
export const MAX_COMPLETION_VALUES = 1000;

export const completionSourceSchema = z.union([
  z.strictObject({
    values: z.array(z.string().max(1024)).max(MAX_COMPLETION_VALUES),
  }),
  z.strictObject({
    /** Body of an async function, as a tool's code. */
    code: z.string().min(1).max(1_048_576),
  }),
]);
export type CompletionSource = z.infer<typeof completionSourceSchema>;

/**
 * A name usable as a `{{placeholder}}`, a `params` key and a completion
 * argument: a JavaScript identifier, not one that would reach an object's
 * prototype.
 */
export const argumentNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'an argument name is letters, digits and _ (not first)')
  .refine(
    (name) => !['__proto__', 'constructor', 'prototype'].includes(name),
    'an argument may not be named __proto__, constructor or prototype',
  );
