/**
 * The store's domain objects: zod schemas for everything that enters the store
 * (the admin API may reuse them to parse request bodies) and the record types
 * the store hands out. Timestamps are ISO 8601 strings in UTC.
 */
import { z } from 'zod';
import { toolJsonSchema } from './tool-json-schema.js';

/** A DNS label: lower-case letters, digits and inner hyphens, 1–63 characters. */
export const subdomainSchema = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'a subdomain is 1–63 lower-case letters, digits or inner hyphens',
  );

/** An MCP tool name: 1–128 of A–Z a–z 0–9 _ - . (MCP specification). */
export const toolNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a tool name is 1–128 of A–Z a–z 0–9 _ - .');

/** A secret name, as an `env` key: upper-case letters, digits and underscores, not starting with a digit. */
export const secretNameSchema = z
  .string()
  .regex(
    /^[A-Z_][A-Z0-9_]{0,127}$/,
    'a secret name is upper-case letters, digits and _, not starting with a digit',
  );

/** A secret value: any string up to 64 KiB characters. */
export const secretValueSchema = z
  .string()
  .max(65_536, 'a secret value is at most 65536 characters');

/** JSON types a declared tool parameter may take (they become the tool's inputSchema). */
export const parameterTypeSchema = z.enum([
  'string',
  'number',
  'integer',
  'boolean',
  'object',
  'array',
]);

/** One declared input of a tool. */
export const toolParameterSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/, 'a parameter name is a JavaScript identifier')
    // `params` is a plain object built by assignment: a `__proto__` parameter would
    // vanish (or replace its prototype) instead of reaching the tool.
    .refine(
      (name) => !['__proto__', 'constructor', 'prototype'].includes(name),
      'a parameter may not be named __proto__, constructor or prototype',
    ),
  type: parameterTypeSchema,
  required: z.boolean(),
  description: z.string().max(4096).optional(),
});
export type ToolParameter = z.infer<typeof toolParameterSchema>;

/**
 * The widest limits any record may hold. What a save may set is narrower: the
 * host's ceilings (TOOL_MAX_MEMORY_MB, TOOL_MAX_TIMEOUT_MS) and, for a tool,
 * prompt or resource, its server's limits, checked by the admin API.
 */
export const TOOL_LIMIT_BOUNDS = Object.freeze({ memoryMb: 65_536, timeoutMs: 3_600_000 });

/**
 * Resource limits of a server, tool, prompt or resource; absent fields fall
 * back to the server's, then the service defaults. A server's limits are also
 * the ceiling of its tools', prompts' and resources' (which may only lower them).
 */
export const toolLimitsSchema = z.strictObject({
  /** Wall-clock limit of one invocation, in milliseconds. */
  timeoutMs: z.number().int().positive().max(TOOL_LIMIT_BOUNDS.timeoutMs).optional(),
  /** Memory limit of the tool's container, in MiB (16 is the least a runner starts in). */
  memoryMb: z
    .number()
    .int()
    .min(16, 'memoryMb must be at least 16 MiB')
    .max(TOOL_LIMIT_BOUNDS.memoryMb)
    .optional(),
});
export type ToolLimits = z.infer<typeof toolLimitsSchema>;

/**
 * Hints about a tool's behaviour for clients (MCP `ToolAnnotations`); hints
 * only, never enforced. Absent ones take MCP's defaults (read-only false,
 * destructive true, idempotent false, open world true).
 */
export const toolAnnotationsSchema = z.strictObject({
  /** A human-readable title (MCP allows it here as well as on the tool). */
  title: z.string().min(1).max(256).optional(),
  /** The tool does not modify its environment. */
  readOnlyHint: z.boolean().optional(),
  /** Its modifications may destroy something (meaningful when not read-only). */
  destructiveHint: z.boolean().optional(),
  /** Calling it again with the same arguments has no further effect (when not read-only). */
  idempotentHint: z.boolean().optional(),
  /** It reaches entities outside a closed domain (the web, say). */
  openWorldHint: z.boolean().optional(),
});
export type ToolAnnotations = z.infer<typeof toolAnnotationsSchema>;

/** What an operator saves as a tool (one version of it). */
export const toolDefinitionSchema = z
  .strictObject({
    /** A human-readable name for clients to show; the tool name stays the identifier. */
    title: z.string().min(1).max(256).optional(),
    description: z.string().max(16_384),
    code: z.string().max(1_048_576),
    /** Declared inputs; they generate the inputSchema. Not beside `inputSchema`. */
    parameters: z.array(toolParameterSchema).max(128).default([]),
    /** The inputs as a full JSON Schema 2020-12 object schema, instead of `parameters`. */
    inputSchema: toolJsonSchema('inputSchema').optional(),
    /** What an object result must match; it then becomes `structuredContent`. */
    outputSchema: toolJsonSchema('outputSchema').optional(),
    annotations: toolAnnotationsSchema.optional(),
    secrets: z.array(secretNameSchema).max(128).default([]),
    limits: toolLimitsSchema.default({}),
    /** Single-use containers: every invocation gets a fresh one. Default false. */
    strict: z.boolean().default(false),
  })
  .superRefine((definition, context) => {
    if (definition.inputSchema !== undefined && definition.parameters.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['inputSchema'],
        message:
          'a tool declares its inputs either as parameters or as an inputSchema, not both (leave parameters empty)',
      });
    }
    const seen = new Set<string>();
    for (const parameter of definition.parameters) {
      if (seen.has(parameter.name)) {
        context.addIssue({
          code: 'custom',
          message: `parameter "${parameter.name}" is declared twice`,
        });
      }
      seen.add(parameter.name);
    }
  });
/** A tool definition as accepted (defaults optional). */
export type ToolDefinitionInput = z.input<typeof toolDefinitionSchema>;
/** A tool definition after validation (defaults filled in). */
export type ToolDefinition = z.output<typeof toolDefinitionSchema>;

/** A saved tool: its current definition and version. */
export interface ToolRecord extends ToolDefinition {
  readonly subdomain: string;
  readonly name: string;
  /** Starts at 1 and grows on every save (rollbacks included). */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One saved version of a tool, as it was saved. */
export interface ToolVersionRecord extends ToolDefinition {
  readonly subdomain: string;
  readonly name: string;
  readonly version: number;
  readonly savedAt: string;
}

/** The validated snapshot of an Authorization Server's metadata (RFC 8414); other fields are kept. */
export const oauthMetadataSchema = z.looseObject({
  issuer: z.string().min(1),
  jwks_uri: z.string().min(1),
  authorization_endpoint: z.string().optional(),
  token_endpoint: z.string().optional(),
  registration_endpoint: z.string().optional(),
});
export type OAuthMetadataSnapshot = z.infer<typeof oauthMetadataSchema>;

export const securityModeSchema = z.enum(['none', 'oauth2', 'apikey']);
export type SecurityMode = z.infer<typeof securityModeSchema>;

/** Whose tools share a container: the server's (default) or each tool's own. */
export const isolationSchema = z.enum(['server', 'tool']);
export type Isolation = z.infer<typeof isolationSchema>;

/** The OCI runtime of a server's containers: runc (default) or gVisor's runsc. */
export const containerRuntimeSchema = z.enum(['runc', 'runsc']);
export type ContainerRuntime = z.infer<typeof containerRuntimeSchema>;

/**
 * One egress allow entry: an IP, CIDR or host name, optionally with `:port`
 * (IPv6 in brackets: `[fd00::1]:443`, `[fd00::/8]:443`). The admin API parses
 * it with the broker's own parser (one message per bad entry); here only its
 * size is checked.
 */
export const egressAllowEntrySchema = z.string().min(1).max(256);

/**
 * A browser origin allowed to call a server's `/mcp`: `scheme://host[:port]`
 * with no path, stored as browsers send it (lower case, default port left out:
 * `HTTPS://App.Example.com:443` is kept as `https://app.example.com`).
 */
export const browserOriginSchema = z
  .string()
  .max(512)
  .refine((value) => {
    if (!URL.canParse(value) || value.endsWith('/')) return false;
    const url = new URL(value);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.pathname === '/' &&
      url.search === '' &&
      url.hash === '' &&
      url.username === '' &&
      url.password === ''
    );
  }, 'an origin is http(s)://host[:port] with no path, query or user, e.g. https://app.example.com')
  .transform((value) => new URL(value).origin);

/** Requests per caller per minute with a burst allowance (token bucket). */
export const rateLimitSchema = z.strictObject({
  /** Sustained requests per minute per caller. */
  perMinute: z.number().int().min(1).max(1_000_000),
  /** Requests a caller may make at once before the rate applies. */
  burst: z.number().int().min(1).max(100_000),
});
export type RateLimit = z.infer<typeof rateLimitSchema>;

/** The most claim names a server lets its code see. */
export const MAX_CALLER_CLAIMS = 32;

/** A claim name of an OAuth access token (`sub`, `email`, `https://example.com/roles`). */
export const callerClaimNameSchema = z
  .string()
  .min(1)
  .max(256)
  // JSON keeps it as a key, but schemas on the way (and many readers) drop it: refused, not lost.
  .refine((name) => name !== '__proto__', 'a claim name cannot be __proto__');

/** How a server shares this host with other tenants; stored as one JSON column. */
export const serverTenancySchema = z.strictObject({
  /** `server`: one container serves all the server's tools; `tool`: a container per tool. */
  isolation: isolationSchema,
  /** OCI runtime of the server's containers. */
  runtime: containerRuntimeSchema,
  /** Most containers this server may hold at once; null = its fair share of the budget. */
  maxContainers: z.number().int().min(1).max(10_000).nullable(),
  /** Private hosts/CIDRs (with optional ports) this server's tools may reach besides public addresses. */
  egressAllow: z.array(egressAllowEntrySchema).max(64),
  /** Browser origins allowed to call `/mcp`; requests without Origin are unaffected. */
  allowedOrigins: z.array(browserOriginSchema).max(64),
  /** Per-caller rate limit of `/mcp`; null = the service default (`RATE_LIMIT_*`). */
  rateLimit: rateLimitSchema.nullable(),
  /**
   * How long a modern-era client may cache this server's lists, resource
   * reads and `server/discover` (`ttlMs`), in ms; null = the service default
   * (`MCP_CACHE_TTL_MS`).
   */
  cacheTtlMs: z.number().int().min(0).max(86_400_000).nullable(),
  /**
   * The claims of a caller's verified OAuth token that the server's code may
   * read in `sdk.caller.claims` (the token itself never reaches it). Kept
   * here, with the settings stored as one JSON column.
   */
  callerClaims: z.array(callerClaimNameSchema).max(MAX_CALLER_CLAIMS),
});
export type ServerTenancy = z.infer<typeof serverTenancySchema>;

/** Tenancy of a new server, and of servers saved before these settings existed. */
export const DEFAULT_SERVER_TENANCY: Readonly<ServerTenancy> = Object.freeze({
  isolation: 'server',
  runtime: 'runc',
  maxContainers: null,
  egressAllow: [],
  allowedOrigins: [],
  rateLimit: null,
  cacheTtlMs: null,
  callerClaims: Object.freeze(['sub', 'iss', 'aud', 'scope', 'email', 'name']) as string[],
});

/** Settings of a hosted server that an operator may change. */
export const serverSettingsSchema = serverTenancySchema.extend({
  name: z.string().max(256),
  securityMode: securityModeSchema,
  oauthServerUrl: z.string().max(2048).nullable(),
  oauthMetadata: oauthMetadataSchema.nullable(),
  /** Expected `aud` when it differs from the resource URL; null means the resource URL. */
  oauthAudience: z.string().max(2048).nullable(),
  oauthRequiredScopes: z.array(z.string().min(1).max(256)).max(64),
  /** Limits of the server's tools that set none of their own, and the most any of them may set. */
  limits: toolLimitsSchema,
  active: z.boolean(),
});
export type ServerSettings = z.infer<typeof serverSettingsSchema>;

/** A patch of server settings; absent fields stay as they are. */
export const serverSettingsPatchSchema = serverSettingsSchema.partial();
export type ServerSettingsPatch = z.infer<typeof serverSettingsPatchSchema>;

/** A hosted server. */
export interface ServerRecord extends ServerSettings {
  readonly id: string;
  readonly subdomain: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Input of `createServer`. */
export const newServerSchema = z.strictObject({
  subdomain: subdomainSchema,
  name: z.string().max(256).optional(),
});
export type NewServer = z.infer<typeof newServerSchema>;

/** A secret as listed: never its value. */
export interface SecretSummary {
  readonly name: string;
  readonly updatedAt: string;
}

/** Warm-pool sizing of one tool. */
export const poolSizingSchema = z
  .strictObject({
    /** Containers kept ready, at least 0. */
    minWarm: z.number().int().min(0).max(1000),
    /** Upper bound of containers of this tool, at least 1. */
    maxSize: z.number().int().min(1).max(1000),
  })
  .refine((sizing) => sizing.minWarm <= sizing.maxSize, 'minWarm must not exceed maxSize');
export type PoolSizing = z.infer<typeof poolSizingSchema>;

/** Warm-pool sizing stored for one tool. */
export interface PoolSettingsRecord extends PoolSizing {
  readonly subdomain: string;
  readonly tool: string;
  readonly updatedAt: string;
}

/** One captured console line of an invocation. */
export const invocationLogLineSchema = z.object({
  level: z.string(),
  text: z.string(),
});

/** What kind of code an invocation ran. */
export const codeKindSchema = z.enum(['tool', 'prompt', 'resource', 'completion']);
export type CodeKind = z.infer<typeof codeKindSchema>;

/** One row of the invocation log. */
export const invocationRecordSchema = z.object({
  id: z.string().min(1).max(128),
  /** When the invocation started (ISO 8601). */
  at: z.iso.datetime({ offset: true }),
  server: z.string().max(128),
  /** What ran: a tool, or a prompt's, resource template's or completion's code. */
  kind: codeKindSchema.default('tool'),
  /** The tool's, prompt's or resource's name. */
  tool: z.string().max(128),
  version: z.number().int().min(0),
  durationMs: z.number().min(0),
  ok: z.boolean(),
  errorCode: z.string().max(128).nullable().default(null),
  errorMessage: z.string().nullable().default(null),
  logs: z.array(invocationLogLineSchema).default([]),
  /** Who called: e.g. `{kind: 'admin'}` or `{kind: 'oauth', subject}`; never a token. */
  caller: z.unknown().default(null),
  requestId: z.string().max(256).nullable().default(null),
  /** The client's address (behind TRUSTED_PROXIES, the one they name). */
  client: z.string().max(64).nullable().default(null),
  /** The MCP era of the request (2025-11-25 and earlier: legacy; 2026-07-28: modern); null for a test run. */
  era: z.enum(['legacy', 'modern']).nullable().default(null),
  /** Times the call waited on its client for input (modern: input_required rounds; legacy: requests). */
  inputRounds: z.number().int().min(0).default(0),
});
/** An invocation log entry as accepted (defaults optional). */
export type InvocationRecordInput = z.input<typeof invocationRecordSchema>;
/** An invocation log entry as stored and listed. */
export type InvocationRecord = z.output<typeof invocationRecordSchema>;

/**
 * Entries this process parsed with invocationRecordSchema: what parsing made,
 * never what a caller handed in. The invocation log parses each entry when it
 * is appended (a bad one is the caller's bug, thrown at once) and the store
 * parses what it is given (its boundary): an entry the log parsed is not
 * parsed a second time on its way into the store.
 */
const PARSED_INVOCATIONS = new WeakSet<InvocationRecord>();

/** Parses an invocation entry, or passes one this process parsed already. */
export function parseInvocationRecord(
  entry: InvocationRecordInput,
): z.ZodSafeParseResult<InvocationRecord> {
  if (PARSED_INVOCATIONS.has(entry as InvocationRecord)) {
    return { success: true, data: entry as InvocationRecord };
  }
  const parsed = invocationRecordSchema.safeParse(entry);
  if (parsed.success) PARSED_INVOCATIONS.add(parsed.data);
  return parsed;
}

/** Filter of `listInvocations`; `limit` defaults to 100, at most 1000. */
export const invocationQuerySchema = z.strictObject({
  server: z.string().optional(),
  kind: codeKindSchema.optional(),
  tool: z.string().optional(),
  limit: z.number().int().min(1).max(1000).default(100),
});
export type InvocationQuery = z.input<typeof invocationQuerySchema>;
