/**
 * The refusal of code that does not compile, for every kind of code an
 * operator saves (a tool's, a prompt's or resource's, a completion's): one
 * wording, with the line and column and, for an `import` or `export`
 * statement, what tool code has instead of modules.
 */
import { withInsteadOfModuleSyntax } from '../../src/tool-code/index.js';
import { McphostError } from '../errors.js';
import type { SyntaxProblem } from './admin-context.js';

/**
 * ERR_TOOL_SYNTAX for `problem`; `field` names the code field when a
 * definition has several (`arguments.1.complete.code`). Its details carry the
 * position and the engine's message (with the hint) for the dashboard.
 */
export function toolSyntaxError(problem: SyntaxProblem, field?: string): McphostError {
  const message = withInsteadOfModuleSyntax(problem.message);
  const where = field === undefined ? '' : ` in ${field}`;
  return new McphostError(
    'ERR_TOOL_SYNTAX',
    `syntax error${where} at line ${problem.line}, column ${problem.column}: ${message}`,
    { details: { ...problem, message, ...(field === undefined ? {} : { field }) } },
  );
}
