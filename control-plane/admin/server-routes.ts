/**
 * /api/servers: list, create, read, change settings, delete. Switching to
 * OAuth 2.0 validates the Authorization Server's metadata first; when that
 * fails, the answer is 422 naming what is wrong and nothing is saved; so is
 * a container runtime the sandbox engine lacks.
 */
import { sendJson, sendNoContent } from '../http/index.js';
import { McphostError } from '../errors.js';
import { missingRuntimeMessage } from '../sandbox/index.js';
import { credentialStatus } from '../identity/index.js';
import {
  ENTRY_KINDS,
  ENTRY_SPECS,
  type ServerRecord,
  type ServerSettingsPatch,
  type ToolRecord,
} from '../store/index.js';
import { aboveCeilings, requireWithinCeilings, withEffectiveLimits } from './limit-ceilings.js';
import { readJson, type AdminContext } from './admin-context.js';
import { CreateServerBody, ServerSettingsBody } from './schemas.js';
import { serverView } from './server-view.js';
import { snapshots } from './audit-snapshots.js';
import { visibleServers, type AdminRouter } from './permissions.js';

export function addServerRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const before = snapshots(context);

  router.add('GET', '/api/servers', { permission: 'read' }, async ({ res, principal }) => {
    const visible = visibleServers(principal);
    const servers = (await store.listServers()).filter(
      (server) => visible === undefined || visible.includes(server.subdomain),
    );
    const views = await Promise.all(
      servers.map(async (server) =>
        viewOf(context, server, (await store.listTools(server.subdomain)).length),
      ),
    );
    sendJson(res, 200, { servers: views });
  });

  const create = {
    permission: 'administer',
    audit: {
      action: 'server.create',
      server: (answer: unknown) => (answer as { subdomain?: string } | undefined)?.subdomain,
    },
  } as const;
  router.add('POST', '/api/servers', create, async ({ req, res }) => {
    const body = await readJson(req, config.maxBodyBytes, CreateServerBody, 'server');
    const server = await store.createServer(body);
    await context.cache.settled();
    sendJson(res, 201, viewOf(context, server, 0));
  });

  router.add('GET', '/api/servers/:sub', { permission: 'read' }, async ({ res, params }) => {
    const server = await requireServer(context, params.sub!);
    const tools = await store.listTools(server.subdomain);
    sendJson(res, 200, viewOf(context, server, tools.length));
  });

  const settings = {
    permission: 'administer',
    audit: { action: 'server.settings', before: before.server },
  } as const;
  router.add('PATCH', '/api/servers/:sub/settings', settings, async ({ req, res, params }) => {
    const body = await readJson(req, config.maxBodyBytes, ServerSettingsBody, 'settings');
    const current = await requireServer(context, params.sub!);
    if (body.runtime !== undefined) await requireRuntime(context, body.runtime);
    if (body.limits !== undefined) {
      requireWithinCeilings(context, `server "${current.subdomain}"`, body.limits);
    }
    const patch: ServerSettingsPatch = { ...body };
    const warnings: string[] = [];
    const mode = body.securityMode ?? current.securityMode;
    const url = body.oauthServerUrl === undefined ? current.oauthServerUrl : body.oauthServerUrl;
    const securityTouched = body.securityMode !== undefined || body.oauthServerUrl !== undefined;
    if (mode === 'oauth2' && securityTouched) {
      if (!url) {
        throw new McphostError(
          'ERR_OAUTH_METADATA',
          'oauthServerUrl is required for securityMode "oauth2"',
          {
            details: { missing: ['oauthServerUrl'] },
          },
        );
      }
      // Fetched before anything is written: a failure leaves the settings as they were.
      const fetched = await context.fetchAuthorizationServerMetadata(url);
      patch.oauthMetadata = fetched.metadata;
      warnings.push(...fetched.warnings);
    }
    const { maxTotal } = context.pools.budgetStats();
    if (body.maxContainers != null && body.maxContainers > maxTotal) {
      warnings.push(
        `maxContainers ${body.maxContainers} is above the container budget of ${maxTotal} (POOL_MAX_TOTAL): the budget bounds it`,
      );
    }
    if (mode === 'apikey' && body.securityMode === 'apikey' && current.securityMode !== 'apikey') {
      const keys = await store.listCredentials({ kind: 'apikey', subdomain: current.subdomain });
      if (!keys.some((key) => credentialStatus(key, new Date()) === 'active')) {
        warnings.push(
          `this server has no active API key: every /mcp call is refused until one is created (POST /api/servers/${current.subdomain}/api-keys)`,
        );
      }
    }
    const sandboxTouched =
      (body.isolation ?? current.isolation) !== current.isolation ||
      (body.runtime ?? current.runtime) !== current.runtime ||
      (body.limits !== undefined && JSON.stringify(body.limits) !== JSON.stringify(current.limits));
    if (sandboxTouched) {
      warnings.push(
        "isolation, runtime or limits changed: the server's warm containers are retired and its next calls start new ones",
      );
    }
    const server = await store.updateServerSettings(current.subdomain, patch);
    await context.cache.settled();
    const tools = await store.listTools(server.subdomain);
    if (body.limits !== undefined) {
      const clamped = await recordsAboveLimits(context, server);
      if (clamped.length > 0) {
        warnings.push(
          `${clamped.join(', ')} ask for more than the new limits: they run at the server's limits until saved within them`,
        );
      }
    }
    sendJson(res, 200, { ...viewOf(context, server, tools.length), warnings });
  });

  const remove = {
    permission: 'administer',
    audit: { action: 'server.delete', before: before.server },
  } as const;
  router.add('DELETE', '/api/servers/:sub', remove, async ({ res, params }) => {
    await requireServer(context, params.sub!);
    await store.deleteServer(params.sub!);
    await context.cache.settled();
    sendNoContent(res);
  });
}

/** A server's view with the limits its tools run with by default now (every ceiling applied). */
function viewOf(context: AdminContext, server: ServerRecord, toolCount: number) {
  const { effectiveLimits, limitsClamped } = withEffectiveLimits(context, server);
  return { ...serverView(context.config, server, toolCount), effectiveLimits, limitsClamped };
}

/**
 * The tools, prompts and resources of `server` saved above its limits (an
 * admin lowered them since): they stay as saved and run at the server's
 * limits (see limit-ceilings.ts), named as `tool "report"`.
 */
async function recordsAboveLimits(context: AdminContext, server: ServerRecord): Promise<string[]> {
  const named: { noun: string; name: string; limits: ToolRecord['limits'] }[] = [];
  for (const kind of ENTRY_KINDS) {
    for (const entry of await context.store.listEntries(kind, server.subdomain)) {
      named.push({ noun: ENTRY_SPECS[kind].noun, name: entry.name, limits: entry.limits });
    }
  }
  return named
    .filter((record) => aboveCeilings(context, record.limits, server.limits))
    .map((record) => `${record.noun} "${record.name}"`);
}

/** Refuses, before anything is saved, a runtime the sandbox engine lacks: better now than at the first call. */
async function requireRuntime(context: AdminContext, runtime: string): Promise<void> {
  const available = await context.sandboxRuntimes();
  if (available.includes(runtime)) return;
  throw new McphostError('ERR_RUNTIME_UNAVAILABLE', missingRuntimeMessage(runtime, available), {
    details: { runtime, available },
  });
}

/** The stored server, or ERR_NOT_FOUND naming it. */
export async function requireServer(context: AdminContext, subdomain: string) {
  const server = await context.store.getServer(subdomain);
  if (!server) throw new McphostError('ERR_NOT_FOUND', `server "${subdomain}" does not exist`);
  return server;
}
