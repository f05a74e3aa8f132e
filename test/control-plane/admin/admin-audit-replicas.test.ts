/**
 * The admin side's people and trail across replicas: two control planes on
 * one PostgreSQL database (made for this file). A change through one is in
 * the other's audit log; a dashboard session started on one works on the
 * other, and ends on both when signed out; an account lock holds on both;
 * an API key revoked through one is listed revoked, and refused, on the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresDatabase, onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { postInitialize } from '../../support/mcp-requests.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';
import {
  adminRequest,
  passwordSignIn,
  type AdminAnswer,
  type AdminRequestOptions,
} from '../../support/admin-requests.js';

const database = `mcphost_admin_audit_${randomBytes(6).toString('hex')}`;
const PASSWORD = 'correct horse battery staple';
let first: TestControlPlane;
let second: TestControlPlane;

function call(
  plane: TestControlPlane,
  method: string,
  path: string,
  options: AdminRequestOptions = {},
): Promise<AdminAnswer> {
  return adminRequest(plane.adminUrl, method, path, options);
}

function signIn(plane: TestControlPlane, email: string, password = PASSWORD) {
  return passwordSignIn(plane.adminUrl, email, password);
}

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = {
    DATABASE_URL: postgresUrl(database),
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
  };
  first = await startTestControlPlane(env);
  second = await startTestControlPlane(env);
  expect((await first.admin('POST', '/api/servers', { subdomain: 'shared' })).status).toBe(201);
  for (const [email, role] of [
    ['admin@example.test', 'admin'],
    ['locked@example.test', 'viewer'],
  ] as const) {
    const created = await first.admin('POST', '/api/accounts', { email, role, password: PASSWORD });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

describe('the admin side across replicas', () => {
  it('shows a change made through one replica in the other’s audit log', async () => {
    const requestId = `replica-${randomBytes(6).toString('hex')}`;
    const saved = await call(first, 'PUT', '/api/servers/shared/tools/hello', {
      bearer: TEST_ADMIN_TOKEN,
      requestId,
      body: { description: 'hi', code: "return 'hi';" },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    // The entry is written before the answer is sent (admin-api.ts): the other replica shows it at once.
    const auditOnSecond = async () =>
      (await call(second, 'GET', '/api/audit?action=tool.save', { bearer: TEST_ADMIN_TOKEN })).body
        .entries as unknown[];
    expect(await auditOnSecond()).toEqual([
      expect.objectContaining({
        action: 'tool.save',
        server: 'shared',
        target: 'hello',
        outcome: 'ok',
        requestId,
        actor: { kind: 'bootstrap', id: null, label: 'admin token' },
      }),
    ]);
    // Both replicas page the one log alike.
    const fromFirst = await call(first, 'GET', '/api/audit?limit=500', {
      bearer: TEST_ADMIN_TOKEN,
    });
    const fromSecond = await call(second, 'GET', '/api/audit?limit=500', {
      bearer: TEST_ADMIN_TOKEN,
    });
    expect(fromSecond.body).toEqual(fromFirst.body);
  });

  it('lets a session started on one replica work on the other, and end on both', async () => {
    const session = await signIn(first, 'admin@example.test');
    expect(session.status).toBe(200);
    const current = await call(second, 'GET', '/api/session', { cookie: session.cookie! });
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({
      principal: { email: 'admin@example.test', role: 'admin', via: 'session' },
      csrfToken: session.csrf,
    });
    // A write on the other replica with the session's CSRF token.
    const created = await call(second, 'POST', '/api/servers', {
      cookie: session.cookie!,
      csrf: session.csrf!,
      body: { subdomain: 'from-second' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const entry = (
      await call(first, 'GET', '/api/audit?action=server.create&server=from-second', {
        bearer: TEST_ADMIN_TOKEN,
      })
    ).body.entries[0];
    expect(entry).toMatchObject({ actor: { label: 'admin@example.test' }, outcome: 'ok' });

    const out = await call(second, 'DELETE', '/api/session', {
      cookie: session.cookie!,
      csrf: session.csrf!,
    });
    expect(out.status).toBe(204);
    for (const plane of [first, second]) {
      expect((await call(plane, 'GET', '/api/session', { cookie: session.cookie! })).status).toBe(
        401,
      );
    }
  });

  it('holds an account lock made on one replica on the other', async () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const plane = attempt % 2 === 0 ? second : first;
      expect((await signIn(plane, 'locked@example.test', `wrong ${attempt} password`)).status).toBe(
        401,
      );
    }
    for (const plane of [first, second]) {
      const refused = await signIn(plane, 'locked@example.test');
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('ERR_SIGN_IN_THROTTLED');
    }
  });

  it('lists and refuses on the other replica an API key revoked through one', async () => {
    const settings = await first.admin('PATCH', '/api/servers/shared/settings', {
      securityMode: 'apikey',
    });
    expect(settings.status).toBe(200);
    const minted = await first.admin('POST', '/api/servers/shared/api-keys', { label: 'client' });
    expect(minted.status).toBe(201);
    const key: string = minted.body.key;
    const url = second.mcpUrl('shared');
    await expect
      .poll(async () => (await postInitialize(url, { authorization: `Bearer ${key}` })).status, {
        timeout: 5000,
      })
      .toBe(200);

    expect(
      (await first.admin('DELETE', `/api/servers/shared/api-keys/${minted.body.id}`)).status,
    ).toBe(204);
    const listed = await second.admin('GET', '/api/servers/shared/api-keys');
    expect(listed.status).toBe(200);
    expect(listed.body.apiKeys).toEqual([
      expect.objectContaining({
        id: minted.body.id,
        status: 'revoked',
        revokedAt: expect.any(String),
      }),
    ]);
    await expect
      .poll(async () => (await postInitialize(url, { authorization: `Bearer ${key}` })).status, {
        timeout: 5000,
      })
      .toBe(401);
    const refused = await postInitialize(url, { authorization: `Bearer ${key}` });
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    expect(refused.headers.get('www-authenticate')).toContain('revoked');
  });
});

describe('an audited change whose entry cannot be written', () => {
  /** Makes every insert into the audit log fail, or wait `sleepSeconds`, until undone. */
  const breakAuditLog = (body: string) =>
    onPostgresDatabase(
      database,
      `CREATE OR REPLACE FUNCTION broken_audit() RETURNS trigger AS $$ BEGIN ${body}; RETURN NEW; END $$ LANGUAGE plpgsql;
       CREATE TRIGGER broken_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION broken_audit();`,
    );
  const mendAuditLog = () =>
    onPostgresDatabase(database, 'DROP TRIGGER IF EXISTS broken_audit ON audit_log');

  it('answers ERR_NOT_AUDITED, not success, when the store refuses the entry; the change stands', async () => {
    await breakAuditLog("RAISE EXCEPTION 'audit log refused on purpose'");
    try {
      const created = await call(first, 'POST', '/api/servers', {
        bearer: TEST_ADMIN_TOKEN,
        body: { subdomain: 'unaudited' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(503);
      expect(created.body.error).toMatchObject({ code: 'ERR_NOT_AUDITED' });
      expect(created.body.error.message).toContain('the store refused it');
    } finally {
      await mendAuditLog();
    }
    const made = await call(second, 'GET', '/api/servers/unaudited', { bearer: TEST_ADMIN_TOKEN });
    expect(made.status).toBe(200);
  });

  it('answers within its bound when the store does not answer', async () => {
    await breakAuditLog('PERFORM pg_sleep(8)');
    try {
      const created = await call(first, 'POST', '/api/servers', {
        bearer: TEST_ADMIN_TOKEN,
        body: { subdomain: 'slow-audit' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(503);
      expect(created.body.error).toMatchObject({ code: 'ERR_NOT_AUDITED' });
      // Answered by the wait's bound, before the store (8 s) answered.
      expect(created.body.error.message).toContain('within 5000 ms');
    } finally {
      await mendAuditLog();
    }
  }, 30_000);
});
