/**
 * GET /api/openapi.json: the admin API described from the same zod schemas
 * that parse its requests, so the document cannot drift from the code; each
 * operation names the permission the route table gives it
 * (`x-mcphost-permission`, see permissions.ts), and public ones need no
 * credential. A test holds this list against the route table.
 */
import { z } from 'zod';
import { ERROR_REGISTRY } from '../errors.js';
import { ENTRY_SPECS } from '../store/index.js';
import {
  CreateServerBody,
  InvokeBody,
  PoolSettingsBody,
  PromptDefinitionBody,
  ReadResourceBody,
  RenderPromptBody,
  ResourceDefinitionBody,
  RollbackBody,
  SecretValueBody,
  ServerSettingsBody,
  ToolDefinitionBody,
} from './schemas.js';
import { AccountPatchBody, NewAccountBody } from './account-routes.js';
import { NewCredentialBody } from './credential-views.js';
import type { Permission } from './permissions.js';
import { PasswordSignInBody } from './session-routes.js';

interface Operation {
  method: string;
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: string[];
}

const OPERATIONS: Operation[] = [
  { method: 'get', path: '/api/servers', summary: 'List hosted servers' },
  {
    method: 'post',
    path: '/api/servers',
    summary: 'Create a hosted server',
    body: CreateServerBody,
  },
  {
    method: 'get',
    path: '/api/servers/{sub}',
    summary: 'One server, with its settings and address',
  },
  {
    method: 'patch',
    path: '/api/servers/{sub}/settings',
    summary: 'Change security mode, OAuth settings, active',
    body: ServerSettingsBody,
  },
  {
    method: 'delete',
    path: '/api/servers/{sub}',
    summary: 'Delete a server with its tools and secrets',
  },
  ...entryOperations(ENTRY_SPECS.tool, ToolDefinitionBody),
  {
    method: 'post',
    path: '/api/servers/{sub}/tools/{name}/invoke',
    summary: 'Run a tool as a client would',
    body: InvokeBody,
  },
  ...entryOperations(ENTRY_SPECS.prompt, PromptDefinitionBody),
  {
    method: 'post',
    path: '/api/servers/{sub}/prompts/{name}/render',
    summary: 'Render a prompt as a client’s prompts/get would',
    body: RenderPromptBody,
  },
  ...entryOperations(ENTRY_SPECS.resource, ResourceDefinitionBody),
  {
    method: 'post',
    path: '/api/servers/{sub}/resources/{name}/read',
    summary:
      'Read a resource as a client’s resources/read would ({} static; uri or variables for a template)',
    body: ReadResourceBody,
  },
  {
    method: 'get',
    path: '/api/servers/{sub}/secrets',
    summary: 'Secret names and update times (never values)',
  },
  {
    method: 'put',
    path: '/api/servers/{sub}/secrets/{name}',
    summary: 'Set or replace a secret (write-only)',
    body: SecretValueBody,
  },
  { method: 'delete', path: '/api/servers/{sub}/secrets/{name}', summary: 'Delete a secret' },
  {
    method: 'get',
    path: '/api/invocations',
    summary:
      'The invocation log, newest first, and `refused`: calls refused before any code ran, counted per server and code instead of logged',
    query: ['server', 'kind', 'tool', 'limit'],
  },
  {
    method: 'get',
    path: '/api/invocations/refusals',
    summary:
      'Counts of calls refused before any code ran, per server, code and time bucket, newest first',
    query: ['server', 'since', 'limit'],
  },
  {
    method: 'get',
    path: '/api/pools',
    summary:
      'The container budget, each server’s containers, recent starts/evictions and share, every pool (with its containers by engine under DOCKER_ENGINES), the engines, and the defaults',
  },
  {
    method: 'put',
    path: '/api/pools/{sub}',
    summary: 'Size a server’s shared pools (minWarm containers kept, maxSize per pool)',
    body: PoolSettingsBody,
  },
  {
    method: 'put',
    path: '/api/pools/{sub}/{tool}',
    summary: 'Size the pool of a tool with containers of its own (isolation "tool" or strict)',
    body: PoolSettingsBody,
  },
  {
    method: 'post',
    path: '/api/pools/{sub}/drain',
    summary: 'Retire a server’s idle containers now and busy ones when they finish',
  },
  {
    method: 'post',
    path: '/api/pools/{sub}/{tool}/drain',
    summary: 'Retire the containers of a tool’s own pool',
  },
  {
    method: 'get',
    path: '/api/servers/{sub}/api-keys',
    summary: 'API keys of a server (never the keys themselves)',
  },
  {
    method: 'post',
    path: '/api/servers/{sub}/api-keys',
    summary: 'Create an API key for securityMode "apikey": the key is answered once',
    body: NewCredentialBody,
  },
  {
    method: 'delete',
    path: '/api/servers/{sub}/api-keys/{id}',
    summary: 'Revoke an API key (it stays listed as revoked)',
  },
  { method: 'get', path: '/api/accounts', summary: 'Admin accounts (owner)' },
  {
    method: 'post',
    path: '/api/accounts',
    summary: 'Create an account with a role (owner)',
    body: NewAccountBody,
  },
  {
    method: 'patch',
    path: '/api/accounts/{id}',
    summary: 'Change an account: role, servers, password, disabled (owner)',
    body: AccountPatchBody,
  },
  { method: 'delete', path: '/api/accounts/{id}', summary: 'Delete an account (owner)' },
  {
    method: 'get',
    path: '/api/accounts/{id}/tokens',
    summary: 'An account’s personal tokens (owner; never the tokens themselves)',
  },
  {
    method: 'delete',
    path: '/api/accounts/{id}/tokens/{tokenId}',
    summary: 'Revoke an account’s personal token (owner)',
  },
  { method: 'get', path: '/api/me/tokens', summary: 'Your personal API tokens' },
  {
    method: 'post',
    path: '/api/me/tokens',
    summary: 'Create a personal API token: answered once, acts with your role',
    body: NewCredentialBody,
  },
  { method: 'delete', path: '/api/me/tokens/{id}', summary: 'Revoke a personal API token' },
  {
    method: 'get',
    path: '/api/auth/methods',
    summary: 'How one may sign in to the dashboard here',
  },
  {
    method: 'post',
    path: '/api/auth/password',
    summary: 'Sign in with e-mail and password: a session cookie and its CSRF token',
    body: PasswordSignInBody,
  },
  { method: 'get', path: '/api/session', summary: 'Who is calling, and the session’s CSRF token' },
  { method: 'delete', path: '/api/session', summary: 'Sign out' },
  {
    method: 'get',
    path: '/auth/oidc/start',
    summary: 'Start single sign-on (a browser navigation; redirects to the provider)',
    query: ['returnTo'],
  },
  {
    method: 'get',
    path: '/auth/oidc/callback',
    summary: 'Where the provider sends the browser back (redirects to the dashboard)',
  },
  {
    method: 'get',
    path: '/api/audit',
    summary: 'The audit log, newest first (an operator sees its servers’ entries)',
    query: ['actor', 'action', 'server', 'outcome', 'since', 'until', 'limit', 'cursor'],
  },
  {
    method: 'post',
    path: '/api/admin-token/rotate',
    summary:
      'Replace a generated admin token: the new one is answered once, the old one refused on every replica (409 while ADMIN_TOKEN is set)',
  },
];

/** The operations every kind of definition has (entry-routes.ts registers them for each). */
function entryOperations(
  { plural, noun }: { plural: string; noun: string },
  body: z.ZodType,
): Operation[] {
  const path = `/api/servers/{sub}/${plural}`;
  return [
    { method: 'get', path, summary: `List ${plural}` },
    { method: 'get', path: `${path}/{name}`, summary: `One ${noun}` },
    {
      method: 'put',
      path: `${path}/{name}`,
      summary: `Create or replace a ${noun} (new version)`,
      body,
    },
    { method: 'delete', path: `${path}/{name}`, summary: `Delete a ${noun}` },
    {
      method: 'get',
      path: `${path}/{name}/versions`,
      summary: `Version history of a ${noun}, newest first: the kept versions, and \`retention\` (how many are kept; older ones are pruned)`,
    },
    {
      method: 'post',
      path: `${path}/{name}/rollback`,
      summary: 'Save an earlier version as the newest',
      body: RollbackBody,
    },
  ];
}

// Every stable code a response may carry, from the registry that also decides its status.
const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_REGISTRY) },
        message: { type: 'string' },
        details: {},
      },
      required: ['code', 'message'],
    },
  },
};
const ERROR_RESPONSE = {
  description: 'Error; the status is the one the README lists for its code',
  content: { 'application/json': { schema: ERROR_SCHEMA } },
};

const cached = new Map<string, object>();

/** The route table as the document needs it: `METHOD /path/{param}` → permission. */
export type RoutePermissions = ReadonlyMap<string, Permission>;

/** Every operation as `METHOD /path/{param}` (what a test holds against the route table). */
export function documentedOperations(): string[] {
  return OPERATIONS.map((operation) => `${operation.method.toUpperCase()} ${operation.path}`);
}

/** The OpenAPI 3.1 document (built once). */
export function openApiDocument(version: string, permissions: RoutePermissions): object {
  const known = cached.get(version);
  if (known) return known;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    const parameters = [
      ...[...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...(operation.query ?? []).map((name) => ({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
      })),
    ];
    const permission = permissions.get(`${operation.method.toUpperCase()} ${operation.path}`);
    (paths[operation.path] ??= {})[operation.method] = {
      summary: operation.summary,
      ...(permission === undefined ? {} : { 'x-mcphost-permission': permission }),
      security: permission === 'public' ? [] : [{ adminToken: [] }, { session: [] }],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(operation.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: z.toJSONSchema(operation.body, { io: 'input', unrepresentable: 'any' }),
                },
              },
            },
          }
        : {}),
      responses: {
        '2XX': { description: 'Success' },
        '4XX': ERROR_RESPONSE,
        '5XX': ERROR_RESPONSE,
      },
    };
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'mcphost admin API',
      version,
      description:
        'Each operation names the permission it needs as x-mcphost-permission: public (no credential), self (any signed-in principal, about itself), read (every role; an operator only its servers), operate (owner, admin, an operator on its servers), administer (owner, admin), own (owner). A refusal is 403 ERR_FORBIDDEN. Writes made with the dashboard session cookie also need the X-CSRF-Token header (from GET /api/session) and a same-origin Origin.',
    },
    components: {
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The admin token (the bootstrap owner) or an account’s personal token (mcph_pat_…)',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-mcph_session',
          description:
            'The dashboard session (named mcph_session over plain HTTP to localhost); writes also need X-CSRF-Token',
        },
      },
    },
    paths,
  };
  cached.set(version, document);
  return document;
}
