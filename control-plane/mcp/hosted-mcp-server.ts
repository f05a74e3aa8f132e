/**
 * The MCP server of a hosted server, one handler set for both protocol eras:
 * the official SDK's `Server` with `tools/list` (paginated by count and bytes,
 * pagination.ts) and `tools/call` answered from the in-memory configuration,
 * prompts, resources and completions (entry-handlers.ts). The SDK validates
 * each request and encodes each result for the era its instance serves.
 *
 * - **Legacy era** (2025-11-25 and earlier): one instance per session, bound
 *   to its era by `initialize`; the session's log level (`logging/setLevel`)
 *   and resource subscriptions; a call's requests to its client go out at
 *   once, on the call's own response (calling-client.ts).
 * - **Modern era** (2026-07-28): one instance per hosted server, serving
 *   every modern request to it (modern-transport.ts): the caller, log level
 *   and capabilities are each request's own; a call that waits on its client
 *   answers `input_required` (input-rounds.ts); lists and reads carry cache
 *   hints; `server/discover` answers what the server offers.
 *
 * `logging/setLevel` is answered here rather than by the SDK's built-in
 * handler: the SDK keeps the level privately and filters only
 * `sendLoggingMessage`, which sends outside any request — a tool's log lines
 * must travel on its call's own response, so the filter is ours.
 */
import {
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CacheHint,
  type LoggingLevel,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import type { EntryRunner, InvocableTool } from '../invocation/index.js';
import { publishedInputSchema } from '../invocation/index.js';
import type { LogEntry } from '../sandbox/index.js';
import type { CallRunner } from './call-runner.js';
import { callingClientFor } from './calling-client.js';
import { FORM_ANSWERS } from './elicitation-answers.js';
import {
  addEntryHandlers,
  cursorOf,
  entryCapabilities,
  type EntryHandlerContext,
} from './entry-handlers.js';
import { isLevelSent, LEVEL_OF_CONSOLE } from './log-levels.js';
import { paginate } from './pagination.js';
import { toProtocolError } from './protocol-error.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import type { SessionSettings } from './session-state.js';
import { callTool, type ToolCallContext } from './tool-call.js';

/** The modern revision every hosted server speaks, beside the legacy ones. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** What `server/discover` and -32022 name: the modern revision, then the legacy ones. */
export const SUPPORTED_VERSIONS: readonly string[] = [
  MODERN_PROTOCOL_VERSION,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

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

/** How the modern instance of a server runs calls and hints caches (input-rounds.ts, settings). */
export interface ModernServerParts {
  runner: CallRunner;
  /** `ttlMs`/`cacheScope` of lists, reads and `server/discover`. */
  cacheHint: CacheHint;
  /** Opens a `requestState` (throws when it is not one of ours, altered or expired). */
  openRequestState(state: string): unknown;
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
 * Builds the SDK server of one legacy session. Prompts, resources and
 * completions are announced (and answered) only when the server has some
 * now: MCP capabilities are fixed for a session — a session restored on
 * another replica passes the `features` it was opened with.
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
      supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      jsonSchemaValidator: FORM_ANSWERS,
      inputRequired: { legacyShim: false },
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

  server.setRequestHandler('logging/setLevel', async (request) => {
    minimumLevel = request.params.level;
    await settingsChanged();
    return {};
  });

  // The legacy era's requests to the client go out at once; log lines at the session's level.
  const runner: CallRunner = {
    run: (call, start) =>
      start({
        client: callingClientFor(server, call.ctx),
        onLog: logForwarder(call.ctx, call.logger, () => minimumLevel),
        signal: call.ctx.mcpReq.signal,
      }),
  };
  addHandlers(server, context, runner);
  addEntryHandlers(server, context, entryFeatures, runner, { subscriptions, settingsChanged });
  return session;
}

/**
 * Builds the modern-era SDK server of a hosted server: every modern request
 * to it is served by this one instance (the requests share nothing), with
 * the capabilities the server's entries give it now (rebuilt when they
 * change: modern-servers.ts).
 */
export function createModernMcpServer(
  context: HostedServerContext,
  modern: ModernServerParts,
): Server {
  const features = entryCapabilities(context);
  const hint = modern.cacheHint;
  const server = new Server(
    { name: `mcphost/${context.subdomain}`, version: context.version },
    {
      capabilities: { tools: { listChanged: true }, logging: {}, ...features },
      supportedProtocolVersions: [...SUPPORTED_VERSIONS],
      jsonSchemaValidator: FORM_ANSWERS,
      inputRequired: { legacyShim: false },
      cacheHints: {
        'server/discover': hint,
        'tools/list': hint,
        'prompts/list': hint,
        'resources/list': hint,
        'resources/templates/list': hint,
        'resources/read': hint,
      },
      requestState: { verify: (state) => modern.openRequestState(state) },
    },
  );
  addHandlers(server, context, modern.runner);
  addEntryHandlers(server, context, features, modern.runner, undefined);
  return server;
}

/** `tools/list` and `tools/call`, alike in both eras. */
function addHandlers(server: Server, context: HostedServerContext, runner: CallRunner): void {
  server.setRequestHandler('tools/list', async (request) => {
    try {
      const page = paginate(
        context.catalog.tools(context.subdomain),
        request.params?.cursor,
        describe,
      );
      return { tools: page.items, ...cursorOf(page.nextCursor) };
    } catch (error) {
      throw toProtocolError(error);
    }
  });
  server.setRequestHandler('tools/call', (request, ctx) => callTool(context, request, ctx, runner));
}

/**
 * Sends each console line of running code as a logging notification (at or
 * above `minimumLevel`), related to the request so it travels on the
 * request's own response.
 */
export function logForwarder(
  ctx: ServerContext,
  logger: string,
  minimumLevel: () => LoggingLevel,
): (entry: LogEntry) => void {
  return (entry) => {
    const level = LEVEL_OF_CONSOLE[entry.level];
    if (!isLevelSent(level, minimumLevel())) return;
    void ctx.mcpReq
      .notify({ method: 'notifications/message', params: { level, logger, data: entry.text } })
      .catch(() => undefined);
  };
}
