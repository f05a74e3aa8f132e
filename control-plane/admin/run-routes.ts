/**
 * Test runs, one for each kind of definition, each through the path an MCP
 * client takes: a tool's call (`tools/call`), a prompt's render
 * (`prompts/get`) and a resource's read (`resources/read`). Each runs as an
 * admin caller with the server's secrets and is audited with its outcome and
 * duration only (the result may hold what the secrets reached).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorSpecOf, isMcphostError, McphostError, publicErrorOf } from '../errors.js';
import type { McphostErrorCode } from '../errors.js';
import { clientAddressFromHeaders, requestIdOf, sendJson } from '../http/index.js';
import { parseUriTemplate, type ResourceRecord } from '../store/index.js';
import type { EntryRunContext } from '../invocation/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { InvokeBody, ReadResourceBody, RenderPromptBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { entryNotFound } from './entry-routes.js';
import { adminCallerOf, principalOf, type AdminRouter, type Principal } from './permissions.js';

/** Registers the test runs of tools, prompts and resources. */
export function addRunRoutes(router: AdminRouter, context: AdminContext): void {
  const { config } = context;
  const run = (action: string) =>
    ({ permission: 'operate', audit: { action, after: testRunSummary } }) as const;

  router.add('POST', '/api/servers/:sub/tools/:name/invoke', run('tool.invoke'), async (route) => {
    const { req, res, params } = route;
    const body = await readJson(req, config.maxBodyBytes, InvokeBody, 'invocation');
    await requireServer(context, params.sub!);
    // The same cached view an MCP client gets: what was saved is what runs.
    const tool = context.cache.tool(params.sub!, params.name!);
    if (!tool) throw entryNotFound('tool', params.sub!, params.name!);
    const result = await context.invoker.invoke({
      tool,
      args: body.params,
      caller: adminCallerOf(principalOf(route)),
      requestId: requestIdOf(req),
      clientAddress: clientAddressFromHeaders(req.headers),
    });
    // The tool ran (or was refused) as a client's call would be: 200 with ok/error.
    // When mcphost itself could not run it (no capacity, engine down), its status says so.
    const status = result.ok ? 200 : couldNotRunStatus(result.error.code);
    sendJson(res, status, {
      ok: result.ok,
      // A tool that built content blocks (sdk.content) answers with them, as MCP clients get them.
      ...(!result.ok
        ? { error: result.error }
        : result.content !== undefined
          ? { content: result.content }
          : { result: result.value }),
      logs: result.logs,
      durationMs: result.durationMs,
      version: result.version,
    });
  });

  router.add(
    'POST',
    '/api/servers/:sub/prompts/:name/render',
    run('prompt.render'),
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
    run('resource.read'),
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

/** What the audit log keeps of a test run's answer. */
export function testRunSummary(answer: unknown): unknown {
  const { ok, durationMs, version, error } = (answer ?? {}) as Record<string, unknown>;
  return { ok, durationMs, version, ...(error === undefined ? {} : { error }) };
}

/**
 * The status of a failed test run: the registry's when mcphost itself could
 * not run it (an infrastructure failure answered with 503: no capacity,
 * engine down, shutting down), else 200 — the code ran, and failing is its answer.
 */
function couldNotRunStatus(code: string): number {
  const spec = errorSpecOf(code);
  return spec.infrastructure && spec.status === 503 ? spec.status : 200;
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}
