/**
 * A tool's result against its `outputSchema`. A tool that declares one
 * promises clients an object matching it (sent as `structuredContent`, which
 * clients validate themselves), so anything else it returns — another type,
 * content blocks, an object that does not match — fails the call with
 * ERR_OUTPUT_INVALID naming the JSON path, rather than reaching the client.
 */
import type { InvocationOutcome } from '../sandbox/index.js';
import type { SchemaBearingTool, SchemaChecker } from './schema-checker.js';

/**
 * The outcome unchanged, or failed with ERR_OUTPUT_INVALID when it breaks the
 * tool's outputSchema or cannot be checked against it (in a worker thread,
 * under a deadline: see schema-checker.ts).
 */
export async function checkOutput(
  tool: SchemaBearingTool,
  outcome: InvocationOutcome,
  schemas: SchemaChecker,
): Promise<InvocationOutcome> {
  if (!outcome.ok || tool.outputSchema === undefined) return outcome;
  const problem = await outputProblem(tool, outcome.value, outcome.content !== undefined, schemas);
  if (problem === undefined) return outcome;
  const { value: _value, content: _content, ...measured } = outcome;
  return { ...measured, ok: false, error: { code: 'ERR_OUTPUT_INVALID', message: problem } };
}

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

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
