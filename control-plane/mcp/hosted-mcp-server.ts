/**
 * The MCP server of one session on one hosted server: the official SDK's
 * `Server` with `tools/list` and `tools/call` answered from the in-memory
 * configuration, console output streamed as logging notifications on the
 * call's own response stream, cancellation wired to the invocation.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { requestIdFromHeaders } from '../http/request-context.js';
import { inputSchemaFor } from '../invocation/arguments.js';
import type { InvocableTool } from '../invocation/tool-invoker.js';
import { callTool, type SessionState, type ToolCallContext } from './tool-call.js';

export type { ToolCatalog } from './tool-call.js';

export interface HostedServerContext extends ToolCallContext {
  version: string;
}

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

/** Builds the SDK server of one session; `state` is shared with the lean tools/call path. */
export function createHostedMcpServer(context: HostedServerContext, state: SessionState): Server {
  const server = new Server(
    { name: `mcphost/${context.subdomain}`, version: context.version },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    state.minimumLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: context.catalog.tools(context.subdomain).map(describe),
  }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(
      context,
      state,
      request.params,
      requestIdFromHeaders(extra.requestInfo?.headers),
      extra.signal,
      (params) => {
        // Related to the request, so it travels on this call's own SSE stream.
        void extra
          .sendNotification({ method: 'notifications/message', params })
          .catch(() => undefined);
      },
    ),
  );

  return server;
}
