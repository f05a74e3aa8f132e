/**
 * The `tools/call` handler of a hosted server: look the tool up, run it,
 * stream its console output as logging notifications on the call's own
 * response (at or above the session's level), and shape the result. The SDK's
 * protocol layer around it parses the request, validates the result, and
 * aborts `extra.signal` on `notifications/cancelled` or when the session ends.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  LoggingLevelSchema,
  type CallToolRequest,
  type CallToolResult,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { LogLevel } from '../../src/protocol/index.js';
import type { LogEntry } from '../sandbox/index.js';
import { isMcphostError, McphostError } from '../errors.js';
import { clientAddressFromHeaders, requestIdFromHeaders } from '../http/index.js';
import type { Caller, CallingClient, InvocableTool, ToolInvoker } from '../invocation/index.js';
import { toProtocolError } from './protocol-error.js';
import { toCallToolResult } from './tool-result.js';

/** What the MCP layer reads of the configuration (served from memory). */
export interface ToolCatalog {
  tools(subdomain: string): readonly InvocableTool[];
  tool(subdomain: string, name: string): InvocableTool | undefined;
}

export interface ToolCallContext {
  subdomain: string;
  caller: Caller;
  catalog: ToolCatalog;
  invoker: ToolInvoker;
  /** Told of a failure that is a bug (not a McphostError); the client sees ERR_INTERNAL only. */
  onInternalError(error: unknown): void;
}

/** What a handler of this session may send and read (the SDK's per-request extra). */
export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const LEVEL_OF_CONSOLE: Record<LogLevel, LoggingLevel> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warn: 'warning',
  error: 'error',
};
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** True when a line at `level` is sent to a session whose `logging/setLevel` asked for `minimum`. */
function isLevelSent(level: LoggingLevel, minimum: LoggingLevel): boolean {
  return SEVERITY.get(level)! >= SEVERITY.get(minimum)!;
}

/**
 * Sends each console line of running code as a logging notification (at or
 * above the session's level), related to the request so it travels on the
 * request's own response.
 */
export function logForwarder(
  extra: HandlerExtra,
  logger: string,
  minimumLevel: () => LoggingLevel,
): (entry: LogEntry) => void {
  return (entry) => {
    const level = LEVEL_OF_CONSOLE[entry.level];
    if (!isLevelSent(level, minimumLevel())) return;
    void extra
      .sendNotification({
        method: 'notifications/message',
        params: { level, logger, data: entry.text },
      })
      .catch(() => undefined);
  };
}

/** How one call reaches its session: the log level it asked for, and its client. */
export interface CallSession {
  minimumLevel(): LoggingLevel;
  /** Where `sdk.progress`, `sdk.elicit` and `sdk.sample` go. */
  client: CallingClient;
}

/** Runs a tool call; an unknown tool is a JSON-RPC error (ERR_UNKNOWN_TOOL), tool failures are isError results. */
export async function callTool(
  context: ToolCallContext,
  request: CallToolRequest,
  extra: HandlerExtra,
  session: CallSession,
): Promise<CallToolResult> {
  const { name } = request.params;
  const tool = context.catalog.tool(context.subdomain, name);
  if (!tool) {
    throw toProtocolError(new McphostError('ERR_UNKNOWN_TOOL', `Unknown tool: ${name}`));
  }
  let result;
  try {
    result = await context.invoker.invoke({
      tool,
      args: request.params.arguments,
      caller: context.caller,
      requestId: requestIdFromHeaders(extra.requestInfo?.headers),
      clientAddress: clientAddressFromHeaders(extra.requestInfo?.headers),
      signal: extra.signal,
      client: session.client,
      onLog: logForwarder(extra, name, session.minimumLevel),
    });
  } catch (error) {
    // The invoker answers a tool's own failures as results; what it throws is ours.
    if (!isMcphostError(error)) context.onInternalError(error);
    throw toProtocolError(error);
  }
  return toCallToolResult(result);
}
