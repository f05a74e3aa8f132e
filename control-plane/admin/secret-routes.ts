/**
 * /api/servers/{sub}/secrets: write-only secrets — names and update times go
 * out, values never do.
 */
import { McphostError } from '../errors.js';
import { sendJson, sendNoContent } from '../http/index.js';
import { parseInput } from '../http/index.js';
import { secretNameSchema } from '../store/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { SecretValueBody } from './schemas.js';
import { requireServer } from './server-routes.js';
import { snapshots } from './audit-snapshots.js';
import type { AdminRouter } from './permissions.js';

export function addSecretRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const before = snapshots(context).secret;
  const write = (action: string) => ({ permission: 'operate', audit: { action, before } }) as const;

  router.add(
    'GET',
    '/api/servers/:sub/secrets',
    { permission: 'read' },
    async ({ res, params }) => {
      await requireServer(context, params.sub!);
      sendJson(res, 200, { secrets: await store.listSecrets(params.sub!) });
    },
  );

  router.add(
    'PUT',
    '/api/servers/:sub/secrets/:name',
    write('secret.save'),
    async ({ req, res, params }) => {
      const name = parseInput(secretNameSchema, params.name, 'secret name');
      const { value } = await readJson(req, config.maxBodyBytes, SecretValueBody, 'secret');
      await requireServer(context, params.sub!);
      const summary = await store.putSecret(params.sub!, name, value);
      await context.cache.settled();
      sendJson(res, 200, summary);
    },
  );

  router.add(
    'DELETE',
    '/api/servers/:sub/secrets/:name',
    write('secret.delete'),
    async ({ res, params }) => {
      await requireServer(context, params.sub!);
      const secrets = await store.listSecrets(params.sub!);
      if (!secrets.some((s) => s.name === params.name)) {
        throw new McphostError(
          'ERR_NOT_FOUND',
          `secret "${params.name}" does not exist on server "${params.sub}"`,
        );
      }
      await store.deleteSecret(params.sub!, params.name!);
      await context.cache.settled();
      sendNoContent(res);
    },
  );
}
