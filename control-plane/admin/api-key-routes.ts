/**
 * /api/servers/{sub}/api-keys: the keys MCP clients present to a server in
 * `securityMode: "apikey"`. A key is answered once, at creation; the store
 * keeps its hash. Revoking keeps the key listed (its status says so); the
 * hosted side stops accepting it at once here and on the next change
 * notification on other replicas. Keys may be made before the server is
 * switched to API-key mode, so clients can be given theirs first.
 */
import { mintCredentialSecret } from '../auth/index.js';
import { sendJson } from '../http/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { credentialView, NewCredentialBody } from './credential-views.js';
import { auditActorOf, idOfAnswer, principalOf, type AdminRouter } from './permissions.js';
import { requireServer } from './server-routes.js';

export function addApiKeyRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const path = '/api/servers/:sub/api-keys';

  router.add('GET', path, { permission: 'read' }, async ({ res, params }) => {
    await requireServer(context, params.sub!);
    const keys = await store.listCredentials({ kind: 'apikey', subdomain: params.sub! });
    sendJson(res, 200, { apiKeys: keys.map((key) => credentialView(key)) });
  });

  const create = {
    permission: 'administer',
    audit: { action: 'api-key.create', target: idOfAnswer },
  } as const;
  router.add('POST', path, create, async (route) => {
    const { req, res, params } = route;
    const body = await readJson(req, config.maxBodyBytes, NewCredentialBody, 'API key');
    const server = await requireServer(context, params.sub!);
    const minted = mintCredentialSecret('apikey');
    const key = await store.createCredential({
      owner: { kind: 'apikey', subdomain: params.sub! },
      label: body.label,
      prefix: minted.prefix,
      secretHash: minted.secretHash,
      createdBy: auditActorOf(principalOf(route)).label,
      expiresAt: body.expiresAt == null ? null : new Date(body.expiresAt).toISOString(),
    });
    sendJson(res, 201, {
      ...credentialView(key),
      key: minted.secret,
      note:
        server.securityMode === 'apikey'
          ? 'this key is shown only now: give it to the client, it cannot be read again'
          : `this key is shown only now: give it to the client, it cannot be read again; it is checked once the server's securityMode is "apikey" (now "${server.securityMode}")`,
    });
  });

  const revoke = { permission: 'administer', audit: { action: 'api-key.revoke' } } as const;
  router.add('DELETE', `${path}/:id`, revoke, async ({ res, params }) => {
    await requireServer(context, params.sub!);
    await store.revokeCredential({ kind: 'apikey', subdomain: params.sub! }, params.id!);
    res.writeHead(204).end();
  });
}
