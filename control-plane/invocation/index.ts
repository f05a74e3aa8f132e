/**
 * The public face of invocation/: what other folders may import (eslint.config.js holds the rule).
 */
export { inputSchemaFor } from './arguments.js';
export { ToolInvoker } from './tool-invoker.js';
export type { Caller, InvocableTool, InvokeResult } from './tool-invoker.js';
