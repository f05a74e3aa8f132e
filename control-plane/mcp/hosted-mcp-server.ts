/**
 * The MCP server of one session on one hosted server: the official SDK's
 * `Server` with `tools/list` and `tools/call` answered from the in-memory
 * configuration, prompts, resources and completions (entry-handlers.ts),
 * and the session's log level.
 *
 * `logging/setLevel` is answered here rather than by the SDK's built-in
 * handler: the SDK keeps the level privately and filters only
 * `sendLoggingMessage`, which sends outside any request — a tool's log lines
 * must travel on its call's own response, so the filter is ours (tool-call.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { publishedInputSchema } from '../invocation/index.js';
import type { InvocableTool } from '../invocation/index.js';
import { callingClientFor } from './calling-client.js';
import { ELICITATION_ANSWERS } from './elicitation-answers.js';
import type { EntryRunner } from '../invocation/index.js';
import { addEntryHandlers, entryCapabilities, type EntryHandlerContext } from './entry-handlers.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import type { SessionSettings } from './session-state.js';
import { callTool, type ToolCallContext } from './tool-call.js';

export interface HostedServerContext extends ToolCallContext {
  version: string;
  catalog: ToolCallContext['catalog'] & EntryHandlerContext['catalog'];
  entries: EntryRunner;
}

/** What a session of a hosted server holds beyond the SDK server. */
export interface HostedSession {
  server: Server;
  /** Resource URIs the client subscribed to. */
  subscriptions: ResourceSubscriptions;
  /** The settings replicas share (session-state.ts). */
  settings(): SessionSettings;
  /** Takes settings another replica recorded (the client changed them there). */
  applySettings(settings: SessionSettings): void;
  /**
   * Told when the client changed a setting (log level, subscriptions); the
   * answer waits for it, so that every replica sees the change once it is answered.
   */
  onSettingsChanged?: () => Promise<void>;
}

// Tool descriptions are rebuilt only when a tool's record changes (a save
// replaces the record object), not on every tools/list.
const describedTools = new WeakMap<InvocableTool, Tool>();

function describe(tool: InvocableTool): Tool {
  let described = describedTools.get(tool);
  if (!described) {
    // Schemas go out as written (validated at save: an object schema of
    // `type: "object"`, which is all the SDK's Tool type asks of them).
    described = {
      name: tool.name,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      description: tool.description,
      inputSchema: publishedInputSchema(tool) as Tool['inputSchema'],
      ...(tool.outputSchema === undefined
        ? {}
        : { outputSchema: tool.outputSchema as Tool['outputSchema'] }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    };
    describedTools.set(tool, described);
  }
  return described;
}

/**
 * Builds the SDK server of one session. Prompts, resources and completions
 * are announced (and answered) only when the server has some now: MCP
 * capabilities are fixed for a session — a session restored on another
 * replica passes the `features` it was opened with.
 */
export function createHostedMcpServer(
  context: HostedServerContext,
  features?: ServerCapabilities,
): HostedSession {
  const entryFeatures = features ?? entryCapabilities(context);
  const server = new Server(
    { name: `mcphost/${context.subdomain}`, version: context.version },
    {
      capabilities: { tools: { listChanged: true }, logging: {}, ...entryFeatures },
      jsonSchemaValidator: ELICITATION_ANSWERS,
    },
  );
  const subscriptions = new ResourceSubscriptions();
  // Every line is sent until the client asks for less.
  let minimumLevel: LoggingLevel = 'debug';
  const session: HostedSession = {
    server,
    subscriptions,
    settings: () => ({
      features: entryFeatures,
      logLevel: minimumLevel,
      subscriptions: subscriptions.entries(),
    }),
    applySettings: (settings) => {
      minimumLevel = settings.logLevel;
      subscriptions.replace(settings.subscriptions);
    },
  };
  const settingsChanged = () => session.onSettingsChanged?.() ?? Promise.resolve();

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    minimumLevel = request.params.level;
    await settingsChanged();
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: context.catalog.tools(context.subdomain).map(describe),
  }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(context, request, extra, {
      minimumLevel: () => minimumLevel,
      client: callingClientFor(server, request, extra),
    }),
  );

  addEntryHandlers(server, context, entryFeatures, {
    minimumLevel: () => minimumLevel,
    subscriptions,
    settingsChanged,
  });
  return session;
}
