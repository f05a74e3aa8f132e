/**
 * The admin API's request shapes. Domain shapes (subdomain, tool definition,
 * pool sizing…) live with the records in `store/records.ts`, so the API and
 * the store accept exactly the same things; what is API-only is here. The
 * OpenAPI document is generated from these same schemas.
 */
import { z } from 'zod';
import { ResourceUri } from '../../src/protocol/index.js';
import { parseEgressAllowEntry } from '../broker/index.js';
import {
  browserOriginSchema,
  callerClaimNameSchema,
  codeKindSchema,
  containerRuntimeSchema,
  egressAllowEntrySchema,
  isolationSchema,
  MAX_CALLER_CLAIMS,
  newServerSchema,
  rateLimitSchema,
  poolSizingSchema,
  promptDefinitionSchema,
  resourceDefinitionSchema,
  secretValueSchema,
  securityModeSchema,
  subdomainSchema,
  toolDefinitionSchema,
  toolLimitsSchema,
  toolNameSchema,
} from '../store/index.js';

export const CreateServerBody = newServerSchema;
export const ToolDefinitionBody = toolDefinitionSchema;
export const PoolSettingsBody = poolSizingSchema;
export const PromptDefinitionBody = promptDefinitionSchema;
export const ResourceDefinitionBody = resourceDefinitionSchema;

export const ServerSettingsBody = z
  .strictObject({
    name: z.string().min(1).max(256).optional(),
    securityMode: securityModeSchema.optional(),
    oauthServerUrl: z.string().url().max(2048).nullable().optional(),
    /** Expected `aud` instead of the resource URL; null = the resource URL. */
    oauthAudience: z.string().min(1).max(2048).nullable().optional(),
    oauthRequiredScopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be a scope token'))
      .max(32)
      .optional(),
    /** Limits for the server's tools that set none of their own. */
    limits: toolLimitsSchema.optional(),
    /** `server` (default): one container serves all the server's tools; `tool`: one per tool. */
    isolation: isolationSchema.optional(),
    /** OCI runtime: `runc` (default) or gVisor's `runsc` (the engine must have it). */
    runtime: containerRuntimeSchema.optional(),
    /** Most containers this server may hold; null = its fair share of the budget. */
    maxContainers: z.number().int().min(1).max(10_000).nullable().optional(),
    /** Private hosts/CIDRs with optional ports this server's tools may reach. */
    egressAllow: z
      .array(
        // Parsed by the broker's own parser, so what saves is what the broker applies.
        egressAllowEntrySchema.superRefine((entry, check) => {
          const parsed = parseEgressAllowEntry(entry);
          if (typeof parsed === 'string') check.addIssue({ code: 'custom', message: parsed });
        }),
      )
      .max(64)
      .optional(),
    /** Browser origins allowed to call /mcp (requests without Origin are unaffected). */
    allowedOrigins: z.array(browserOriginSchema).max(64).optional(),
    /** Per-caller rate limit of /mcp; null = the service default. */
    rateLimit: rateLimitSchema.nullable().optional(),
    /** How long modern-era clients may cache lists, reads and server/discover, in ms; null = MCP_CACHE_TTL_MS. */
    cacheTtlMs: z.number().int().min(0).max(86_400_000).nullable().optional(),
    /** Claims of a caller's OAuth token the server's code may read in `sdk.caller.claims`. */
    callerClaims: z.array(callerClaimNameSchema).max(MAX_CALLER_CLAIMS).optional(),
    active: z.boolean().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'nothing to change');
export type ServerSettingsBody = z.infer<typeof ServerSettingsBody>;

export const SecretValueBody = z.strictObject({
  value: secretValueSchema.min(1, 'value must not be empty'),
});

export const InvokeBody = z.strictObject({
  params: z.record(z.string(), z.unknown()).default({}),
});

/** A prompt's test render: the arguments a client's `prompts/get` would send (checked as its are). */
export const RenderPromptBody = z.strictObject({
  arguments: z.record(z.string(), z.string()).optional(),
});

/**
 * A resource's preview: `{}` for a static resource; for a template, the URI
 * to read or the values of its variables (the URI is then the template expanded).
 */
export const ReadResourceBody = z.union([
  z.strictObject({ uri: ResourceUri.optional() }),
  z.strictObject({ variables: z.record(z.string(), z.string()).optional() }),
]);
export type ReadResourceBody = z.infer<typeof ReadResourceBody>;

export const RollbackBody = z.strictObject({ version: z.number().int().positive() });

export const InvocationsQuery = z.strictObject({
  server: subdomainSchema.optional(),
  /** What ran: `tool`, `prompt`, `resource` or `completion`. */
  kind: codeKindSchema.optional(),
  /** The tool's, prompt's or resource's name. */
  tool: toolNameSchema.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** GET /api/invocations/refusals: counted refusals by bucket, newest first. */
export const RefusalsQuery = z.strictObject({
  server: subdomainSchema.optional(),
  /** Only buckets starting at or after this time (ISO 8601). */
  since: z.iso.datetime({ offset: true }).optional(),
  /** Buckets (one server, code and time each) at most. */
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});
