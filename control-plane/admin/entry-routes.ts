/**
 * /api/servers/{sub}/tools, /prompts and /resources: one set of routes for
 * every kind of definition — list, save (a new version on every save; every
 * piece of code in the definition is compiled first, and a syntax error is
 * 422 with line and column, naming the field where a definition holds
 * several, and saves nothing), delete, version history, rollback. Test runs
 * of each kind are in run-routes.ts.
 */
import { McphostError } from '../errors.js';
import { parseInput, sendJson, sendNoContent } from '../http/index.js';
import {
  ENTRY_KINDS,
  ENTRY_SPECS,
  type EntryDefinitions,
  type EntryKind,
  type EntryRecord,
} from '../store/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { RollbackBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { requireWithinCeilings, withEffectiveLimits } from './limit-ceilings.js';
import { snapshots } from './audit-snapshots.js';
import { toolSyntaxError } from './tool-syntax-error.js';
import type { AdminRouter } from './permissions.js';

/** Registers the routes of tools, prompts and resources. */
export function addEntryRoutes(router: AdminRouter, context: AdminContext): void {
  for (const kind of ENTRY_KINDS) addKindRoutes(router, context, kind);
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
    checkCodeSyntax(context, kind, definition);
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

/**
 * Compiles every piece of code of a definition before anything is saved:
 * a syntax error is 422 ERR_TOOL_SYNTAX with line and column, naming the
 * field where the kind has several (`arguments.1.complete.code`).
 */
function checkCodeSyntax<K extends EntryKind>(
  context: AdminContext,
  kind: K,
  definition: EntryDefinitions[K],
): void {
  for (const { field, code } of ENTRY_SPECS[kind].codeFields(definition)) {
    const problem = context.checkSyntax(code);
    if (!problem) continue;
    throw toolSyntaxError(problem, field);
  }
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

export function entryNotFound(kind: EntryKind, subdomain: string, name: string): McphostError {
  return new McphostError(
    'ERR_NOT_FOUND',
    `${ENTRY_SPECS[kind].noun} "${name}" does not exist on server "${subdomain}"`,
  );
}
