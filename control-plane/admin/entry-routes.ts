/**
 * /api/servers/{sub}/prompts and /api/servers/{sub}/resources: one set of
 * routes for both kinds of entry — list, save (a new version on every save;
 * every piece of code in the definition is compiled first, and a syntax
 * error is 422 naming the field), delete, version history, rollback — and
 * the previews that go through the path an MCP client takes: a prompt's
 * render (`prompts/get`) and a resource's read (`resources/read`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMcphostError, McphostError, publicErrorOf } from '../errors.js';
import type { McphostErrorCode } from '../errors.js';
import {
  clientAddressFromHeaders,
  parseInput,
  requestIdOf,
  sendJson,
  sendNoContent,
} from '../http/index.js';
import {
  ENTRY_KINDS,
  ENTRY_SPECS,
  parseUriTemplate,
  type EntryDefinitions,
  type EntryKind,
  type EntryRecord,
  type ResourceRecord,
} from '../store/index.js';
import type { EntryRunContext } from '../invocation/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { ReadResourceBody, RenderPromptBody, RollbackBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { requireWithinCeilings, withEffectiveLimits } from './limit-ceilings.js';
import { couldNotRunStatus, testRunSummary } from './tool-routes.js';
import { snapshots } from './audit-snapshots.js';
import { toolSyntaxError } from './tool-syntax-error.js';
import { adminCallerOf, principalOf, type AdminRouter, type Principal } from './permissions.js';

/** Registers the routes of prompts and resources, and their previews. */
export function addEntryRoutes(router: AdminRouter, context: AdminContext): void {
  for (const kind of ENTRY_KINDS) addKindRoutes(router, context, kind);
  addPreviewRoutes(router, context);
}

function addKindRoutes(router: AdminRouter, context: AdminContext, kind: EntryKind): void {
  const { config, store } = context;
  const spec = ENTRY_SPECS[kind];
  const path = `/api/servers/:sub/${spec.plural}`;
  const before = snapshots(context).entry(kind);
  const read = { permission: 'read' } as const;
  const write = (verb: string) =>
    ({ permission: 'operate', audit: { action: `${kind}.${verb}`, before } }) as const;

  router.add('GET', path, read, async ({ res, params }) => {
    const server = await requireServer(context, params.sub!);
    const entries = await store.listEntries(kind, params.sub!);
    sendJson(res, 200, {
      [spec.plural]: entries.map((entry) => withEffectiveLimits(context, entry, server.limits)),
    });
  });

  router.add('GET', `${path}/:name`, read, async ({ res, params }) => {
    const server = await requireServer(context, params.sub!);
    const entry = await requireEntry(context, kind, params.sub!, params.name!);
    sendJson(res, 200, withEffectiveLimits(context, entry, server.limits));
  });

  router.add('PUT', `${path}/:name`, write('save'), async ({ req, res, params }) => {
    const name = parseInput(spec.name, params.name, `${spec.noun} name`);
    const definition = await readJson(req, config.maxBodyBytes, spec.definition, spec.noun);
    checkCodeSyntax(context, definition);
    const server = await requireServer(context, params.sub!);
    requireWithinCeilings(context, `${spec.noun} "${name}"`, definition.limits, server);
    const existed = (await store.getEntry(kind, params.sub!, name)) !== undefined;
    const entry = await store.saveEntry(kind, params.sub!, name, definition);
    // Answer once this process serves the new version: a read right after the save sees it.
    await context.cache.settled();
    sendJson(res, existed ? 200 : 201, withEffectiveLimits(context, entry, server.limits));
  });

  router.add('DELETE', `${path}/:name`, write('delete'), async ({ res, params }) => {
    await requireEntry(context, kind, params.sub!, params.name!);
    await store.deleteEntry(kind, params.sub!, params.name!);
    await context.cache.settled();
    sendNoContent(res);
  });

  router.add('GET', `${path}/:name/versions`, read, async ({ res, params }) => {
    await requireEntry(context, kind, params.sub!, params.name!);
    const versions = await store.listEntryVersions(kind, params.sub!, params.name!);
    sendJson(res, 200, { versions, retention: store.versionRetention });
  });

  router.add('POST', `${path}/:name/rollback`, write('rollback'), async ({ req, res, params }) => {
    const { version } = await readJson(req, config.maxBodyBytes, RollbackBody, 'rollback');
    const server = await requireServer(context, params.sub!);
    await requireEntry(context, kind, params.sub!, params.name!);
    // A rollback saves the old version anew: within today's ceilings, as any save.
    const versions = await store.listEntryVersions(kind, params.sub!, params.name!);
    const old = versions.find((saved) => saved.version === version);
    if (old) {
      const what = `version ${version} of ${spec.noun} "${params.name}"`;
      requireWithinCeilings(context, what, old.limits, server);
    }
    const entry = await store.rollbackEntry(kind, params.sub!, params.name!, version);
    await context.cache.settled();
    sendJson(res, 200, withEffectiveLimits(context, entry, server.limits));
  });
}

function addPreviewRoutes(router: AdminRouter, context: AdminContext): void {
  const { config } = context;
  const preview = (action: string) =>
    ({ permission: 'operate', audit: { action, after: testRunSummary } }) as const;

  router.add(
    'POST',
    '/api/servers/:sub/prompts/:name/render',
    preview('prompt.render'),
    async (route) => {
      const { req, res, params } = route;
      const body = await readJson(req, config.maxBodyBytes, RenderPromptBody, 'render');
      await requireServer(context, params.sub!);
      await answerRun(req, res, principalOf(route), (run) =>
        context.entries.renderPrompt(params.sub!, params.name!, body.arguments, run),
      );
    },
  );

  router.add(
    'POST',
    '/api/servers/:sub/resources/:name/read',
    preview('resource.read'),
    async (route) => {
      const { req, res, params } = route;
      const body = await readJson(req, config.maxBodyBytes, ReadResourceBody, 'read');
      await requireServer(context, params.sub!);
      // The same cached view an MCP client gets: what was saved is what is read.
      const resource = context.cache.resource(params.sub!, params.name!);
      if (!resource) throw entryNotFound('resource', params.sub!, params.name!);
      const uri = uriToRead(resource, body);
      await answerRun(req, res, principalOf(route), (run) =>
        context.entries.readResource(params.sub!, uri, run, { resource: resource.name }),
      );
    },
  );
}

// Codes that say the request named nothing that exists: its 404, not a run that failed.
const NOT_FOUND_CODES: ReadonlySet<McphostErrorCode> = new Set([
  'ERR_NOT_FOUND',
  'ERR_UNKNOWN_PROMPT',
  'ERR_UNKNOWN_RESOURCE',
]);

/**
 * Runs a preview as an admin caller and answers as the tools' test run does:
 * 200 with `ok` and the result or the error, 503 when mcphost itself could
 * not run it; the code's log lines either way.
 */
async function answerRun(
  req: IncomingMessage,
  res: ServerResponse,
  principal: Principal,
  work: (run: EntryRunContext) => Promise<unknown>,
): Promise<void> {
  const logs: { level: string; text: string; at: number }[] = [];
  const started = performance.now();
  const run: EntryRunContext = {
    caller: adminCallerOf(principal),
    requestId: requestIdOf(req),
    clientAddress: clientAddressFromHeaders(req.headers),
    onLog: (entry) => logs.push(entry),
  };
  try {
    const result = await work(run);
    sendJson(res, 200, { ok: true, result, logs, durationMs: elapsedSince(started) });
  } catch (error) {
    if (!isMcphostError(error) || NOT_FOUND_CODES.has(error.code)) throw error;
    sendJson(res, couldNotRunStatus(error.code), {
      ok: false,
      error: publicErrorOf(error),
      logs,
      durationMs: elapsedSince(started),
    });
  }
}

/**
 * The URI a preview reads: a static resource's own; for a template, the
 * URI given or the template expanded with every one of its variables.
 */
function uriToRead(resource: ResourceRecord, body: ReadResourceBody): string {
  const uri = 'uri' in body ? body.uri : undefined;
  const variables = 'variables' in body ? body.variables : undefined;
  if (resource.uri !== undefined) {
    if (variables !== undefined || (uri !== undefined && uri !== resource.uri)) {
      throw new McphostError(
        'ERR_VALIDATION',
        `resource "${resource.name}" is static: it is read at ${resource.uri}; send {}`,
      );
    }
    return resource.uri;
  }
  if (uri !== undefined) return uri;
  const template = parseUriTemplate(resource.uriTemplate!);
  if (variables === undefined) {
    throw new McphostError(
      'ERR_VALIDATION',
      `resource "${resource.name}" is the template ${template.template}: send {"uri": …} or {"variables": {${template.variables.join(', ')}}}`,
    );
  }
  const problems = [
    ...template.variables
      .filter((name) => !Object.hasOwn(variables, name))
      .map((name) => ({ path: `variables.${name}`, message: 'missing' })),
    ...Object.keys(variables)
      .filter((name) => !template.variables.includes(name))
      .map((name) => ({
        path: `variables.${name}`,
        message: `not a variable of ${template.template}`,
      })),
  ];
  if (problems.length > 0) {
    throw new McphostError(
      'ERR_VALIDATION',
      `invalid read: ${problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}`,
      { details: problems },
    );
  }
  // What the template cannot make back into these values (an empty value, one
  // holding what its expression excludes, a lone surrogate) is the admin's mistake.
  let expanded: string | undefined;
  try {
    expanded = template.expand(variables);
  } catch {
    expanded = undefined;
  }
  if (expanded === undefined || template.match(expanded) === undefined) {
    throw new McphostError(
      'ERR_VALIDATION',
      `these variables do not make a URI that ${template.template} matches: a value is empty, or holds what its expression excludes (e.g. "/" in {name})`,
    );
  }
  return expanded;
}

/**
 * Compiles every piece of code of a definition before anything is saved:
 * a syntax error is 422 ERR_TOOL_SYNTAX naming the field (`code`,
 * `arguments.1.complete.code`, `complete.city.code`) with line and column.
 */
function checkCodeSyntax(context: AdminContext, definition: EntryDefinitions[EntryKind]): void {
  for (const { field, code } of codeFieldsOf(definition)) {
    const problem = context.checkSyntax(code);
    if (!problem) continue;
    throw toolSyntaxError(problem, field);
  }
}

function codeFieldsOf(definition: EntryDefinitions[EntryKind]): { field: string; code: string }[] {
  const fields: { field: string; code: string }[] = [];
  if (definition.code !== undefined) fields.push({ field: 'code', code: definition.code });
  if ('arguments' in definition) {
    definition.arguments.forEach((argument, index) => {
      if (argument.complete !== undefined && 'code' in argument.complete) {
        fields.push({ field: `arguments.${index}.complete.code`, code: argument.complete.code });
      }
    });
  } else {
    for (const [variable, source] of Object.entries(definition.complete ?? {})) {
      if ('code' in source) fields.push({ field: `complete.${variable}.code`, code: source.code });
    }
  }
  return fields;
}

async function requireEntry(
  context: AdminContext,
  kind: EntryKind,
  subdomain: string,
  name: string,
): Promise<EntryRecord<EntryKind>> {
  await requireServer(context, subdomain);
  const entry = await context.store.getEntry(kind, subdomain, name);
  if (!entry) throw entryNotFound(kind, subdomain, name);
  return entry;
}

function entryNotFound(kind: EntryKind, subdomain: string, name: string): McphostError {
  return new McphostError(
    'ERR_NOT_FOUND',
    `${ENTRY_SPECS[kind].noun} "${name}" does not exist on server "${subdomain}"`,
  );
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}
