/**
 * The MCP server of one session on one hosted server: the official SDK's
 * `Server` with `tools/list` and `tools/call` answered from the in-memory
 * configuration, console output streamed as logging notifications on the
 * call's own response stream, cancellation wired to the invocation.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestSchema,
  type LoggingLevel,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { LogLevel } from '../../src/protocol/index.js';
import { inputSchemaFor } from '../invocation/arguments.js';
import type { Caller, InvocableTool, ToolInvoker } from '../invocation/tool-invoker.js';
import { toCallToolResult } from './tool-result.js';

/** What the MCP layer reads of the configuration (served from memory). */
export interface ToolCatalog {
  tools(subdomain: string): readonly InvocableTool[];
  tool(subdomain: string, name: string): InvocableTool | undefined;
}

export interface HostedServerContext {
  subdomain: string;
  caller: Caller;
  catalog: ToolCatalog;
  invoker: ToolInvoker;
  /** Names the request id of a call for the logs. */
  requestId: () => string;
  version: string;
}

const LEVEL_OF_CONSOLE: Record<LogLevel, LoggingLevel> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warn: 'warning',
  error: 'error',
};
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

// Tool descriptions are rebuilt only when a tool's record changes (a save
// replaces the record object), not on every tools/list.
const describedTools = new WeakMap<InvocableTool, Tool>();

function describe(tool: InvocableTool): Tool {
  let described = describedTools.get(tool);
  if (!described) {
    described = {
      name: tool.name,
      description: tool.description,
      inputSchema: inputSchemaFor(tool.parameters),
    };
    describedTools.set(tool, described);
  }
  return described;
}

/** Builds the SDK server of one session. */
export function createHostedMcpServer(context: HostedServerContext): Server {
  const server = new Server(
    { name: `mcphost/${context.subdomain}`, version: context.version },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  let minimumLevel: LoggingLevel = 'debug';

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    minimumLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: context.catalog.tools(context.subdomain).map(describe),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = context.catalog.tool(context.subdomain, name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const result = await context.invoker.invoke({
      tool,
      args: request.params.arguments,
      caller: context.caller,
      requestId: context.requestId(),
      signal: extra.signal,
      onLog: (entry) => {
        const level = LEVEL_OF_CONSOLE[entry.level];
        if ((SEVERITY.get(level) ?? 0) < (SEVERITY.get(minimumLevel) ?? 0)) return;
        // Related to the request, so it travels on this call's own SSE stream.
        void extra
          .sendNotification({
            method: 'notifications/message',
            params: { level, logger: name, data: entry.text },
          })
          .catch(() => undefined);
      },
    });
    return toCallToolResult(result);
  });

  return server;
}
