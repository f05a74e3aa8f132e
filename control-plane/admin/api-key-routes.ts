/**
 * /api/servers/{sub}/api-keys: the keys MCP clients present to a server in
 * `securityMode: "apikey"`. A key is answered once, at creation; the store
 * keeps its hash. Revoking keeps the key listed (its status says so); the
 * hosted side stops accepting it at once here and on the next change
 * notification on other replicas. Keys may be made before the server is
 * switched to API-key mode, so clients can be given theirs first.
 */
import { sendJson, sendNoContent } from '../http/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { credentialView, issueCredential, NewCredentialBody } from './credential-views.js';
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
    const issued = await issueCredential(
      store,
      { kind: 'apikey', subdomain: params.sub! },
      body,
      auditActorOf(principalOf(route)).label,
    );
    sendJson(res, 201, {
      ...issued.view,
      key: issued.secret,
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
    sendNoContent(res);
  });
}
