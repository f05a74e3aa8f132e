/**
 * A tool's result as it will be answered: against its `outputSchema`, and
 * within TOOL_MAX_RESULT_BYTES in the bytes the answer takes.
 *
 * A tool that declares an outputSchema promises clients an object matching
 * it (sent as `structuredContent`, which clients validate themselves), so
 * anything else it returns — another type, content blocks, an object that
 * does not match — fails the call with ERR_OUTPUT_INVALID naming the JSON
 * path, rather than reaching the client.
 *
 * The harness bounds the result's JSON; the answer can be larger (issue 28):
 * a returned value other than a string is sent as JSON text, which escapes
 * its JSON once more (a `"` becomes `\"`, `\u0001` becomes `\\u0001`), and an
 * object also as `structuredContent` (mcp/tool-result.ts builds the answer;
 * `answerBytesAtMost` counts what it builds). A result whose answer is larger
 * than the limit fails with ERR_RESULT_TOO_LARGE. Prompts', resources' and
 * completions' answers are measured where they are built (entry-runner.ts).
 */
import { jsonBytesAtMost, jsonTextBytesAtMost } from '../json-size.js';
import type { InvocationOutcome } from '../sandbox/index.js';
import type { SchemaBearingTool, SchemaChecker } from './schema-checker.js';

/** A tool as its output is checked; `kind` is set for a prompt's, resource's or completion's code. */
export interface OutputDeclarations extends SchemaBearingTool {
  readonly kind?: string;
}

/**
 * The outcome unchanged, or failed with ERR_OUTPUT_INVALID when it breaks the
 * tool's outputSchema or cannot be checked against it (in a worker thread,
 * under a deadline: see schema-checker.ts), or with ERR_RESULT_TOO_LARGE when
 * a tool's answer would take more than `maxResultBytes` bytes of JSON.
 */
export async function checkOutput(
  tool: OutputDeclarations,
  outcome: InvocationOutcome,
  schemas: SchemaChecker,
  maxResultBytes: number,
): Promise<InvocationOutcome> {
  if (!outcome.ok) return outcome;
  const problem =
    tool.outputSchema === undefined
      ? undefined
      : await outputProblem(tool, outcome.value, outcome.content !== undefined, schemas);
  if (problem !== undefined) return failed(outcome, 'ERR_OUTPUT_INVALID', problem);
  if (tool.kind !== undefined) return outcome;
  if (answerBytesAtMost(outcome, maxResultBytes) > maxResultBytes) {
    return failed(
      outcome,
      'ERR_RESULT_TOO_LARGE',
      `result is more than ${maxResultBytes} bytes of JSON once answered (a value other than a string is sent as JSON text, and an object as structuredContent too), more than the limit`,
    );
  }
  return outcome;
}

/**
 * Bytes of the `CallToolResult` that mcp/tool-result.ts makes of a
 * successful outcome, or a number above `limit` once past it.
 */
export function answerBytesAtMost(
  outcome: Extract<InvocationOutcome, { ok: true }>,
  limit: number,
): number {
  if (outcome.content !== undefined) {
    return CONTENT_ENVELOPE + jsonBytesAtMost(outcome.content, limit - CONTENT_ENVELOPE);
  }
  const { value } = outcome;
  if (typeof value === 'string') {
    return TEXT_ENVELOPE + jsonBytesAtMost(value, limit - TEXT_ENVELOPE);
  }
  const text = TEXT_ENVELOPE + jsonTextBytesAtMost(value, limit - TEXT_ENVELOPE);
  if (!isPlainObject(value) || text > limit) return text;
  return text + STRUCTURED_ENVELOPE + jsonBytesAtMost(value, limit - text - STRUCTURED_ENVELOPE);
}

/** `{"content":}`, `{"content":[{"type":"text","text":}]}` and `,"structuredContent":`, in bytes. */
const CONTENT_ENVELOPE = JSON.stringify({ content: [] }).length - 2;
const TEXT_ENVELOPE = JSON.stringify({ content: [{ type: 'text', text: '' }] }).length - 2;
const STRUCTURED_ENVELOPE = ',"structuredContent":'.length;

async function outputProblem(
  tool: SchemaBearingTool,
  value: unknown,
  returnedContent: boolean,
  schemas: SchemaChecker,
): Promise<string | undefined> {
  if (returnedContent) {
    return 'the tool has an outputSchema, so it must return an object matching it, not sdk.content blocks';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `the tool has an outputSchema, so it must return an object matching it, not ${kindOf(value)}`;
  }
  const checked = await schemas.check(tool, 'outputSchema', value);
  if (checked.ok) return undefined;
  return checked.reason === 'mismatch'
    ? `result does not match outputSchema: ${checked.problem}`
    : `result could not be checked against outputSchema: ${checked.problem}`;
}

function failed(
  outcome: InvocationOutcome,
  code: 'ERR_OUTPUT_INVALID' | 'ERR_RESULT_TOO_LARGE',
  message: string,
): InvocationOutcome {
  const {
    value: _value,
    content: _content,
    ...measured
  } = outcome as Extract<InvocationOutcome, { ok: true }>;
  return { ...measured, ok: false, error: { code, message } };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
