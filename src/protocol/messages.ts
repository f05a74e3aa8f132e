/**
 * The stdio contract between the control plane and the harness inside a runner
 * container: one JSON object per line, each validated by these schemas where it
 * arrives. Nothing else in the repository defines a message shape.
 *
 * harness → control plane: ready, log, progress, disconnect, call, result
 * control plane → harness: invoke, reply, cancel
 */
import { z } from 'zod';
import { ERROR_CODES } from './error-codes.js';

/** Version of this contract; the harness announces it in `ready`. */
export const PROTOCOL_VERSION = 1;

/** An invocation id: chosen by the control plane, unique per container. */
export const InvocationId = z.string().min(1).max(64);
/** A call id: chosen by the harness, unique within one invocation. */
export const CallId = z.number().int().nonnegative();

/** A failure as it travels over the wire: a stable code and a human message. */
export const WireError = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string().max(64 * 1024),
  /** 1-based position in the tool's code, for syntax and runtime errors. */
  line: z.number().int().positive().optional(),
  column: z.number().int().positive().optional(),
});
export type WireError = z.infer<typeof WireError>;

export const LogLevel = z.enum(['debug', 'info', 'log', 'warn', 'error']);
export type LogLevel = z.infer<typeof LogLevel>;

// ---------------------------------------------------------------------------
// Arguments of the brokered operations (sdk.http, sdk.db). The harness passes
// what tool code gave it; the broker trusts only what parses here.

/**
 * Request headers the broker sets itself, refused from tool code. `host` above
 * all: undici would send it as the Host line and the TLS server name while the
 * egress policy checks the URL's host, so an allowed address shared by many
 * sites (a CDN, a load balancer) would reach any of them. The rest frame the
 * message (length, encoding, connection handling), which is the broker's job.
 */
export const BROKER_SET_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
]);

const HeaderMap = z
  .record(z.string().min(1).max(256), z.string().max(16 * 1024))
  .superRefine((headers, context) => {
    for (const name of Object.keys(headers)) {
      if (BROKER_SET_HEADERS.has(name.toLowerCase())) {
        context.addIssue({
          code: 'custom',
          path: [name],
          message: `the ${name} header is set by the broker, not by tool code`,
        });
      }
    }
  });

export const HttpRequestArgs = z.object({
  method: z
    .string()
    .regex(/^[A-Za-z]{1,16}$/, 'method must be an HTTP method name')
    .transform((method) => method.toUpperCase())
    .default('GET'),
  url: z
    .string()
    .min(1)
    .max(8 * 1024),
  headers: HeaderMap.optional(),
  body: z.string().optional(),
  /** How `body` is written: text as UTF-8 (the default), or base64 of raw bytes (`fetch` with bytes). */
  bodyEncoding: z.enum(['utf8', 'base64']).optional(),
  /** How the response body comes back: decoded as UTF-8 text (the default), or base64 of its bytes. */
  responseEncoding: z.enum(['utf8', 'base64']).optional(),
});
export type HttpRequestArgs = z.infer<typeof HttpRequestArgs>;

export const HttpResponseValue = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  /** The URL that answered: the last one after redirects (`fetch`'s `response.url`). */
  url: z.string(),
  /** Whether a redirect was followed (`fetch`'s `response.redirected`). */
  redirected: z.boolean(),
});
export type HttpResponseValue = z.infer<typeof HttpResponseValue>;

export const DbConnection = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535).optional(),
  database: z.string().min(1).max(255),
  user: z.string().min(1).max(255),
  password: z.string().max(1024).optional(),
});
export type DbConnection = z.infer<typeof DbConnection>;

const DbTarget = z.object({
  type: z.enum(['pg', 'mysql']),
  connection: DbConnection,
});
export type DbTarget = z.infer<typeof DbTarget>;

const Row = z.record(z.string(), z.unknown());

export const DbSelectArgs = DbTarget.extend({ table: z.string(), where: Row.default({}) });
export const DbInsertArgs = DbTarget.extend({ table: z.string(), row: Row });
export const DbQueryArgs = DbTarget.extend({
  sql: z
    .string()
    .min(1)
    .max(1024 * 1024),
  values: z.array(z.unknown()).default([]),
});
export type DbSelectArgs = z.infer<typeof DbSelectArgs>;
export type DbInsertArgs = z.infer<typeof DbInsertArgs>;
export type DbQueryArgs = z.infer<typeof DbQueryArgs>;

// ---------------------------------------------------------------------------
// Requests to the calling MCP client (sdk.elicit, sdk.sample). Only their outer
// shape is checked here; the control plane checks the rest against the MCP
// schema of the request it sends.

const LONG_TEXT = 256 * 1024;

/**
 * The name a tool gives one request to its client (`{key}` of sdk.elicit,
 * sdk.sample, sdk.roots): in the modern era it keys the request in the
 * call's `inputRequests`, so a tool that retries the same question keeps
 * its key. Absent: the control plane makes one up.
 */
export const InputKey = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a key is 1–64 of A–Z a–z 0–9 _ . -');

export const ElicitArgs = z.object({
  message: z.string().min(1).max(LONG_TEXT),
  requestedSchema: z.record(z.string(), z.unknown()),
  key: InputKey.optional(),
});
export type ElicitArgs = z.infer<typeof ElicitArgs>;

/** The request as MCP's `sampling/createMessage` takes it, with `key` beside its fields. */
export const SampleArgs = z.looseObject({
  messages: z.array(z.unknown()).min(1).max(1024),
  maxTokens: z.number().int().positive(),
  key: InputKey.optional(),
});
export type SampleArgs = z.infer<typeof SampleArgs>;

/** `sdk.roots()`: the client's roots (`roots/list`); only a key to give. */
export const RootsArgs = z.strictObject({ key: InputKey.optional() });
export type RootsArgs = z.infer<typeof RootsArgs>;

/** The operations the broker performs, with the schema of each one's arguments. */
export const BROKER_OPERATIONS = {
  http: HttpRequestArgs,
  'db.select': DbSelectArgs,
  'db.insert': DbInsertArgs,
  'db.query': DbQueryArgs,
} as const;
export type BrokerOperation = keyof typeof BROKER_OPERATIONS;

/** Requests the control plane forwards to the MCP client that made the call. */
export const CLIENT_OPERATIONS = {
  'client.elicit': ElicitArgs,
  'client.sample': SampleArgs,
  'client.roots': RootsArgs,
} as const;
export type ClientOperation = keyof typeof CLIENT_OPERATIONS;

/** Every operation a `call` may name: the broker's and the client's. */
export const CALL_OPERATIONS = { ...BROKER_OPERATIONS, ...CLIENT_OPERATIONS } as const;
export type CallOperation = keyof typeof CALL_OPERATIONS;
export const CallOperation = z.enum(
  Object.keys(CALL_OPERATIONS) as [CallOperation, ...CallOperation[]],
);

// ---------------------------------------------------------------------------
// harness → control plane

export const ReadyMessage = z.object({
  type: z.literal('ready'),
  protocol: z.literal(PROTOCOL_VERSION),
  /** Node version inside the container, for diagnostics. */
  node: z.string().max(32),
});

export const LogMessage = z.object({
  type: z.literal('log'),
  invocation: InvocationId,
  level: LogLevel,
  text: z.string(),
});

/** `sdk.progress(...)`; sent only when the invoke said the caller asked for progress. */
export const ProgressMessage = z.object({
  type: z.literal('progress'),
  invocation: InvocationId,
  progress: z.number().finite(),
  total: z.number().finite().optional(),
  message: z.string().max(1024).optional(),
});

/**
 * `sdk.closeStream()`: the tool asks that the HTTP response carrying its call
 * end now while the call goes on, so a client that can resume (SEP-1699)
 * reconnects for the rest instead of holding a connection open through a long
 * wait. Advisory: the control plane ignores it for a caller that cannot
 * resume. The harness sends it at most once per invocation.
 */
export const DisconnectMessage = z.object({
  type: z.literal('disconnect'),
  invocation: InvocationId,
});

/**
 * The invocation now waits on nothing but its requests to the calling client
 * (sdk.elicit, sdk.sample, sdk.roots): no other call, no timer, no microtask
 * is left to run. Sent once each time it comes to that state, after the
 * `call` lines it waits on. A modern-era call answers `input_required` then;
 * the legacy era, whose requests are already on their way, ignores it.
 */
export const WaitingMessage = z.object({
  type: z.literal('waiting'),
  invocation: InvocationId,
});

/** A brokered request from tool code; `args` is checked per `op` by the broker. */
export const CallMessage = z.object({
  type: z.literal('call'),
  invocation: InvocationId,
  call: CallId,
  op: CallOperation,
  args: z.unknown(),
});

// ---------------------------------------------------------------------------
// Rich results: MCP content blocks a tool built with sdk.content.*.

/**
 * Standard base64 with padding (what MCP's `data` and `blob` fields hold).
 * Checked by a loop, not a regular expression: V8's regexp engine overflows
 * its stack on a repeated group over several megabytes.
 */
export const Base64 = z.string().refine(isBase64, 'must be base64');

export function isBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const end = text.length - padding;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    const alphanumeric =
      (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
    if (!alphanumeric && code !== 43 && code !== 47) return false;
  }
  return true;
}
export const MimeType = z
  .string()
  .regex(/^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/, 'must be a MIME type such as image/png')
  .max(256);
export const ResourceUri = z
  .string()
  .min(1)
  .max(8 * 1024)
  .regex(/^[A-Za-z][A-Za-z0-9+.-]*:/, 'must be an absolute URI');

export const ContentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), data: Base64, mimeType: MimeType }),
  z.object({ type: z.literal('audio'), data: Base64, mimeType: MimeType }),
  z.object({
    type: z.literal('resource'),
    resource: z.union([
      z.object({ uri: ResourceUri, mimeType: MimeType.optional(), text: z.string() }),
      z.object({ uri: ResourceUri, mimeType: MimeType.optional(), blob: Base64 }),
    ]),
  }),
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

/** V8 heap in use when the result was sent, in bytes: the pool retires a container whose heap stays high. */
const HeapUsedBytes = z.number().int().nonnegative().optional();

export const ResultMessage = z.discriminatedUnion('ok', [
  z.object({
    type: z.literal('result'),
    invocation: InvocationId,
    ok: z.literal(true),
    /** The tool's return value, JSON-serialisable; `undefined` became `null`. */
    value: z.unknown(),
    /** Set instead of a meaningful `value` (then null) when the tool returned sdk.content blocks. */
    content: z.array(ContentBlock).min(1).max(1024).optional(),
    heap: HeapUsedBytes,
  }),
  z.object({
    type: z.literal('result'),
    invocation: InvocationId,
    ok: z.literal(false),
    error: WireError,
    heap: HeapUsedBytes,
  }),
]);

/**
 * Discriminated by `type`: a plain union would try each shape in turn and
 * build the issues of every miss (a result, the last and commonest, took
 * 5.6 µs to check instead of 1.2 µs).
 */
export const HarnessMessage = z.discriminatedUnion('type', [
  ReadyMessage,
  LogMessage,
  ProgressMessage,
  DisconnectMessage,
  WaitingMessage,
  CallMessage,
  ResultMessage,
]);
export type ReadyMessage = z.infer<typeof ReadyMessage>;
export type LogMessage = z.infer<typeof LogMessage>;
export type ProgressMessage = z.infer<typeof ProgressMessage>;
export type DisconnectMessage = z.infer<typeof DisconnectMessage>;
export type CallMessage = z.infer<typeof CallMessage>;
export type WaitingMessage = z.infer<typeof WaitingMessage>;
export type ResultMessage = z.infer<typeof ResultMessage>;
export type HarnessMessage = z.infer<typeof HarnessMessage>;

// ---------------------------------------------------------------------------
// control plane → harness

/**
 * What every console line costs against `maxLogBytes` at least, in bytes: an
 * empty line is not free to carry, store and show, so a loop of
 * `console.log('')` runs out of budget like any other flood.
 */
export const LOG_ENTRY_MIN_BYTES = 64;

export const InvokeLimits = z.object({
  /** Largest serialised result, in bytes. */
  maxResultBytes: z.number().int().positive(),
  /**
   * Largest total of log text per invocation, in bytes, each line charged at
   * least LOG_ENTRY_MIN_BYTES; the rest is dropped with a notice.
   */
  maxLogBytes: z.number().int().positive(),
  /** Largest number of console lines per invocation; the rest is dropped with a notice. */
  maxLogEntries: z.number().int().positive(),
});
export type InvokeLimits = z.infer<typeof InvokeLimits>;

/**
 * What the calling MCP client declared: its protocol version, capabilities
 * and name (the initialize of its session, or the `_meta` of its request).
 * The client's own words, passed to its own call: checked for shape only.
 */
export const CallingClientInfo = z.object({
  protocolVersion: z.string().max(64),
  era: z.enum(['legacy', 'modern']),
  capabilities: z.record(z.string(), z.unknown()),
  info: z.looseObject({ name: z.string(), version: z.string() }).optional(),
});
export type CallingClientInfo = z.infer<typeof CallingClientInfo>;

/**
 * Who made the call, as `sdk.caller` shows it: the kind of credential; for
 * an OAuth token its subject, client, granted scopes and the claims the
 * server lets tools see; for an API key its id and label. Never a token or a
 * key's value. Established by the control plane, not the client.
 */
export const CallerView = z.object({
  kind: z.enum(['oauth', 'apikey', 'anonymous', 'admin']),
  subject: z.string().max(1024).optional(),
  clientId: z.string().max(1024).optional(),
  scopes: z.array(z.string().max(1024)).max(256),
  claims: z.record(z.string(), z.unknown()),
  key: z.object({ id: z.string().max(128), label: z.string().max(256) }).optional(),
});
export type CallerView = z.infer<typeof CallerView>;

export const InvokeMessage = z.object({
  type: z.literal('invoke'),
  invocation: InvocationId,
  /** Body of an async function; `params`, `env`, `console` and `sdk` are in scope. */
  code: z.string().max(1024 * 1024),
  params: z.record(z.string(), z.unknown()),
  /** Only the secrets the tool lists, by name. */
  env: z.record(z.string(), z.string()),
  timeoutMs: z.number().int().positive(),
  limits: InvokeLimits,
  /** True when the caller sent a progress token: only then does `sdk.progress` send anything. */
  progress: z.boolean().optional(),
  /** The MCP client that made the call, as `sdk.client` shows it; absent in a test run. */
  client: CallingClientInfo.optional(),
  /** Who made the call, as `sdk.caller` shows it. */
  caller: CallerView.optional(),
});

export const ReplyMessage = z.discriminatedUnion('ok', [
  z.object({
    type: z.literal('reply'),
    invocation: InvocationId,
    call: CallId,
    ok: z.literal(true),
    value: z.unknown(),
  }),
  z.object({
    type: z.literal('reply'),
    invocation: InvocationId,
    call: CallId,
    ok: z.literal(false),
    error: WireError,
  }),
]);

export const CancelMessage = z.object({
  type: z.literal('cancel'),
  invocation: InvocationId,
});

export const ControlMessage = z.discriminatedUnion('type', [
  InvokeMessage,
  ReplyMessage,
  CancelMessage,
]);
export type InvokeMessage = z.infer<typeof InvokeMessage>;
export type ReplyMessage = z.infer<typeof ReplyMessage>;
export type CancelMessage = z.infer<typeof CancelMessage>;
export type ControlMessage = z.infer<typeof ControlMessage>;
