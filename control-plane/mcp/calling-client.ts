/**
 * The calling client of one call in the legacy era (MCP 2025-11-25 and
 * earlier), as tool code reaches it: progress notifications when the call
 * carried a progress token, the end of the call's response
 * (`sdk.closeStream()`), and elicitation, sampling and roots requests sent at
 * once on the call's own response (related to its request id). The SDK's
 * `Server` checks the answer of a form elicitation against the form. The
 * modern era's client is the input exchange (input-exchange.ts).
 */
import {
  CreateMessageRequestParamsSchema,
  ElicitRequestFormParamsSchema,
} from '@modelcontextprotocol/core';
import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { CallingClientInfo, ClientOperation } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { SDK_NAME_OF, type CallingClient } from '../invocation/index.js';
import { describeProblems } from '../validation-problems.js';
import { restrictedFormRequest } from './elicitation-answers.js';
import { StreamableHttpTransport } from './streamable-http-transport.js';

/**
 * The SDK times a request out after 60 s by default; a person answering a form
 * may take longer. The invocation's own deadline ends the wait instead: its
 * signal aborts the request when the tool's time is up.
 */
const CLIENT_REQUEST_TIMEOUT_MS = 2 ** 31 - 1;

/** The client of one call of a session (its SDK server knows the client's capabilities). */
export function callingClientFor(server: Server, ctx: ServerContext): CallingClient {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const transport = server.transport;
  const session = transport instanceof StreamableHttpTransport ? transport : undefined;
  let asked = 0;
  const client: CallingClient = {
    info: clientInfoOf(server, session),
    request: (operation, args, signal) => {
      asked += 1;
      return ask(server, ctx, operation, args, signal);
    },
    rounds: () => asked,
  };
  // `sdk.closeStream()`: the call's response ends and the client resumes it (or, for a
  // client that cannot, nothing happens).
  if (session !== undefined) client.closeStream = () => session.closeStream(ctx.mcpReq.id);
  if (progressToken !== undefined) {
    client.progress = (update) => {
      void ctx.mcpReq
        .notify({ method: 'notifications/progress', params: { progressToken, ...update } })
        .catch(() => undefined);
    };
  }
  return client;
}

/** What the session's client declared at initialize, as `sdk.client` shows it. */
function clientInfoOf(
  server: Server,
  session: StreamableHttpTransport | undefined,
): CallingClientInfo {
  const info = server.getClientVersion();
  return {
    protocolVersion: session?.protocolVersion ?? 'unknown',
    era: 'legacy',
    capabilities: (server.getClientCapabilities() ?? {}) as Record<string, unknown>,
    ...(info === undefined ? {} : { info }),
  };
}

async function ask(
  server: Server,
  ctx: ServerContext,
  operation: ClientOperation,
  args: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  const options = { relatedRequestId: ctx.mcpReq.id, signal, timeout: CLIENT_REQUEST_TIMEOUT_MS };
  const capabilities = server.getClientCapabilities();
  const name = SDK_NAME_OF[operation];
  // The key names a request in a modern call's input round; here requests go out one by one.
  const { key: _key, ...request } = asObject(args);
  try {
    switch (operation) {
      case 'client.elicit': {
        if (capabilities?.elicitation === undefined) throw unsupported(name, 'elicitation');
        const params = restrictedFormRequest(
          name,
          checked(name, ElicitRequestFormParamsSchema, { mode: 'form', ...request }),
        );
        return await server.elicitInput(params, options);
      }
      case 'client.roots':
        if (capabilities?.roots === undefined) throw unsupported(name, 'roots');
        return await server.listRoots(undefined, options);
      case 'client.sample': {
        if (capabilities?.sampling === undefined) throw unsupported(name, 'sampling');
        const params = checked(name, CreateMessageRequestParamsSchema, request);
        return await server.createMessage(params, options);
      }
    }
  } catch (error) {
    if (error instanceof McphostError) throw error;
    // A ProtocolError is the client's error answer, or the SDK's refusal of its answer
    // (a form answer that does not match the requested schema); its message says which.
    const message = error instanceof Error ? error.message : String(error);
    const what = error instanceof ProtocolError ? 'failed' : 'could not be sent to the client';
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
 * schema does not know is dropped rather than forwarded — except at the top
 * of a form's `requestedSchema`, which the SDK's schema keeps whole: a form
 * goes through restrictedFormRequest (elicitation-answers.ts) as well.
 */
export function checked<S extends z.ZodType>(name: string, schema: S, args: unknown): z.infer<S> {
  const result = schema.safeParse(args);
  if (!result.success) {
    throw new McphostError('ERR_INVALID_ARGUMENT', `${name}: ${describeProblems(result.error)}`);
  }
  return result.data;
}

export function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
