/**
 * Syntax checking of tool code with positions in the operator's own code.
 * The position comes from the engine itself: Node decorates the stack of a
 * vm.Script compile error with `file:line`, the source line and a caret line.
 */
import { compileToolScript, TOOL_FILENAME, ToolBodyEscapeError } from './wrap.js';

/** A syntax error in tool code; line and column are 1-based in the operator's code. */
export interface ToolSyntaxError {
  message: string;
  line: number;
  column: number;
}

/** Returns the first syntax error in `code`, or null when it compiles. Nothing runs. */
export function checkToolSyntax(code: string): ToolSyntaxError | null {
  try {
    compileToolScript(code);
    return null;
  } catch (error) {
    return describeToolSyntaxError(error, code);
  }
}

/**
 * Turns what compiling tool code threw into a message and a position; anything
 * but a SyntaxError is rethrown (it is not the operator's mistake).
 */
export function describeToolSyntaxError(error: unknown, code: string): ToolSyntaxError {
  if (error instanceof ToolBodyEscapeError) return { message: error.message, line: 1, column: 1 };
  if (!(error instanceof SyntaxError)) throw error;
  const lines = code.split(/\r\n|[\n\r\u2028\u2029]/);
  const lastLine = lines.length;
  const position = positionFromDecoratedStack(error.stack ?? '');
  if (position === null || position.line > lastLine || position.line < 1) {
    // The engine only noticed at the wrapper's closing `})`: the code ended early.
    const endColumn = (lines[lastLine - 1] ?? '').length + 1;
    const message = position === null ? error.message : 'Unexpected end of input';
    return { message, line: lastLine, column: endColumn };
  }
  return { message: error.message, line: position.line, column: position.column };
}

/** Reads `tool.js:LINE`, the source line and the caret under it from a decorated stack. */
function positionFromDecoratedStack(stack: string): { line: number; column: number } | null {
  const [header, , caretLine] = stack.split('\n');
  const match =
    header === undefined
      ? null
      : new RegExp(`^${escapeRegExp(TOOL_FILENAME)}:(-?\\d+)$`).exec(header);
  if (match === null) return null;
  const line = Number(match[1]);
  const caret = caretLine?.indexOf('^') ?? -1;
  // Node pads the caret with the source line's own tabs and spaces, so its index is the column.
  return { line, column: caret >= 0 ? caret + 1 : 1 };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
