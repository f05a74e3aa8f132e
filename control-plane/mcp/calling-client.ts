/**
 * The calling client of one `tools/call`, as tool code reaches it: progress
 * notifications when the call carried a progress token, the end of the
 * call's response (`sdk.closeStream()`), and elicitation and
 * sampling requests sent on the call's own response (related to its request
 * id), within the call. The SDK's `Server` checks the client's capabilities
 * and, for a form elicitation, the answer against the requested schema.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { z } from 'zod';
import {
  CreateMessageRequestParamsSchema,
  ElicitRequestFormParamsSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientOperation } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { SDK_NAME_OF, type CallingClient } from '../invocation/index.js';
import { describeProblems } from '../validation-problems.js';
import { StreamableHttpTransport } from './streamable-http-transport.js';
import type { HandlerExtra } from './tool-call.js';

/**
 * The SDK times a request out after 60 s by default; a person answering a form
 * may take longer. The invocation's own deadline ends the wait instead: its
 * signal aborts the request when the tool's time is up.
 */
const CLIENT_REQUEST_TIMEOUT_MS = 2 ** 31 - 1;

/** The client of one call (the session's SDK server knows its capabilities). */
export function callingClientFor(
  server: Server,
  request: { params?: { _meta?: { progressToken?: string | number } } },
  extra: HandlerExtra,
): CallingClient {
  const progressToken = request.params?._meta?.progressToken;
  const client: CallingClient = {
    request: (operation, args, signal) => ask(server, extra, operation, args, signal),
  };
  // `sdk.closeStream()`: the call's response ends and the client resumes it (or, for a
  // client that cannot, nothing happens).
  const transport = server.transport;
  if (transport instanceof StreamableHttpTransport) {
    client.closeStream = () => transport.closeStream(extra.requestId);
  }
  if (progressToken !== undefined) {
    client.progress = (update) => {
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, ...update },
        })
        .catch(() => undefined);
    };
  }
  return client;
}

async function ask(
  server: Server,
  extra: HandlerExtra,
  operation: ClientOperation,
  args: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  const options = { relatedRequestId: extra.requestId, signal, timeout: CLIENT_REQUEST_TIMEOUT_MS };
  const capabilities = server.getClientCapabilities();
  const name = SDK_NAME_OF[operation];
  try {
    if (operation === 'client.elicit') {
      if (capabilities?.elicitation?.form === undefined) throw unsupported(name, 'elicitation');
      const params = checked(name, ElicitRequestFormParamsSchema, {
        mode: 'form',
        ...asObject(args),
      });
      checkFormSize(name, params.requestedSchema);
      return await server.elicitInput(params, options);
    }
    if (capabilities?.sampling === undefined) throw unsupported(name, 'sampling');
    const params = checked(name, CreateMessageRequestParamsSchema, args);
    return await server.createMessage(params, options);
  } catch (error) {
    if (error instanceof McphostError) throw error;
    // An McpError is the client's error answer, or the SDK's refusal of its answer
    // (a form answer that does not match the requested schema); its message says which.
    const message = error instanceof Error ? error.message : String(error);
    const what = error instanceof McpError ? 'failed' : 'could not be sent to the client';
    throw new McphostError('ERR_CLIENT_FAILED', `${name} ${what}: ${message}`, {
      cause: error,
    });
  }
}

function unsupported(name: string, capability: string): McphostError {
  return new McphostError(
    'ERR_CLIENT_UNSUPPORTED',
    `${name}: the calling client does not offer ${capability} (it did not announce the capability when it connected)`,
  );
}

/**
 * The tool's arguments as the MCP schema of the request reads them. What the
 * schema does not know is dropped rather than forwarded: the SDK compiles the
 * requested schema to check the client's answer, and a tool must not get a
 * keyword of its choosing (a `pattern`, a `$ref`) compiled in the control plane.
 */
function checked<T>(name: string, schema: z.ZodType<T>, args: unknown): T {
  const result = schema.safeParse(args);
  if (!result.success) {
    throw new McphostError('ERR_INVALID_ARGUMENT', `${name}: ${describeProblems(result.error)}`);
  }
  return result.data;
}

/** A form a person fills in; bounded so that checking the answer stays cheap. */
const MAX_FORM_FIELDS = 64;
const MAX_FORM_SCHEMA_CHARACTERS = 64 * 1024;

function checkFormSize(name: string, schema: { properties: Record<string, unknown> }): void {
  const fields = Object.keys(schema.properties).length;
  if (fields > MAX_FORM_FIELDS) {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      `${name}: requestedSchema has ${fields} properties; a form may have at most ${MAX_FORM_FIELDS}`,
    );
  }
  const characters = JSON.stringify(schema).length;
  if (characters > MAX_FORM_SCHEMA_CHARACTERS) {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      `${name}: requestedSchema is ${characters} characters of JSON; at most ${MAX_FORM_SCHEMA_CHARACTERS}`,
    );
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
