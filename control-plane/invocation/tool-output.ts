/**
 * A tool's result against its `outputSchema`. A tool that declares one
 * promises clients an object matching it (sent as `structuredContent`, which
 * clients validate themselves), so anything else it returns — another type,
 * content blocks, an object that does not match — fails the call with
 * ERR_OUTPUT_INVALID naming the JSON path, rather than reaching the client.
 */
import type { InvocationOutcome } from '../sandbox/index.js';
import { toolSchemas, type SchemaBearingTool } from './tool-schemas.js';

/** The outcome unchanged, or failed with ERR_OUTPUT_INVALID when it breaks the tool's outputSchema. */
export function checkOutput(
  tool: SchemaBearingTool,
  outcome: InvocationOutcome,
): InvocationOutcome {
  if (!outcome.ok || tool.outputSchema === undefined) return outcome;
  const problem = outputProblem(tool, outcome.value, outcome.content !== undefined);
  if (problem === undefined) return outcome;
  const { value: _value, content: _content, ...measured } = outcome;
  return { ...measured, ok: false, error: { code: 'ERR_OUTPUT_INVALID', message: problem } };
}

function outputProblem(
  tool: SchemaBearingTool,
  value: unknown,
  returnedContent: boolean,
): string | undefined {
  if (returnedContent) {
    return 'the tool has an outputSchema, so it must return an object matching it, not sdk.content blocks';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `the tool has an outputSchema, so it must return an object matching it, not ${kindOf(value)}`;
  }
  const checked = toolSchemas.check(tool, 'outputSchema', value);
  return checked.ok ? undefined : `result does not match outputSchema: ${checked.problem}`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
