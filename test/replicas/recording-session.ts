/**
 * An official-SDK client session that offers elicitation and records what
 * the server sent it outside of results: log lines, elicitation requests
 * (each answered with `{name: 'Ada'}`), `tools/list_changed` notifications —
 * and when its GET stream opened, since notifications unrelated to a request
 * travel only on that stream. (test/support/sdk-session.ts builds a client
 * without capabilities, so it cannot be asked for input.)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';

/** The content every elicitation is accepted with. */
export const ELICITATION_ANSWER = { name: 'Ada' };

export interface RecordingSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Settles once the session's GET stream is open. */
  streamOpen: Promise<void>;
  /** `notifications/message` params, in arrival order. */
  logLines: LoggingMessageNotification['params'][];
  /** The message of each elicitation request. */
  elicitations: string[];
  /** `notifications/tools/list_changed` received. */
  listChanged: number;
}

/** Connects to `url` with `send` as the transport's fetch; closes the client when connecting fails. */
export async function openRecordingSession(
  url: URL,
  send: typeof fetch,
): Promise<RecordingSession> {
  const client = new Client(
    { name: 'mcphost-replicas-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  let opened!: () => void;
  const watching: typeof fetch = async (input, init) => {
    const response = await send(input, init);
    const isStream = response.headers.get('content-type')?.startsWith('text/event-stream');
    if (init?.method === 'GET' && response.ok && isStream) opened();
    return response;
  };
  const session: RecordingSession = {
    client,
    transport: new StreamableHTTPClientTransport(url, { fetch: watching }),
    streamOpen: new Promise<void>((resolve) => (opened = resolve)),
    logLines: [],
    elicitations: [],
    listChanged: 0,
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    session.logLines.push(notification.params);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    session.listChanged += 1;
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    session.elicitations.push(request.params.message);
    return { action: 'accept', content: ELICITATION_ANSWER };
  });
  try {
    await client.connect(session.transport);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return session;
}
