/**
 * The `tools/call` handler of a hosted server, for both eras: look the tool
 * up, run it through the era's call runner (call-runner.ts: its client, its
 * log lines on the call's own response, its input rounds), and shape the
 * result. The SDK's protocol layer around it parses the request, validates
 * and encodes the result for the era, and aborts the call's signal when the
 * client cancels it.
 */
import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  ServerContext,
} from '@modelcontextprotocol/server';
import { isMcphostError, McphostError } from '../errors.js';
import type { InvocableTool, ToolInvoker } from '../invocation/index.js';
import { isInputRequired, runContextOf, type CallRunner } from './call-runner.js';
import { toProtocolError } from './protocol-error.js';
import { scopeOf } from './request-scope.js';
import { toCallToolResult } from './tool-result.js';

/** What the MCP layer reads of the configuration (served from memory). */
export interface ToolCatalog {
  tools(subdomain: string): readonly InvocableTool[];
  tool(subdomain: string, name: string): InvocableTool | undefined;
}

export interface ToolCallContext {
  subdomain: string;
  catalog: ToolCatalog;
  invoker: ToolInvoker;
  /** Told of a failure that is a bug (not a McphostError); the client sees ERR_INTERNAL only. */
  onInternalError(error: unknown): void;
}

/** Runs a tool call; an unknown tool is a JSON-RPC error (ERR_UNKNOWN_TOOL), tool failures are isError results. */
export async function callTool(
  context: ToolCallContext,
  request: CallToolRequest,
  ctx: ServerContext,
  runner: CallRunner,
): Promise<CallToolResult | InputRequiredResult> {
  const { name } = request.params;
  const tool = context.catalog.tool(context.subdomain, name);
  if (!tool) {
    context.invoker.countRefusal(context.subdomain, 'ERR_UNKNOWN_TOOL');
    throw toProtocolError(new McphostError('ERR_UNKNOWN_TOOL', `Unknown tool: ${name}`));
  }
  const scope = scopeOf(ctx);
  const args = request.params.arguments;
  let result;
  try {
    result = await runner.run({ ctx, target: { kind: 'tool', name }, args, logger: name }, (io) =>
      context.invoker.invoke({ tool, args, ...runContextOf(scope, io) }),
    );
  } catch (error) {
    // The invoker answers a tool's own failures as results; what it throws is ours.
    if (!isMcphostError(error) && !isProtocolAnswer(error)) context.onInternalError(error);
    throw isProtocolAnswer(error) ? error : toProtocolError(error);
  }
  return isInputRequired(result) ? result : toCallToolResult(result);
}

/** An error already in the protocol's terms (a refused requestState, a missing capability). */
export function isProtocolAnswer(error: unknown): boolean {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'number';
}
