/**
 * One `tools/call` on a hosted server: look the tool up, run it, stream its
 * console output as logging notifications (at or above the session's level),
 * and shape the result. The SDK request handler and the lean path both call
 * this, so a call behaves the same whichever way it arrives.
 */
import {
  ErrorCode,
  LoggingLevelSchema,
  McpError,
  type CallToolResult,
  type LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import type { LogLevel } from '../../src/protocol/index.js';
import type { Caller, InvocableTool, ToolInvoker } from '../invocation/tool-invoker.js';
import { toCallToolResult } from './tool-result.js';

/** What the MCP layer reads of the configuration (served from memory). */
export interface ToolCatalog {
  tools(subdomain: string): readonly InvocableTool[];
  tool(subdomain: string, name: string): InvocableTool | undefined;
}

/** Per-session state shared by both paths. */
export interface SessionState {
  /** Least severe level sent as a notification (`logging/setLevel`); default debug. */
  minimumLevel: LoggingLevel;
}

export interface ToolCallContext {
  subdomain: string;
  caller: Caller;
  catalog: ToolCatalog;
  invoker: ToolInvoker;
}

/** A logging notification's params, ready to send. */
export interface LogNotificationParams {
  level: LoggingLevel;
  logger: string;
  data: string;
}

const LEVEL_OF_CONSOLE: Record<LogLevel, LoggingLevel> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warn: 'warning',
  error: 'error',
};
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** Runs a tool call; an unknown tool is a JSON-RPC error (InvalidParams), tool failures are isError results. */
export async function callTool(
  context: ToolCallContext,
  state: SessionState,
  params: { name: string; arguments?: Record<string, unknown> },
  requestId: string,
  signal: AbortSignal,
  sendLog: (params: LogNotificationParams) => void,
): Promise<CallToolResult> {
  const tool = context.catalog.tool(context.subdomain, params.name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
  const result = await context.invoker.invoke({
    tool,
    args: params.arguments,
    caller: context.caller,
    requestId,
    signal,
    onLog: (entry) => {
      const level = LEVEL_OF_CONSOLE[entry.level];
      if ((SEVERITY.get(level) ?? 0) < (SEVERITY.get(state.minimumLevel) ?? 0)) return;
      sendLog({ level, logger: params.name, data: entry.text });
    },
  });
  return toCallToolResult(result);
}
