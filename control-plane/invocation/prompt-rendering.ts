/**
 * What `prompts/get` answers, apart from running code: the arguments checked
 * against the prompt's declarations, a template's placeholders replaced, and
 * what prompt code returned turned into messages (or refused, saying why).
 */
import type { GetPromptResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ContentBlock } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { jsonStringBytes } from '../json-size.js';
import {
  PLACEHOLDER,
  templatedTexts,
  type PromptMessage,
  type PromptRecord,
} from '../store/index.js';
import { describeProblems } from '../validation-problems.js';

type Messages = GetPromptResult['messages'];

/**
 * The arguments of a `prompts/get` as strings by name: every required one
 * present, none undeclared, each a string (MCP prompt arguments are strings).
 */
export function checkPromptArguments(
  prompt: PromptRecord,
  args: Record<string, unknown> | undefined,
): Record<string, string> {
  const values: Record<string, string> = Object.create(null);
  const declared = new Set(prompt.arguments.map((argument) => argument.name));
  for (const [name, value] of Object.entries(args ?? {})) {
    if (!declared.has(name)) {
      throw invalid(`prompt "${prompt.name}" has no argument "${name}"`);
    }
    if (typeof value !== 'string') {
      throw invalid(`argument "${name}" of prompt "${prompt.name}" must be a string`);
    }
    values[name] = value;
  }
  const missing = prompt.arguments
    .filter((argument) => argument.required && values[argument.name] === undefined)
    .map((argument) => argument.name);
  if (missing.length > 0) {
    throw invalid(`prompt "${prompt.name}" needs the argument(s) ${missing.join(', ')}`);
  }
  return values;
}

/** A templated text split once into literals and placeholder names (odd indexes). */
type SplitText = string[];

interface SplitTemplate {
  /** Per message, its templated texts (text; or an embedded resource's uri, then text). */
  texts: SplitText[][];
  /**
   * Bytes of the answer as JSON with every placeholder empty: the prompt's
   * description, the messages' structure and every literal part, escaped as
   * JSON escapes them.
   */
  emptyAnswerBytes: number;
  /** How often each argument appears. */
  uses: Map<string, number>;
}

const splitTemplates = new WeakMap<PromptRecord, SplitTemplate>();
/** Every placeholder empty: the render whose size every other render starts from. */
const EMPTY: Record<string, string> = Object.freeze(Object.create(null));

/** The template split at its placeholders, once per saved record (renders then cost no scan). */
function splitTemplate(prompt: PromptRecord & { messages: PromptMessage[] }): SplitTemplate {
  let split = splitTemplates.get(prompt);
  if (!split) {
    const uses = new Map<string, number>();
    const texts = prompt.messages.map((message) =>
      templatedTexts(message).map((text) => {
        // split() with a capturing group keeps the names at the odd indexes.
        const parts = text.split(PLACEHOLDER);
        parts.forEach((part, index) => {
          if (index % 2 === 1) uses.set(part, (uses.get(part) ?? 0) + 1);
        });
        return parts;
      }),
    );
    const empty = build(prompt, texts, EMPTY);
    const emptyAnswerBytes = Buffer.byteLength(JSON.stringify(answerOf(prompt, empty)), 'utf8');
    split = { texts, emptyAnswerBytes, uses };
    splitTemplates.set(prompt, split);
  }
  return split;
}

function fill(parts: SplitText, values: Record<string, string>): string {
  let text = '';
  for (let index = 0; index < parts.length; index++) {
    text += index % 2 === 0 ? parts[index] : (values[parts[index]!] ?? '');
  }
  return text;
}

/**
 * A template's messages with every placeholder replaced, in one pass (values
 * are not re-read). The size of the answer is worked out first, in bytes of
 * JSON as it will be sent (a control character is 6 of them, a quote 2),
 * from the split template: a template with many placeholders multiplies
 * what a client sends, so an answer larger than a tool's result may be
 * (`maxBytes`) is refused before it is built.
 */
export function renderTemplate(
  prompt: PromptRecord & { messages: PromptMessage[] },
  values: Record<string, string>,
  maxBytes: number,
): Messages {
  const { texts, emptyAnswerBytes, uses } = splitTemplate(prompt);
  let size = emptyAnswerBytes;
  for (const [name, count] of uses) {
    // Each use adds the value's characters as escaped inside a string (its quotes aside).
    size += count * (jsonStringBytes(values[name] ?? '') - 2);
  }
  if (size > maxBytes) {
    throw new McphostError(
      'ERR_RESULT_TOO_LARGE',
      `prompt "${prompt.name}" would answer ${size} bytes of JSON with these arguments, more than ${maxBytes} (TOOL_MAX_RESULT_BYTES)`,
    );
  }
  return build(prompt, texts, values);
}

/** What `prompts/get` answers for a template: its description, if any, and its messages. */
export function answerOf(prompt: PromptRecord, messages: Messages): GetPromptResult {
  return prompt.description ? { description: prompt.description, messages } : { messages };
}

function build(
  prompt: PromptRecord & { messages: PromptMessage[] },
  texts: SplitText[][],
  values: Record<string, string>,
): Messages {
  return prompt.messages.map((message, index) => {
    const { content } = message;
    const [first, second] = texts[index]!;
    if (content.type === 'text') {
      return { role: message.role, content: { type: 'text', text: fill(first!, values) } };
    }
    if (content.type !== 'resource') return { role: message.role, content };
    const uri = fill(first!, values);
    // The empty render only measures: its uris are checked when a render is answered.
    if (values !== EMPTY && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) {
      throw invalid(
        `message ${index + 1} of prompt "${prompt.name}" embeds a resource whose uri is not an absolute URI once its arguments are in: ${JSON.stringify(uri.slice(0, 200))}`,
      );
    }
    const resource =
      'text' in content.resource
        ? { ...content.resource, uri, text: fill(second!, values) }
        : { ...content.resource, uri };
    return { role: message.role, content: { type: 'resource', resource } };
  });
}

const CodeMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: ContentBlock });
const CodeResult = z.union([
  z.array(CodeMessage).min(1).max(1000),
  z.strictObject({
    description: z.string().max(16_384).optional(),
    messages: z.array(CodeMessage).min(1).max(1000),
  }),
]);

/**
 * The result of prompt code: a string (one user message), sdk.content blocks
 * (one user message each), an array of `{role, content}`, or
 * `{description?, messages}`. Anything else is ERR_OUTPUT_INVALID.
 */
export function messagesFromCode(
  prompt: PromptRecord,
  value: unknown,
  content: readonly ContentBlock[] | undefined,
): GetPromptResult {
  if (content !== undefined) {
    return { messages: content.map((block) => ({ role: 'user', content: block })) };
  }
  if (typeof value === 'string') {
    return { messages: [{ role: 'user', content: { type: 'text', text: value } }] };
  }
  const parsed = CodeResult.safeParse(value);
  if (!parsed.success) {
    throw new McphostError(
      'ERR_OUTPUT_INVALID',
      `the code of prompt "${prompt.name}" must return messages ([{role, content}], a string or sdk.content blocks): ${describeProblems(parsed.error)}`,
    );
  }
  const result = parsed.data;
  return Array.isArray(result) ? { messages: result } : result;
}

function invalid(message: string): McphostError {
  return new McphostError('ERR_INVALID_ARGUMENT', message);
}
