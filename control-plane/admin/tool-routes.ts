/**
 * /api/servers/{sub}/tools: list, save (new version on every save; a syntax
 * error is 422 with line and column and saves nothing), delete, version
 * history, rollback, and a test run that goes through the same path as an
 * MCP `tools/call`.
 */
import { errorSpecOf, McphostError } from '../errors.js';
import { sendJson, sendNoContent } from '../http/index.js';
import { parseInput } from '../http/index.js';
import { toolNameSchema, type ToolRecord } from '../store/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { InvokeBody, RollbackBody, ToolDefinitionBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { requireWithinCeilings, withEffectiveLimits } from './limit-ceilings.js';
import { snapshots } from './audit-snapshots.js';
import { toolSyntaxError } from './tool-syntax-error.js';
import { adminCallerOf, principalOf, type AdminRouter } from './permissions.js';
import { clientAddressFromHeaders, requestIdOf } from '../http/index.js';

export function addToolRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const before = snapshots(context);
  const read = { permission: 'read' } as const;
  const write = (action: string) =>
    ({ permission: 'operate', audit: { action, before: before.tool } }) as const;

  router.add('GET', '/api/servers/:sub/tools', read, async ({ res, params }) => {
    const server = await requireServer(context, params.sub!);
    const tools = await store.listTools(params.sub!);
    sendJson(res, 200, {
      tools: tools.map((tool) => withEffectiveLimits(context, tool, server.limits)),
    });
  });

  router.add('GET', '/api/servers/:sub/tools/:name', read, async ({ res, params }) => {
    const server = await requireServer(context, params.sub!);
    const tool = await requireTool(context, params.sub!, params.name!);
    sendJson(res, 200, withEffectiveLimits(context, tool, server.limits));
  });

  router.add(
    'PUT',
    '/api/servers/:sub/tools/:name',
    write('tool.save'),
    async ({ req, res, params }) => {
      const name = parseInput(toolNameSchema, params.name, 'tool name');
      const definition = await readJson(req, config.maxBodyBytes, ToolDefinitionBody, 'tool');
      const problem = context.checkSyntax(definition.code);
      if (problem) throw toolSyntaxError(problem);
      const server = await requireServer(context, params.sub!);
      requireWithinCeilings(context, `tool "${name}"`, definition.limits, server);
      const existed = (await store.getTool(params.sub!, name)) !== undefined;
      const tool = await store.saveTool(params.sub!, name, definition);
      // Answer once this process serves the new version: a call right after the save runs it.
      await context.cache.settled();
      sendJson(res, existed ? 200 : 201, withEffectiveLimits(context, tool, server.limits));
    },
  );

  router.add(
    'DELETE',
    '/api/servers/:sub/tools/:name',
    write('tool.delete'),
    async ({ res, params }) => {
      await requireTool(context, params.sub!, params.name!);
      await store.deleteTool(params.sub!, params.name!);
      await context.cache.settled();
      sendNoContent(res);
    },
  );

  router.add('GET', '/api/servers/:sub/tools/:name/versions', read, async ({ res, params }) => {
    await requireTool(context, params.sub!, params.name!);
    const versions = await store.listToolVersions(params.sub!, params.name!);
    // Older versions are pruned at save: say how many are kept.
    sendJson(res, 200, { versions, retention: store.versionRetention });
  });

  router.add(
    'POST',
    '/api/servers/:sub/tools/:name/rollback',
    write('tool.rollback'),
    async ({ req, res, params }) => {
      const { version } = await readJson(req, config.maxBodyBytes, RollbackBody, 'rollback');
      const server = await requireServer(context, params.sub!);
      await requireTool(context, params.sub!, params.name!);
      // A rollback saves the old version anew: within today's ceilings, as any save.
      const versions = await store.listToolVersions(params.sub!, params.name!);
      const old = versions.find((saved) => saved.version === version);
      if (old)
        requireWithinCeilings(
          context,
          `version ${version} of tool "${params.name}"`,
          old.limits,
          server,
        );
      const tool = await store.rollbackTool(params.sub!, params.name!, version);
      await context.cache.settled();
      sendJson(res, 200, withEffectiveLimits(context, tool, server.limits));
    },
  );

  // A test run changes nothing stored, but runs code with the server's secrets: recorded,
  // with its outcome and duration only (the result may hold what the secrets reached).
  const invoke = {
    permission: 'operate',
    audit: { action: 'tool.invoke', after: testRunSummary },
  } as const;
  router.add('POST', '/api/servers/:sub/tools/:name/invoke', invoke, async (route) => {
    const { req, res, params } = route;
    const body = await readJson(req, config.maxBodyBytes, InvokeBody, 'invocation');
    await requireServer(context, params.sub!);
    // The same cached view an MCP client gets: what was saved is what runs.
    const tool = context.cache.tool(params.sub!, params.name!);
    if (!tool)
      throw new McphostError(
        'ERR_NOT_FOUND',
        `tool "${params.name}" does not exist on server "${params.sub}"`,
      );
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
}

/** What the audit log keeps of a test run's answer. */
export function testRunSummary(answer: unknown): unknown {
  const { ok, durationMs, version, error } = (answer ?? {}) as Record<string, unknown>;
  return { ok, durationMs, version, ...(error === undefined ? {} : { error }) };
}

async function requireTool(
  context: AdminContext,
  subdomain: string,
  name: string,
): Promise<ToolRecord> {
  await requireServer(context, subdomain);
  const tool = await context.store.getTool(subdomain, name);
  if (!tool)
    throw new McphostError(
      'ERR_NOT_FOUND',
      `tool "${name}" does not exist on server "${subdomain}"`,
    );
  return tool;
}

/**
 * The status of a failed test run: the registry's when mcphost itself could
 * not run the tool (an infrastructure failure answered with 503: no capacity,
 * engine down, shutting down), else 200 — the tool ran, and failing is its answer.
 * Prompt renders and resource reads (entry-routes.ts) answer the same way.
 */
export function couldNotRunStatus(code: string): number {
  const spec = errorSpecOf(code);
  return spec.infrastructure && spec.status === 503 ? spec.status : 200;
}
