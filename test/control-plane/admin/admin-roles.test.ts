/**
 * Every admin route against every role, generated from the route table: the
 * table this file keeps (what each route should need) must list exactly the
 * routes the API has, with the permission the API declares — so a new route
 * fails here until someone decides who may call it — and then each role
 * calls each route for real: allowed roles get past authorization (any
 * answer but 401/403), refused ones get 403 ERR_FORBIDDEN, and nobody gets
 * in without a credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../../control-plane/admin/index.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';

/** Who should be allowed what: decided here, independently of the code under test. */
const EXPECTED: Record<string, Permission> = {
  'GET /api/servers': 'read',
  'POST /api/servers': 'administer',
  'GET /api/servers/:sub': 'read',
  'PATCH /api/servers/:sub/settings': 'administer',
  'DELETE /api/servers/:sub': 'administer',
  'GET /api/servers/:sub/tools': 'read',
  'GET /api/servers/:sub/tools/:name': 'read',
  'PUT /api/servers/:sub/tools/:name': 'operate',
  'DELETE /api/servers/:sub/tools/:name': 'operate',
  'GET /api/servers/:sub/tools/:name/versions': 'read',
  'POST /api/servers/:sub/tools/:name/rollback': 'operate',
  'POST /api/servers/:sub/tools/:name/invoke': 'operate',
  'GET /api/servers/:sub/prompts': 'read',
  'GET /api/servers/:sub/prompts/:name': 'read',
  'PUT /api/servers/:sub/prompts/:name': 'operate',
  'DELETE /api/servers/:sub/prompts/:name': 'operate',
  'GET /api/servers/:sub/prompts/:name/versions': 'read',
  'POST /api/servers/:sub/prompts/:name/rollback': 'operate',
  'GET /api/servers/:sub/resources': 'read',
  'GET /api/servers/:sub/resources/:name': 'read',
  'PUT /api/servers/:sub/resources/:name': 'operate',
  'DELETE /api/servers/:sub/resources/:name': 'operate',
  'GET /api/servers/:sub/resources/:name/versions': 'read',
  'POST /api/servers/:sub/resources/:name/rollback': 'operate',
  'POST /api/servers/:sub/prompts/:name/render': 'operate',
  'POST /api/servers/:sub/resources/:name/read': 'operate',
  'GET /api/servers/:sub/secrets': 'read',
  'PUT /api/servers/:sub/secrets/:name': 'operate',
  'DELETE /api/servers/:sub/secrets/:name': 'operate',
  'GET /api/invocations': 'read',
  'GET /api/invocations/refusals': 'read',
  'GET /api/pools': 'read',
  'PUT /api/pools/:sub': 'operate',
  'PUT /api/pools/:sub/:tool': 'operate',
  'POST /api/pools/:sub/drain': 'operate',
  'POST /api/pools/:sub/:tool/drain': 'operate',
  'GET /api/servers/:sub/api-keys': 'read',
  'POST /api/servers/:sub/api-keys': 'administer',
  'DELETE /api/servers/:sub/api-keys/:id': 'administer',
  'GET /api/accounts': 'own',
  'POST /api/accounts': 'own',
  'PATCH /api/accounts/:id': 'own',
  'DELETE /api/accounts/:id': 'own',
  'GET /api/accounts/:id/tokens': 'own',
  'DELETE /api/accounts/:id/tokens/:tokenId': 'own',
  'GET /api/me/tokens': 'self',
  'POST /api/me/tokens': 'self',
  'DELETE /api/me/tokens/:id': 'self',
  'GET /api/auth/methods': 'public',
  'POST /api/auth/password': 'public',
  'GET /api/session': 'self',
  'DELETE /api/session': 'self',
  'GET /auth/oidc/start': 'public',
  'GET /auth/oidc/callback': 'public',
  'GET /api/audit': 'read',
  'POST /api/admin-token/rotate': 'own',
};

type Role = 'owner' | 'admin' | 'operator' | 'viewer';
const PASSWORD = 'correct horse battery staple';
/** The operator's own server, and one it may not touch. */
const OWN = 'alpha';
const OTHER = 'beta';

/** Whether a role passes a permission on a server (the matrix, written out). */
function allowed(permission: Permission, role: Role, server: string | undefined): boolean {
  switch (permission) {
    case 'public':
    case 'self':
      return true;
    case 'read':
      return role !== 'operator' || server === undefined || server === OWN;
    case 'operate':
      return role !== 'viewer' && (role !== 'operator' || server === OWN);
    case 'administer':
      return role === 'owner' || role === 'admin';
    case 'own':
      return role === 'owner';
  }
}

let plane: TestControlPlane;
const tokens = {} as Record<Role | 'bootstrap', string>;

async function call(
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; code?: string }> {
  const response = await loopbackFetch(`${plane.adminUrl}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    // not JSON (a redirect)
  }
  return { status: response.status, code };
}

let operatorId: string | undefined;

/**
 * Puts back what an allowed destructive call removed, so every call meets the
 * same fixtures. A deleted server leaves every operator's list (a new server
 * of the same name is not inherited), so the operator is given it again.
 */
async function ensureFixtures(): Promise<void> {
  for (const sub of [OWN, OTHER]) {
    if ((await plane.admin('GET', `/api/servers/${sub}`)).status === 404) {
      expect((await plane.admin('POST', '/api/servers', { subdomain: sub })).status).toBe(201);
      if (sub === OWN && operatorId !== undefined) {
        const given = await plane.admin('PATCH', `/api/accounts/${operatorId}`, { servers: [OWN] });
        expect(given.status).toBe(200);
      }
    }
    if ((await plane.admin('GET', `/api/servers/${sub}/tools/t`)).status === 404) {
      const saved = await plane.admin('PUT', `/api/servers/${sub}/tools/t`, {
        description: 'a tool',
        code: 'return 1;',
        parameters: [],
      });
      expect(saved.status).toBe(201);
    }
  }
}

/** Creates an account of `role`, signs it in, and mints its personal token. */
async function tokenFor(role: Role): Promise<string> {
  const email = `${role}@example.test`;
  const created = await plane.admin('POST', '/api/accounts', {
    email,
    role,
    password: PASSWORD,
    ...(role === 'operator' ? { servers: [OWN] } : {}),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  if (role === 'operator') operatorId = created.body.id;
  const signIn = await loopbackFetch(`${plane.adminUrl}/api/auth/password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(signIn.status).toBe(200);
  const { csrfToken } = (await signIn.json()) as { csrfToken: string };
  const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
  const minted = await loopbackFetch(`${plane.adminUrl}/api/me/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
    body: JSON.stringify({ label: 'role matrix' }),
  });
  expect(minted.status).toBe(201);
  return ((await minted.json()) as { token: string }).token;
}

beforeAll(async () => {
  plane = await startTestControlPlane({ SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' });
  await ensureFixtures();
  tokens.bootstrap = TEST_ADMIN_TOKEN;
  for (const role of ['owner', 'admin', 'operator', 'viewer'] as const) {
    tokens[role] = await tokenFor(role);
  }
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

describe('the admin route table', () => {
  it('lists exactly the routes this test knows, each with the expected permission', () => {
    // The table of the running service.
    const declared = Object.fromEntries(
      plane.app.adminRoutes().map((route) => [`${route.method} ${route.path}`, route.permission]),
    );
    expect(declared).toEqual(EXPECTED);
  });

  it('is what the OpenAPI document describes, permission by permission', async () => {
    const response = await loopbackFetch(`${plane.adminUrl}/api/openapi.json`);
    const document = (await response.json()) as {
      paths: Record<
        string,
        Record<string, { 'x-mcphost-permission'?: string; security: unknown[] }>
      >;
    };
    const documented: Record<string, string | undefined> = {};
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const pattern = path.replace(/\{(\w+)\}/g, ':$1');
        documented[`${method.toUpperCase()} ${pattern}`] = operation['x-mcphost-permission'];
        expect(operation.security.length === 0).toBe(
          operation['x-mcphost-permission'] === 'public',
        );
      }
    }
    expect(documented).toEqual(EXPECTED);
  });
});

describe('each role against each route', () => {
  const cases = Object.entries(EXPECTED).flatMap(([route, permission]) => {
    const [method, pattern] = route.split(' ') as [string, string];
    const servers = pattern.includes(':sub') ? [OWN, OTHER] : [undefined];
    return servers.map((server) => ({ method, pattern, permission, server }));
  });

  it.each(cases)('$method $pattern on $server', async ({ method, pattern, permission, server }) => {
    const path = pattern
      .replace(':sub', server ?? OWN)
      .replace(':name', 't')
      .replace(':tool', 't')
      .replace(':id', '00000000-0000-4000-8000-000000000000')
      .replace(':tokenId', '00000000-0000-4000-8000-000000000001');
    const body = method === 'GET' || method === 'DELETE' ? undefined : {};
    if (permission !== 'public') {
      const anonymous = await call(method, path, undefined, body);
      expect(anonymous.status, 'no credential').toBe(401);
      expect(anonymous.code).toBe('ERR_UNAUTHORIZED');
    }
    for (const role of ['viewer', 'operator', 'admin', 'owner'] as const) {
      const answer = await call(method, path, tokens[role], body);
      if (allowed(permission, role, server)) {
        expect([401, 403], `${role} should pass (${answer.code})`).not.toContain(answer.status);
        if (method !== 'GET') await ensureFixtures();
      } else {
        expect(answer.status, `${role} should be refused`).toBe(403);
        expect(answer.code).toBe('ERR_FORBIDDEN');
      }
    }
  });
});

describe('what a role sees', () => {
  it('lists only an operator’s own servers, everything for a viewer', async () => {
    const asOperator = await loopbackFetch(`${plane.adminUrl}/api/servers`, {
      headers: { authorization: `Bearer ${tokens.operator}` },
    });
    const operatorServers = ((await asOperator.json()) as { servers: { subdomain: string }[] })
      .servers;
    expect(operatorServers.map((server) => server.subdomain)).toEqual([OWN]);
    const asViewer = await loopbackFetch(`${plane.adminUrl}/api/servers`, {
      headers: { authorization: `Bearer ${tokens.viewer}` },
    });
    const viewerServers = ((await asViewer.json()) as { servers: { subdomain: string }[] }).servers;
    expect(viewerServers.map((server) => server.subdomain)).toEqual([OWN, OTHER]);
  });

  it('refuses an operator another server’s invocations, pools and audit entries', async () => {
    const invocations = await call('GET', `/api/invocations?server=${OTHER}`, tokens.operator);
    expect(invocations.status).toBe(403);
    const audit = await call('GET', `/api/audit?server=${OTHER}`, tokens.operator);
    expect(audit.status).toBe(403);
    const pools = await loopbackFetch(`${plane.adminUrl}/api/pools`, {
      headers: { authorization: `Bearer ${tokens.operator}` },
    });
    const body = (await pools.json()) as {
      pools: { server?: string }[];
      sizes: { unit: string }[];
    };
    expect(body.pools.every((pool) => pool.server === OWN)).toBe(true);
    expect(body.sizes.every((size) => size.unit.split('/')[0] === OWN)).toBe(true);
  });

  it('records a handler’s own refusals too (another server named in a filter)', async () => {
    await call('GET', `/api/invocations?server=${OTHER}`, tokens.operator);
    // Refusals of one kind in a minute share one entry (with their count): read that kind's.
    const page = await plane.admin(
      'GET',
      `/api/audit?outcome=denied&actor=operator@example.test&action=${encodeURIComponent('GET /api/invocations')}`,
    );
    expect(page.body.entries[0]).toMatchObject({
      action: 'GET /api/invocations',
      outcome: 'denied',
      summary: { note: `this account may not read server "${OTHER}"` },
    });
  });

  it('warns when a server is switched to API keys without an active key', async () => {
    await plane.admin('POST', '/api/servers', { subdomain: 'keyless' });
    const switched = await plane.admin('PATCH', '/api/servers/keyless/settings', {
      securityMode: 'apikey',
    });
    expect(switched.status).toBe(200);
    expect(switched.body.warnings.join(' ')).toMatch(/no active API key/);
    const key = await plane.admin('POST', '/api/servers/keyless/api-keys', { label: 'ci' });
    const created = await plane.admin('GET', `/api/audit?action=api-key.create&server=keyless`);
    // A creation names what it made, so it pairs with the key's later revocation.
    expect(created.body.entries[0].target).toBe(key.body.id);
  });

  it('refuses to “sign out” a token: only a session can be', async () => {
    const answer = await call('DELETE', '/api/session', tokens.viewer);
    expect(answer.status).toBe(409);
    expect((await call('GET', '/api/session', tokens.viewer)).status).toBe(200);
  });

  it('records refusals in the audit log', async () => {
    await call('DELETE', `/api/servers/${OWN}`, tokens.viewer);
    const page = await plane.admin('GET', '/api/audit?outcome=denied&action=server.delete');
    const entry = page.body.entries.find(
      (item: { actor: { label: string }; server: string }) =>
        item.actor.label === 'viewer@example.test' && item.server === OWN,
    );
    expect(entry).toMatchObject({ server: OWN, outcome: 'denied' });
  });

  it('lets only owners and admins (not operators) read the metrics', async () => {
    expect((await call('GET', '/metrics', tokens.viewer)).status).toBe(200);
    expect((await call('GET', '/metrics', tokens.operator)).status).toBe(403);
  });
});
