/**
 * How an operator's tool code becomes a function: the code is the body of an
 * async function whose parameters are the names in scope. Shared by the harness
 * (which runs it) and the control plane (which checks it when a tool is saved),
 * so both agree on every line and column.
 */
import vm from 'node:vm';

/** File name tool code is compiled under; stack frames of tool code carry it. */
export const TOOL_FILENAME = 'tool.js';

/** The names tool code sees in scope, in parameter order. */
export const TOOL_PARAMETER_NAMES = ['params', 'env', 'console', 'sdk'] as const;

const WRAPPER_HEAD = `(async function (${TOOL_PARAMETER_NAMES.join(', ')}) {\n`;
const WRAPPER_TAIL = '\n})';

/**
 * Line offset to compile the wrapped source with: the wrapper's head takes one
 * line, so -1 makes line numbers those of the operator's code. The code starts
 * at column 0 of its line, so columns need no offset.
 */
export const TOOL_LINE_OFFSET = -1;

/** Source of the async function expression whose body is `code`. */
export function wrapToolCode(code: string): string {
  return `${WRAPPER_HEAD}${code}${WRAPPER_TAIL}`;
}

/** Options for `compileToolScript`. */
export interface CompileToolScriptOptions {
  /** Called on `import()` in tool code; see vm.Script's option of that name. */
  importModuleDynamically?: vm.ScriptOptions['importModuleDynamically'];
}

/**
 * Compiles tool code into a Script whose evaluation yields the tool function.
 * Throws the engine's SyntaxError; positions in it refer to the operator's code.
 * Nothing runs.
 */
export function compileToolScript(code: string, options: CompileToolScriptOptions = {}): vm.Script {
  const script = new vm.Script(wrapToolCode(code), {
    filename: TOOL_FILENAME,
    lineOffset: TOOL_LINE_OFFSET,
    importModuleDynamically: options.importModuleDynamically,
  });
  assertBodyStandsAlone(code);
  return script;
}

const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (
  ...parameters: string[]
) => unknown;

/**
 * Code like `}); other(); (async function () {` compiles inside the wrapper yet
 * escapes the function body. The AsyncFunction constructor parses a body on its
 * own (it builds, never calls, the function), so such code fails here.
 */
function assertBodyStandsAlone(code: string): void {
  try {
    new AsyncFunction(...TOOL_PARAMETER_NAMES, code);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new ToolBodyEscapeError(error.message);
  }
}

/** The code closes the function body it is meant to be (no position is known). */
export class ToolBodyEscapeError extends SyntaxError {
  constructor(engineMessage: string) {
    super(`${engineMessage} (the code must stay inside its function body)`);
    this.name = 'ToolBodyEscapeError';
  }
}
