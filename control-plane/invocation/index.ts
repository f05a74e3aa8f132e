/**
 * The public face of invocation/: what other folders may import (eslint.config.js holds the rule).
 */
export { inputSchemaFor, publishedInputSchema } from './arguments.js';
export { ToolInvoker } from './tool-invoker.js';
export { refusalCodeOf } from './refusal-codes.js';
export type { InvocableTool, InvokeResult } from './tool-invoker.js';
export { SDK_NAME_OF, type CallingClient } from './calling-client.js';
export {
  EntryRunner,
  type CompletionReference,
  type EntryCatalog,
  type EntryRunContext,
} from './entry-runner.js';
export type { Completion } from './completion-ranking.js';
