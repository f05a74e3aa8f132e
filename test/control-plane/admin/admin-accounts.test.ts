/**
 * Accounts, dashboard sessions and personal tokens through a real control
 * plane (SQLite): the owner creates accounts of each role, they sign in with
 * a password (cookie, CSRF), the account lock and the per-address throttle
 * hold, a change of role or a disable ends what the account held, the last
 * owner stays, and personal tokens act with their account's role until
 * revoked or expired (docs/accounts-and-keys.md).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminAuthenticator } from '../../../control-plane/identity/admin-authentication.js';
import { AdminToken } from '../../../control-plane/identity/admin-token.js';
import { sqliteTarget } from '../../store/store-targets.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  adminRequest,
  passwordSignIn,
  type AdminAnswer,
  type AdminRequestOptions,
} from '../../support/admin-requests.js';

const PASSWORD = 'correct horse battery staple';
const NO_CONTAINERS = { GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };

let plane: TestControlPlane;

type Call = AdminRequestOptions;
type Answer = AdminAnswer;

async function call(method: string, path: string, options: Call = {}, on = plane): Promise<Answer> {
  return adminRequest(on.adminUrl, method, path, options);
}

/** A password sign-in: the answer, and the cookie (`name=value`) and CSRF token it gave. */
async function signIn(
  email: string,
  password = PASSWORD,
  on = plane,
): Promise<Answer & { cookie?: string; csrf?: string }> {
  return passwordSignIn(on.adminUrl, email, password);
}

async function createAccount(body: Record<string, unknown>): Promise<{ id: string }> {
  const created = await plane.admin('POST', '/api/accounts', { password: PASSWORD, ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** Signs `email` in and mints a personal token with its session. */
async function personalToken(
  email: string,
  expiresAt?: string,
  password = PASSWORD,
): Promise<string> {
  const session = await signIn(email, password);
  expect(session.status).toBe(200);
  const minted = await call('POST', '/api/me/tokens', {
    cookie: session.cookie!,
    csrf: session.csrf!,
    body: { label: 'test', ...(expiresAt === undefined ? {} : { expiresAt }) },
  });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body.token;
}

let ownerId: string;

beforeAll(async () => {
  // Many sign-ins come from 127.0.0.1 here: the per-address limit has its own plane below.
  plane = await startTestControlPlane({ ...NO_CONTAINERS, SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'alpha' })).status).toBe(201);
  ownerId = (await createAccount({ email: 'owner@example.test', role: 'owner' })).id;
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

describe('creating accounts', () => {
  it('creates one account of each role, answering no password', async () => {
    const admin = await plane.admin('POST', '/api/accounts', {
      email: 'Admin@Example.test',
      name: 'Ada',
      role: 'admin',
      password: PASSWORD,
    });
    expect(admin.status).toBe(201);
    expect(admin.body).toMatchObject({
      email: 'admin@example.test',
      name: 'Ada',
      role: 'admin',
      servers: [],
      password: true,
      oidcSubject: null,
      disabled: false,
      lastSignInAt: null,
    });
    const operator = await plane.admin('POST', '/api/accounts', {
      email: 'operator@example.test',
      role: 'operator',
      servers: ['alpha'],
      password: PASSWORD,
    });
    expect(operator.status).toBe(201);
    expect(operator.body).toMatchObject({ role: 'operator', servers: ['alpha'], warnings: [] });
    const viewer = await plane.admin('POST', '/api/accounts', {
      email: 'viewer@example.test',
      role: 'viewer',
    });
    expect(viewer.status).toBe(201);
    expect(viewer.body).toMatchObject({ role: 'viewer', password: false });
    // No password and no single sign-on here: created, with a warning that it cannot sign in.
    expect(viewer.body.warnings).toEqual([
      'this account cannot sign in yet: give it a password (PATCH with {password})',
    ]);

    const listed = await plane.admin('GET', '/api/accounts');
    expect(listed.status).toBe(200);
    const roles = Object.fromEntries(
      listed.body.accounts.map((account: { email: string; role: string }) => [
        account.email,
        account.role,
      ]),
    );
    expect(roles).toMatchObject({
      'owner@example.test': 'owner',
      'admin@example.test': 'admin',
      'operator@example.test': 'operator',
      'viewer@example.test': 'viewer',
    });
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toMatch(/passwordHash|scrypt/i);
  });

  it('refuses an operator without servers, or with a server that does not exist', async () => {
    const none = await plane.admin('POST', '/api/accounts', {
      email: 'op-none@example.test',
      role: 'operator',
    });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('ERR_VALIDATION');
    const empty = await plane.admin('POST', '/api/accounts', {
      email: 'op-none@example.test',
      role: 'operator',
      servers: [],
    });
    expect(empty.status).toBe(400);
    const unknown = await plane.admin('POST', '/api/accounts', {
      email: 'op-unknown@example.test',
      role: 'operator',
      servers: ['alpha', 'nowhere'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('ERR_VALIDATION');
    expect(unknown.body.error.message).toContain('"nowhere"');
    // Nothing was kept of the refused account: the e-mail is still free.
    await createAccount({ email: 'op-unknown@example.test', role: 'operator', servers: ['alpha'] });
  });

  it('refuses servers for a role that covers every server', async () => {
    for (const role of ['owner', 'admin', 'viewer']) {
      const answer = await plane.admin('POST', '/api/accounts', {
        email: `servers-${role}@example.test`,
        role,
        servers: ['alpha'],
      });
      expect(answer.status, role).toBe(400);
      expect(answer.body.error.code).toBe('ERR_VALIDATION');
    }
  });

  it('refuses a short password, a bad e-mail and a taken e-mail (whatever its case)', async () => {
    const short = await plane.admin('POST', '/api/accounts', {
      email: 'short@example.test',
      role: 'viewer',
      password: 'elevenchars',
    });
    expect(short.status).toBe(400);
    expect(short.body.error.code).toBe('ERR_VALIDATION');
    const badEmail = await plane.admin('POST', '/api/accounts', {
      email: 'not an e-mail',
      role: 'viewer',
    });
    expect(badEmail.status).toBe(400);
    const taken = await plane.admin('POST', '/api/accounts', {
      email: ' VIEWER@example.test ',
      role: 'admin',
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('ERR_CONFLICT');
  });

  it('refuses to make an operator of an account without naming its servers', async () => {
    const viewer = (await plane.admin('GET', '/api/accounts')).body.accounts.find(
      (account: { email: string }) => account.email === 'viewer@example.test',
    );
    const answer = await plane.admin('PATCH', `/api/accounts/${viewer.id}`, { role: 'operator' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('ERR_VALIDATION');
  });
});

describe('password sign-in', () => {
  it('sets an HttpOnly SameSite=Lax cookie (plain name, no Secure on http loopback)', async () => {
    const session = await signIn('operator@example.test');
    expect(session.status).toBe(200);
    expect(session.body.principal).toMatchObject({
      kind: 'account',
      email: 'operator@example.test',
      role: 'operator',
      servers: ['alpha'],
    });
    expect(session.body.csrfToken).toEqual(expect.any(String));
    const setCookie = session.headers.getSetCookie();
    expect(setCookie).toHaveLength(1);
    const attributes = setCookie[0]!.split(';').map((part) => part.trim());
    expect(attributes[0]).toMatch(/^mcph_session=[A-Za-z0-9_-]{43}$/);
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('SameSite=Lax');
    expect(attributes).toContain('Path=/');
    expect(attributes).not.toContain('Secure');
    expect(session.headers.get('cache-control') ?? '').not.toMatch(/public/);

    const current = await call('GET', '/api/session', { cookie: session.cookie! });
    expect(current.status).toBe(200);
    expect(current.body).toEqual({
      principal: expect.objectContaining({ email: 'operator@example.test', via: 'session' }),
      csrfToken: session.csrf,
    });
    const account = (await plane.admin('GET', '/api/accounts')).body.accounts.find(
      (item: { email: string }) => item.email === 'operator@example.test',
    );
    expect(account.lastSignInAt).toEqual(expect.any(String));
  });

  it('refuses a cookie write without the CSRF token, with a wrong one, or from another origin', async () => {
    const session = await signIn('admin@example.test');
    const cookie = session.cookie!;
    const write = (options: Call) =>
      call('POST', '/api/servers', { cookie, body: { subdomain: 'csrf-check' }, ...options });

    const missing = await write({});
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe('ERR_CSRF');
    const wrong = await write({ csrf: `${session.csrf}x` });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('ERR_CSRF');
    const foreign = await write({ csrf: session.csrf!, origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('ERR_CSRF');
    const otherPort = new URL(plane.adminUrl);
    otherPort.port = String(Number(otherPort.port) + 1);
    const sibling = await write({ csrf: session.csrf!, origin: otherPort.origin });
    expect(sibling.body.error?.code).toBe('ERR_CSRF');
    expect((await plane.admin('GET', '/api/servers/csrf-check')).status).toBe(404);

    const right = await write({ csrf: session.csrf!, origin: plane.adminUrl });
    expect(right.status, JSON.stringify(right.body)).toBe(201);
    // Reads need no token.
    expect((await call('GET', '/api/servers', { cookie })).status).toBe(200);
  });

  it('lets a bearer request write without a CSRF token, whatever its Origin', async () => {
    const token = await personalToken('admin@example.test');
    const answer = await call('POST', '/api/servers', {
      bearer: token,
      origin: 'http://evil.example',
      body: { subdomain: 'bearer-write' },
    });
    expect(answer.status).toBe(201);
    const bootstrap = await call('POST', '/api/servers', {
      bearer: TEST_ADMIN_TOKEN,
      body: { subdomain: 'bootstrap-write' },
    });
    expect(bootstrap.status).toBe(201);
  });

  it('lets a present bearer header decide alone: a wrong one is refused beside a good cookie', async () => {
    const session = await signIn('admin@example.test');
    const answer = await call('GET', '/api/session', {
      cookie: session.cookie!,
      bearer: 'mcph_pat_not-a-real-token',
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('ERR_UNAUTHORIZED');
  });

  // Login CSRF: a page of another site could post a text/plain form here (no preflight)
  // and sign the browser in to an account of the attacker's choosing.
  it('refuses a sign-in posted by a page of another site', async () => {
    // The attacker's own account, with an '=' in its password: the one character a
    // `<form enctype="text/plain">` inserts between a field's name and its value.
    await createAccount({
      email: 'attacker@example.test',
      role: 'viewer',
      password: 'attacker=password',
    });
    const name = '{"email":"attacker@example.test","password":"attacker';
    const value = 'password"}';
    const response = await loopbackFetch(`${plane.adminUrl}/api/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'http://evil.example' },
      body: `${name}=${value}`,
    });
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(response.status).toBe(403);
  });

  it('answers a wrong password and an unknown e-mail alike', async () => {
    const wrong = await signIn('admin@example.test', 'not the right password');
    const unknown = await signIn('nobody@example.test', 'not the right password');
    const noPassword = await signIn('viewer@example.test', 'not the right password');
    for (const answer of [wrong, unknown, noPassword]) {
      expect(answer.status).toBe(401);
      expect(answer.cookie).toBeUndefined();
    }
    expect(unknown.body.error).toEqual(wrong.body.error);
    expect(noPassword.body.error).toEqual(wrong.body.error);
    expect(wrong.body.error.code).toBe('ERR_SIGN_IN_FAILED');
    // A failure below the lock threshold is forgotten at the next success.
    expect((await signIn('admin@example.test')).status).toBe(200);
  });

  it('locks an account after 5 wrong passwords, refusing even the right one, until reset', async () => {
    const { id } = await createAccount({ email: 'locked@example.test', role: 'viewer' });
    for (let attempt = 1; attempt <= 5; attempt++) {
      const answer = await signIn('locked@example.test', `wrong password ${attempt}`);
      expect(answer.status, `attempt ${attempt}`).toBe(401);
      expect(answer.body.error.code).toBe('ERR_SIGN_IN_FAILED');
    }
    const right = await signIn('locked@example.test');
    expect(right.status).toBe(429);
    expect(right.body.error.code).toBe('ERR_SIGN_IN_THROTTLED');
    expect(right.cookie).toBeUndefined();
    const retryAfter = Number(right.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another account is not locked by it.
    expect((await signIn('operator@example.test')).status).toBe(200);
    // An owner setting a new password lifts the lock.
    const reset = await plane.admin('PATCH', `/api/accounts/${id}`, { password: `${PASSWORD}!` });
    expect(reset.status).toBe(200);
    expect((await signIn('locked@example.test', `${PASSWORD}!`)).status).toBe(200);
  });

  it('refuses an address past SIGN_IN_ATTEMPTS_PER_MINUTE, even with the right password', async () => {
    const strict = await startTestControlPlane({
      ...NO_CONTAINERS,
      SIGN_IN_ATTEMPTS_PER_MINUTE: '3',
    });
    try {
      const created = await strict.admin('POST', '/api/accounts', {
        email: 'someone@example.test',
        role: 'viewer',
        password: PASSWORD,
      });
      expect(created.status).toBe(201);
      expect((await signIn('someone@example.test', PASSWORD, strict)).status).toBe(200);
      expect((await signIn('someone@example.test', 'wrong password 1', strict)).status).toBe(401);
      expect((await signIn('nobody@example.test', 'wrong password 2', strict)).status).toBe(401);
      // Without TRUSTED_PROXIES a forwarded address is not believed: no fresh allowance.
      const forwarded = await loopbackFetch(`${strict.adminUrl}/api/auth/password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
        body: JSON.stringify({ email: 'someone@example.test', password: PASSWORD }),
      });
      expect(forwarded.status).toBe(429);
      const refused = await signIn('someone@example.test', PASSWORD, strict);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('ERR_SIGN_IN_THROTTLED');
      expect(refused.cookie).toBeUndefined();
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The admin API itself is not throttled by it.
      expect((await strict.admin('GET', '/api/accounts')).status).toBe(200);
      // A flood of refused attempts adds one audit row a minute, not one each.
      for (let attempt = 0; attempt < 30; attempt++) {
        expect((await signIn('someone@example.test', PASSWORD, strict)).status).toBe(429);
      }
      const audit = await strict.admin('GET', '/api/audit?action=sign-in.password&limit=500');
      const throttledRows = audit.body.entries.filter(
        (entry: { summary: { note?: string } }) =>
          entry.summary.note === 'too many attempts from this network',
      );
      expect(throttledRows).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });

  it('holds the account lock against guesses sent in parallel', async () => {
    await createAccount({ email: 'parallel@example.test', role: 'viewer' });
    // Nine wrong guesses and the right password at once: the lock counts each attempt
    // before its (slow) check, so no more than five are ever checked.
    const answers = await Promise.all([
      ...Array.from({ length: 9 }, (_, index) =>
        signIn('parallel@example.test', `wrong password ${index}`),
      ),
      signIn('parallel@example.test'),
    ]);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((status) => status !== 429).length).toBeLessThanOrEqual(5);
  });
});

describe('what ends an account’s sessions and tokens', () => {
  it('ends the sessions of an account whose role changes; its tokens act with the new role', async () => {
    const { id } = await createAccount({ email: 'promoted@example.test', role: 'viewer' });
    const token = await personalToken('promoted@example.test');
    const session = await signIn('promoted@example.test');
    expect((await call('GET', '/api/session', { cookie: session.cookie! })).status).toBe(200);
    const refused = await call('POST', '/api/servers', {
      bearer: token,
      body: { subdomain: 'by-promoted' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ERR_FORBIDDEN');

    expect((await plane.admin('PATCH', `/api/accounts/${id}`, { role: 'admin' })).status).toBe(200);
    const ended = await call('GET', '/api/session', { cookie: session.cookie! });
    expect(ended.status).toBe(401);
    expect(ended.body.error.code).toBe('ERR_UNAUTHORIZED');
    const now = await call('POST', '/api/servers', {
      bearer: token,
      body: { subdomain: 'by-promoted' },
    });
    expect(now.status).toBe(201);
  });

  it('keeps the sessions of an account whose name alone changes', async () => {
    const { id } = await createAccount({ email: 'renamed@example.test', role: 'viewer' });
    const session = await signIn('renamed@example.test');
    expect((await plane.admin('PATCH', `/api/accounts/${id}`, { name: 'Renamed' })).status).toBe(
      200,
    );
    const current = await call('GET', '/api/session', { cookie: session.cookie! });
    expect(current.status).toBe(200);
    expect(current.body.principal.name).toBe('Renamed');
  });

  it('refuses a disabled account’s session, tokens and sign-in; enabling it again restores neither', async () => {
    const { id } = await createAccount({ email: 'disabled@example.test', role: 'viewer' });
    const token = await personalToken('disabled@example.test');
    const session = await signIn('disabled@example.test');
    expect((await call('GET', '/api/session', { bearer: token })).status).toBe(200);

    const disabled = await plane.admin('PATCH', `/api/accounts/${id}`, { disabled: true });
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled).toBe(true);
    for (const credential of [{ cookie: session.cookie! }, { bearer: token }]) {
      const answer = await call('GET', '/api/session', credential);
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('ERR_UNAUTHORIZED');
    }
    const again = await signIn('disabled@example.test');
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('ERR_SIGN_IN_FAILED');

    expect((await plane.admin('PATCH', `/api/accounts/${id}`, { disabled: false })).status).toBe(
      200,
    );
    // Disabling revoked the tokens and ended the session for good: enabling brings back neither
    // (a token an intruder minted must not outlive the owner's reaction).
    expect((await call('GET', '/api/session', { bearer: token })).status).toBe(401);
    expect((await call('GET', '/api/session', { cookie: session.cookie! })).status).toBe(401);
    const listed = await plane.admin('GET', `/api/accounts/${id}/tokens`);
    expect(listed.body.tokens.map((item: { status: string }) => item.status)).toEqual(['revoked']);
  });

  it('revokes an account’s tokens when its password is reset, and lets the owner revoke one', async () => {
    const { id } = await createAccount({ email: 'reset@example.test', role: 'viewer' });
    const first = await personalToken('reset@example.test');
    const reset = await plane.admin('PATCH', `/api/accounts/${id}`, {
      password: 'a brand new password here',
    });
    expect(reset.status).toBe(200);
    expect((await call('GET', '/api/session', { bearer: first })).status).toBe(401);
    const second = await personalToken(
      'reset@example.test',
      undefined,
      'a brand new password here',
    );
    expect((await call('GET', '/api/session', { bearer: second })).status).toBe(200);
    const tokens = (await plane.admin('GET', `/api/accounts/${id}/tokens`)).body.tokens as {
      id: string;
      status: string;
    }[];
    const active = tokens.find((item) => item.status === 'active')!;
    expect((await plane.admin('DELETE', `/api/accounts/${id}/tokens/${active.id}`)).status).toBe(
      204,
    );
    expect((await call('GET', '/api/session', { bearer: second })).status).toBe(401);
  });

  it('refuses a deleted account’s tokens and session', async () => {
    const { id } = await createAccount({ email: 'deleted@example.test', role: 'admin' });
    const token = await personalToken('deleted@example.test');
    const session = await signIn('deleted@example.test');
    expect((await plane.admin('DELETE', `/api/accounts/${id}`)).status).toBe(204);
    expect((await call('GET', '/api/session', { bearer: token })).status).toBe(401);
    expect((await call('GET', '/api/session', { cookie: session.cookie! })).status).toBe(401);
    expect((await plane.admin('DELETE', `/api/accounts/${id}`)).status).toBe(404);
    // The e-mail may be given to a new account, which inherits nothing.
    await createAccount({ email: 'deleted@example.test', role: 'admin' });
    expect((await call('GET', '/api/session', { bearer: token })).status).toBe(401);
  });

  it('keeps the last enabled owner account: no delete, demotion or disable (409)', async () => {
    const accounts = (await plane.admin('GET', '/api/accounts')).body.accounts;
    expect(accounts.filter((account: { role: string }) => account.role === 'owner')).toHaveLength(
      1,
    );
    const refusals = [
      await plane.admin('DELETE', `/api/accounts/${ownerId}`),
      await plane.admin('PATCH', `/api/accounts/${ownerId}`, { role: 'admin' }),
      await plane.admin('PATCH', `/api/accounts/${ownerId}`, { disabled: true }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('ERR_CONFLICT');
    }
    const owner = (await plane.admin('GET', '/api/accounts')).body.accounts.find(
      (account: { id: string }) => account.id === ownerId,
    );
    expect(owner).toMatchObject({ role: 'owner', disabled: false });

    // With a second enabled owner, the first may step down.
    const second = await createAccount({ email: 'second-owner@example.test', role: 'owner' });
    expect((await plane.admin('PATCH', `/api/accounts/${ownerId}`, { role: 'admin' })).status).toBe(
      200,
    );
    // Now the second is the last one.
    expect((await plane.admin('DELETE', `/api/accounts/${second.id}`)).status).toBe(409);
    expect((await plane.admin('PATCH', `/api/accounts/${ownerId}`, { role: 'owner' })).status).toBe(
      200,
    );
    expect((await plane.admin('DELETE', `/api/accounts/${second.id}`)).status).toBe(204);
  });

  it('lets an owner account manage accounts and an admin account not', async () => {
    const ownerToken = await personalToken('owner@example.test');
    const listed = await call('GET', '/api/accounts', { bearer: ownerToken });
    expect(listed.status).toBe(200);
    const adminToken = await personalToken('admin@example.test');
    const refused = await call('POST', '/api/accounts', {
      bearer: adminToken,
      body: { email: 'by-admin@example.test', role: 'owner' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ERR_FORBIDDEN');
  });
});

describe('personal tokens', () => {
  it('are shown once, act with the account’s role, list without their secret, and end when revoked', async () => {
    const session = await signIn('operator@example.test');
    const minted = await call('POST', '/api/me/tokens', {
      cookie: session.cookie!,
      csrf: session.csrf!,
      body: { label: 'laptop' },
    });
    expect(minted.status).toBe(201);
    const token: string = minted.body.token;
    expect(token).toMatch(/^mcph_pat_[A-Za-z0-9_-]{43}$/);
    expect(minted.body).toMatchObject({
      label: 'laptop',
      prefix: token.slice(0, 13),
      expiresAt: null,
      revokedAt: null,
      status: 'active',
    });

    const me = await call('GET', '/api/session', { bearer: token });
    expect(me.status).toBe(200);
    expect(me.body.principal).toMatchObject({
      kind: 'account',
      email: 'operator@example.test',
      role: 'operator',
      servers: ['alpha'],
      via: 'personal-token',
    });
    expect(me.body.csrfToken).toBeUndefined();
    // The operator's role, not more: its own server yes, creating servers no.
    expect((await call('GET', '/api/servers/alpha/tools', { bearer: token })).status).toBe(200);
    const refused = await call('POST', '/api/servers', {
      bearer: token,
      body: { subdomain: 'by-operator' },
    });
    expect(refused.status).toBe(403);

    const listed = await call('GET', '/api/me/tokens', { bearer: token });
    expect(listed.status).toBe(200);
    const mine = listed.body.tokens.find((item: { id: string }) => item.id === minted.body.id);
    expect(mine).toMatchObject({ label: 'laptop', status: 'active' });
    // Uses are written in batches (every few seconds), not on the request path.
    await expect
      .poll(
        async () =>
          (await call('GET', '/api/me/tokens', { bearer: token })).body.tokens.find(
            (item: { id: string }) => item.id === minted.body.id,
          ).lastUsedAt,
        { timeout: 10_000, interval: 500 },
      )
      .toEqual(expect.any(String));
    expect(mine.token).toBeUndefined();
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const revoked = await call('DELETE', `/api/me/tokens/${minted.body.id}`, {
      cookie: session.cookie!,
      csrf: session.csrf!,
    });
    expect(revoked.status).toBe(204);
    const after = await call('GET', '/api/session', { bearer: token });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('ERR_UNAUTHORIZED');
    const relisted = await call('GET', '/api/me/tokens', { cookie: session.cookie! });
    expect(
      relisted.body.tokens.find((item: { id: string }) => item.id === minted.body.id),
    ).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
  });

  it('are one account’s own: another account can neither list nor revoke them', async () => {
    const adminToken = await personalToken('admin@example.test');
    const operatorToken = await personalToken('operator@example.test');
    const operatorList = (await call('GET', '/api/me/tokens', { bearer: operatorToken })).body
      .tokens as { id: string }[];
    const adminList = (await call('GET', '/api/me/tokens', { bearer: adminToken })).body.tokens as {
      id: string;
    }[];
    expect(adminList.some((item) => operatorList.some((other) => other.id === item.id))).toBe(
      false,
    );
    const foreign = await call('DELETE', `/api/me/tokens/${operatorList[0]!.id}`, {
      bearer: adminToken,
    });
    expect(foreign.status).toBe(404);
    expect((await call('GET', '/api/session', { bearer: operatorToken })).status).toBe(200);
  });

  it('stop working when they expire', async () => {
    await createAccount({ email: 'expiring@example.test', role: 'viewer' });
    const token = await personalToken(
      'expiring@example.test',
      new Date(Date.now() + 2000).toISOString(),
    );
    expect((await call('GET', '/api/session', { bearer: token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const expired = await call('GET', '/api/session', { bearer: token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('ERR_UNAUTHORIZED');
    expect(expired.body.error.message).toContain('expired');
  });

  it('refuses an expiry in the past', async () => {
    const session = await signIn('operator@example.test');
    const answer = await call('POST', '/api/me/tokens', {
      cookie: session.cookie!,
      csrf: session.csrf!,
      body: { label: 'old', expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('ERR_VALIDATION');
  });

  it('do not exist for the bootstrap admin token (409)', async () => {
    for (const method of ['GET', 'POST']) {
      const answer = await call(method, '/api/me/tokens', {
        bearer: TEST_ADMIN_TOKEN,
        ...(method === 'POST' ? { body: { label: 'bootstrap' } } : {}),
      });
      expect(answer.status, method).toBe(409);
      expect(answer.body.error.code).toBe('ERR_CONFLICT');
    }
  });
});

describe('signing out', () => {
  it('ends the session and clears the cookie', async () => {
    const session = await signIn('operator@example.test');
    // A cookie sign-out is a write: it needs the CSRF token like any other.
    const forged = await call('DELETE', '/api/session', { cookie: session.cookie! });
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe('ERR_CSRF');

    const response = await loopbackFetch(`${plane.adminUrl}/api/session`, {
      method: 'DELETE',
      headers: { cookie: session.cookie!, 'x-csrf-token': session.csrf! },
    });
    expect(response.status).toBe(204);
    const cleared = response.headers
      .getSetCookie()
      .find((header) => header.startsWith('mcph_session='));
    expect(cleared).toBeDefined();
    expect(cleared).toMatch(/^mcph_session=;/);
    expect(cleared).toContain('Max-Age=0');
    expect(cleared).toContain('Path=/');
    const after = await call('GET', '/api/session', { cookie: session.cookie! });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('ERR_UNAUTHORIZED');
  });

  it('answers who is signed in, or 401 without a credential', async () => {
    const anonymous = await call('GET', '/api/session');
    expect(anonymous.status).toBe(401);
    const bootstrap = await call('GET', '/api/session', { bearer: TEST_ADMIN_TOKEN });
    expect(bootstrap.status).toBe(200);
    expect(bootstrap.body.principal).toMatchObject({
      kind: 'bootstrap',
      role: 'owner',
      name: 'admin token',
    });
    const methods = await call('GET', '/api/auth/methods');
    expect(methods.body).toEqual({ password: true, oidc: null, token: true });
  });
});

describe('session idle time and lifetime (a real store, a frozen clock)', () => {
  const MINUTE = 60_000;
  let time = Date.parse('2030-01-01T00:00:00.000Z');
  const clock = () => new Date(time);
  const target = sqliteTarget();

  /** A store and an authenticator on the frozen clock, and a session started at `time`. */
  async function sessionWith(idleMs: number, lifetimeMs: number) {
    const store = await target.open({ now: clock });
    const authenticator = new AdminAuthenticator({
      store,
      token: AdminToken.fromConfigured(TEST_ADMIN_TOKEN),
      sessionIdleMs: idleMs,
      cookieSecure: 'auto',
      // Sessions only here: token uses are not under test.
      tokenUses: { record: () => undefined },
      now: clock,
    });
    const account = await store.createAccount({
      email: `idle-${time}@example.test`,
      name: '',
      role: 'viewer',
      servers: [],
      passwordHash: null,
      oidcIssuer: null,
      oidcSubject: null,
    });
    const cookie = `cookie-${time}`;
    await store.createAdminSession({
      idHash: createHash('sha256').update(cookie).digest('hex'),
      accountId: account.id,
      csrfToken: 'csrf',
      expiresAt: new Date(time + lifetimeMs).toISOString(),
    });
    const use = () =>
      authenticator
        .authenticate({
          // Plain HTTP to a loopback host: the plain-named cookie is the one that counts.
          headers: { cookie: `mcph_session=${cookie}`, host: '127.0.0.1:8080' },
          socket: {},
        } as unknown as IncomingMessage)
        .then(
          () => 'ok',
          (error: { code?: string }) => error.code,
        );
    return { store, use };
  }

  afterAll(async () => {
    await target.teardown();
  });

  it('ends a session unused for the idle time', async () => {
    const { store, use } = await sessionWith(10 * MINUTE, 60 * MINUTE);
    try {
      time += 9 * MINUTE;
      expect(await use()).toBe('ok');
      time += 10 * MINUTE + 1000;
      expect(await use()).toBe('ERR_UNAUTHORIZED');
    } finally {
      await store.close();
    }
  });

  it('keeps a session in use past the idle time, and ends it at its lifetime', async () => {
    const { store, use } = await sessionWith(10 * MINUTE, 30 * MINUTE);
    try {
      for (let minute = 0; minute < 29; minute += 3) {
        expect(await use(), `minute ${minute}`).toBe('ok');
        time += 3 * MINUTE;
      }
      time += 2 * MINUTE;
      expect(await use()).toBe('ERR_UNAUTHORIZED');
    } finally {
      await store.close();
    }
  });

  // A use is recorded at most once a minute and the idle end counts from the recorded use: with
  // a one-minute idle time a busy session must still be recorded often enough to live on.
  it('keeps a busy session with a one-minute idle time', async () => {
    const { store, use } = await sessionWith(MINUTE, 60 * MINUTE);
    try {
      for (let second = 0; second <= 120; second += 20) {
        expect(await use(), `second ${second}`).toBe('ok');
        time += 20_000;
      }
    } finally {
      await store.close();
    }
  });
});
