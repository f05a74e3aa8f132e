/**
 * The audit log through a real control plane (SQLite): a scripted sequence
 * of changes by three kinds of actor — the bootstrap admin token, an admin
 * account through its personal token, an operator through its dashboard
 * session — plus sign-ins and a refusal, then `GET /api/audit` read back:
 * each entry names who, what, where, from which address and request, with a
 * before/after that holds no secret; filters and paging cover every entry
 * exactly once; an operator reads only its servers' entries.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';
import { adminRequest, type AdminAnswer } from '../../support/admin-requests.js';

const PASSWORD = 'correct horse battery staple';
const SERVER = 'audited';
const OTHER = 'elsewhere';
/** A secret value no entry may ever hold. */
const SECRET_VALUE = `s3cret-${randomBytes(12).toString('hex')}`;
const LEAKY_VALUE = `leaky-${randomBytes(12).toString('hex')}`;
const TOOL_CODE = "return 'audited tool';";
/** Where requests claim to come from, through the trusted proxy (127.0.0.1). */
const FORWARDED_CLIENT = '203.0.113.9';

interface Credentials {
  bearer?: string;
  cookie?: string;
  csrf?: string;
}

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; id: string | null; label: string };
  action: string;
  server: string | null;
  target: string | null;
  outcome: 'ok' | 'denied' | 'failed';
  clientAddress: string | null;
  requestId: string | null;
  summary: { before?: any; after?: any; note?: string };
}

let plane: TestControlPlane;
/** Every secret that passed through the API: none may appear in the audit log. */
const secrets: string[] = [SECRET_VALUE, LEAKY_VALUE, PASSWORD, TEST_ADMIN_TOKEN];
let step = 0;

/** One admin request with its own X-Request-Id; answers the status, body and that id. */
async function call(
  method: string,
  path: string,
  who: Credentials,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<AdminAnswer & { requestId: string }> {
  const requestId = `audit-test-${++step}-${randomBytes(4).toString('hex')}`;
  const answer = await adminRequest(plane.adminUrl, method, path, {
    ...who,
    requestId,
    body,
    headers,
  });
  expect(answer.headers.get('x-request-id')).toBe(requestId);
  return { ...answer, requestId };
}

const bootstrap: Credentials = { bearer: TEST_ADMIN_TOKEN };

async function expectStatus(
  answer: Promise<{ status: number; body: any; requestId: string }>,
  status: number,
) {
  const settled = await answer;
  expect(settled.status, JSON.stringify(settled.body)).toBe(status);
  return settled;
}

async function signIn(email: string, password: string) {
  const answer = await call('POST', '/api/auth/password', {}, { email, password });
  const cookie = answer.headers.getSetCookie()[0]?.split(';')[0];
  if (cookie !== undefined) secrets.push(cookie.split('=')[1]!);
  if (answer.body?.csrfToken) secrets.push(answer.body.csrfToken);
  return { ...answer, cookie, csrf: answer.body?.csrfToken as string | undefined };
}

async function audit(query: string, who: Credentials = bootstrap) {
  return call('GET', `/api/audit${query}`, who);
}

/** Every entry, newest first, through the pages. */
async function everyEntry(query = '', who: Credentials = bootstrap): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  do {
    const separator = query === '' ? '?' : '&';
    const page = await audit(
      `${query}${cursor === null ? '' : `${separator}cursor=${cursor}`}`,
      who,
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    entries.push(...page.body.entries);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  return entries;
}

/** What the scripted sequence did: request ids by step, and the actors. */
const done = {} as Record<string, string>;
const actors = {} as Record<
  'admin' | 'operator' | 'viewer' | 'signer',
  { id: string; email: string }
>;
let operatorSession: Credentials;
let adminToken: string;
let viewerToken: string;
let apiKeyId: string;
let tokenId: string;

beforeAll(async () => {
  plane = await startTestControlPlane({
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
    TRUSTED_PROXIES: '127.0.0.1',
  });

  // The bootstrap token sets the scene: two servers and the people.
  done.serverCreate = (
    await expectStatus(call('POST', '/api/servers', bootstrap, { subdomain: SERVER }), 201)
  ).requestId;
  await expectStatus(call('POST', '/api/servers', bootstrap, { subdomain: OTHER }), 201);
  await expectStatus(
    call('PUT', `/api/servers/${OTHER}/tools/elsewhere`, bootstrap, {
      description: 'not the operator’s',
      code: 'return 1;',
    }),
    201,
  );
  for (const [role, extra] of [
    ['admin', {}],
    ['operator', { servers: [SERVER] }],
    ['viewer', {}],
  ] as const) {
    const created = await expectStatus(
      call('POST', '/api/accounts', bootstrap, {
        email: `${role}@example.test`,
        role,
        password: PASSWORD,
        ...extra,
      }),
      201,
    );
    actors[role] = { id: created.body.id, email: created.body.email };
    if (role === 'admin') done.accountCreate = created.requestId;
  }

  // The admin works through a personal token made in its session.
  const adminSession = await signIn('admin@example.test', PASSWORD);
  const minted = await expectStatus(
    call(
      'POST',
      '/api/me/tokens',
      { cookie: adminSession.cookie!, csrf: adminSession.csrf! },
      { label: 'automation' },
    ),
    201,
  );
  adminToken = minted.body.token;
  tokenId = minted.body.id;
  secrets.push(adminToken);
  done.tokenCreate = minted.requestId;
  const admin: Credentials = { bearer: adminToken };
  done.settings = (
    await expectStatus(
      call('PATCH', `/api/servers/${SERVER}/settings`, admin, { securityMode: 'apikey' }),
      200,
    )
  ).requestId;
  const key = await expectStatus(
    call('POST', `/api/servers/${SERVER}/api-keys`, admin, { label: 'client one' }),
    201,
  );
  secrets.push(key.body.key);
  apiKeyId = key.body.id;
  done.keyCreate = key.requestId;
  done.keyRevoke = (
    await expectStatus(call('DELETE', `/api/servers/${SERVER}/api-keys/${apiKeyId}`, admin), 204)
  ).requestId;

  // The operator works in its dashboard session, from behind the trusted proxy.
  const operator = await signIn('operator@example.test', PASSWORD);
  operatorSession = { cookie: operator.cookie!, csrf: operator.csrf! };
  const viaProxy = { 'x-forwarded-for': FORWARDED_CLIENT };
  done.toolSave = (
    await expectStatus(
      call(
        'PUT',
        `/api/servers/${SERVER}/tools/greet`,
        operatorSession,
        { description: 'greets', code: TOOL_CODE },
        viaProxy,
      ),
      201,
    )
  ).requestId;
  done.secretSave = (
    await expectStatus(
      call(
        'PUT',
        `/api/servers/${SERVER}/secrets/API_TOKEN`,
        operatorSession,
        { value: SECRET_VALUE },
        viaProxy,
      ),
      200,
    )
  ).requestId;
  done.secretDelete = (
    await expectStatus(
      call(
        'DELETE',
        `/api/servers/${SERVER}/secrets/API_TOKEN`,
        operatorSession,
        undefined,
        viaProxy,
      ),
      204,
    )
  ).requestId;
  // A test run of a tool that throws its secret: the entry keeps the verdict, redacted.
  await expectStatus(
    call('PUT', `/api/servers/${SERVER}/secrets/LEAKY`, operatorSession, { value: LEAKY_VALUE }),
    200,
  );
  await expectStatus(
    call('PUT', `/api/servers/${SERVER}/tools/leak`, operatorSession, {
      description: 'throws its secret',
      secrets: ['LEAKY'],
      code: "throw new Error('the secret is ' + env.LEAKY);",
    }),
    201,
  );
  const run = await expectStatus(
    call('POST', `/api/servers/${SERVER}/tools/leak/invoke`, operatorSession, { params: {} }),
    200,
  );
  expect(run.body.ok).toBe(false);
  done.toolInvoke = run.requestId;
  done.promptSave = (
    await expectStatus(
      call('PUT', `/api/servers/${SERVER}/prompts/hello`, operatorSession, {
        description: 'says hello',
        messages: [{ role: 'user', content: { type: 'text', text: 'Hello there' } }],
      }),
      201,
    )
  ).requestId;
  done.resourceSave = (
    await expectStatus(
      call('PUT', `/api/servers/${SERVER}/resources/readme`, operatorSession, {
        uri: 'docs://readme',
        text: 'Read me first.',
      }),
      201,
    )
  ).requestId;
  done.poolResize = (
    await expectStatus(
      call('PUT', `/api/pools/${SERVER}`, operatorSession, { minWarm: 0, maxSize: 2 }),
      200,
    )
  ).requestId;

  // Sign-ins: a failed one and a good one, by an account made with a password.
  const signer = await expectStatus(
    call('POST', '/api/accounts', bootstrap, {
      email: 'signer@example.test',
      role: 'viewer',
      password: `${PASSWORD} too`,
    }),
    201,
  );
  secrets.push(`${PASSWORD} too`);
  actors.signer = { id: signer.body.id, email: signer.body.email };
  done.signerCreate = signer.requestId;
  done.signInFailed = (await signIn('signer@example.test', 'a wrong password here')).requestId;
  done.signInUnknown = (await signIn('nobody@example.test', 'a wrong password here')).requestId;
  done.signInOk = (await signIn('signer@example.test', `${PASSWORD} too`)).requestId;
  secrets.push('a wrong password here');

  // A viewer tries what it may not.
  const viewerSession = await signIn('viewer@example.test', PASSWORD);
  viewerToken = (
    await expectStatus(
      call(
        'POST',
        '/api/me/tokens',
        { cookie: viewerSession.cookie!, csrf: viewerSession.csrf! },
        { label: 'viewer' },
      ),
      201,
    )
  ).body.token;
  secrets.push(viewerToken);
  done.denied = (
    await expectStatus(call('DELETE', `/api/servers/${SERVER}`, { bearer: viewerToken }), 403)
  ).requestId;
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

/** The one entry written for the request `requestId`. */
async function entryOf(requestId: string): Promise<Entry> {
  const entries = (await everyEntry()).filter((entry) => entry.requestId === requestId);
  expect(entries, `one entry for ${requestId}`).toHaveLength(1);
  return entries[0]!;
}

describe('each change is one entry', () => {
  const bootstrapActor = { kind: 'bootstrap', id: null, label: 'admin token' };

  it('names the bootstrap token, the server and the new server’s settings', async () => {
    const entry = await entryOf(done.serverCreate!);
    expect(entry).toMatchObject({
      actor: bootstrapActor,
      action: 'server.create',
      server: SERVER,
      target: null,
      outcome: 'ok',
      clientAddress: '127.0.0.1',
    });
    expect(entry.summary.after).toMatchObject({ subdomain: SERVER, securityMode: 'none' });
    expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 120_000);
  });

  it('names an account created by the bootstrap token, without its password', async () => {
    const entry = await entryOf(done.accountCreate!);
    expect(entry).toMatchObject({
      actor: bootstrapActor,
      action: 'account.create',
      outcome: 'ok',
    });
    expect(entry.summary.after).toMatchObject({
      id: actors.admin.id,
      email: 'admin@example.test',
      role: 'admin',
      password: true,
    });
  });

  it('names the admin account behind a personal token, with the settings before and after', async () => {
    const entry = await entryOf(done.settings!);
    expect(entry).toMatchObject({
      actor: { kind: 'account', id: actors.admin.id, label: 'admin@example.test' },
      action: 'server.settings',
      server: SERVER,
      outcome: 'ok',
    });
    expect(entry.summary.before.securityMode).toBe('none');
    expect(entry.summary.after.securityMode).toBe('apikey');
  });

  it('records API keys and personal tokens without their secret', async () => {
    const created = await entryOf(done.keyCreate!);
    expect(created).toMatchObject({
      action: 'api-key.create',
      server: SERVER,
      actor: { id: actors.admin.id },
      outcome: 'ok',
    });
    expect(created.summary.after).toMatchObject({
      id: apiKeyId,
      label: 'client one',
      status: 'active',
    });
    expect(created.summary.after.key).toBeUndefined();
    const revoked = await entryOf(done.keyRevoke!);
    expect(revoked).toMatchObject({
      action: 'api-key.revoke',
      server: SERVER,
      target: apiKeyId,
      outcome: 'ok',
    });
    const token = await entryOf(done.tokenCreate!);
    expect(token).toMatchObject({
      action: 'personal-token.create',
      server: null,
      actor: { kind: 'account', id: actors.admin.id },
      outcome: 'ok',
    });
    expect(token.summary.after).toMatchObject({ id: tokenId, label: 'automation' });
    expect(token.summary.after.token).toBeUndefined();
  });

  it('names the operator’s session and the forwarded client address; a tool’s code as its digest', async () => {
    const entry = await entryOf(done.toolSave!);
    expect(entry).toMatchObject({
      actor: { kind: 'account', id: actors.operator.id, label: 'operator@example.test' },
      action: 'tool.save',
      server: SERVER,
      target: 'greet',
      outcome: 'ok',
      clientAddress: FORWARDED_CLIENT,
    });
    expect(entry.summary.before).toBeUndefined();
    const { createHash } = await import('node:crypto');
    expect(entry.summary.after).toMatchObject({
      version: 1,
      description: 'greets',
      code: {
        bytes: Buffer.byteLength(TOOL_CODE),
        sha256: createHash('sha256').update(TOOL_CODE).digest('hex'),
      },
    });
  });

  it('records a secret by its name only, saved and deleted', async () => {
    const saved = await entryOf(done.secretSave!);
    expect(saved).toMatchObject({
      action: 'secret.save',
      server: SERVER,
      target: 'API_TOKEN',
      outcome: 'ok',
      clientAddress: FORWARDED_CLIENT,
    });
    expect(saved.summary.after).toMatchObject({ name: 'API_TOKEN' });
    const deleted = await entryOf(done.secretDelete!);
    expect(deleted).toMatchObject({ action: 'secret.delete', target: 'API_TOKEN', outcome: 'ok' });
    expect(deleted.summary.before).toMatchObject({ name: 'API_TOKEN' });
    expect(deleted.summary.after).toBeUndefined();
  });

  it('records a test run by its verdict, the secret it threw redacted', async () => {
    const entry = await entryOf(done.toolInvoke!);
    expect(entry).toMatchObject({
      action: 'tool.invoke',
      server: SERVER,
      target: 'leak',
      outcome: 'ok',
      summary: { after: { ok: false, version: 1, durationMs: expect.any(Number) } },
    });
    expect(JSON.stringify(entry)).not.toContain(LEAKY_VALUE);
    expect(JSON.stringify(entry.summary.after.error)).toContain('[REDACTED:LEAKY]');
  });

  it('records prompts, resources and pool sizes', async () => {
    expect(await entryOf(done.promptSave!)).toMatchObject({
      action: 'prompt.save',
      server: SERVER,
      target: 'hello',
      outcome: 'ok',
      clientAddress: '127.0.0.1',
    });
    const resource = await entryOf(done.resourceSave!);
    expect(resource).toMatchObject({ action: 'resource.save', target: 'readme', outcome: 'ok' });
    expect(resource.summary.after.text).toMatchObject({ bytes: 14, sha256: expect.any(String) });
    const pool = await entryOf(done.poolResize!);
    expect(pool).toMatchObject({ action: 'pool.resize', server: SERVER, outcome: 'ok' });
    expect(pool.summary.after).toMatchObject({ minWarm: 0, maxSize: 2 });
  });

  it('records sign-ins, failed and good, with who they claimed to be', async () => {
    const failed = await entryOf(done.signInFailed!);
    expect(failed).toMatchObject({
      actor: { kind: 'account', id: actors.signer.id, label: 'signer@example.test' },
      action: 'sign-in.password',
      outcome: 'failed',
      server: null,
    });
    expect(failed.summary.note).toEqual(expect.any(String));
    const unknown = await entryOf(done.signInUnknown!);
    expect(unknown).toMatchObject({
      actor: { kind: 'anonymous', id: null, label: 'nobody@example.test' },
      action: 'sign-in.password',
      outcome: 'failed',
    });
    const ok = await entryOf(done.signInOk!);
    expect(ok).toMatchObject({
      actor: { kind: 'account', id: actors.signer.id },
      action: 'sign-in.password',
      outcome: 'ok',
    });
  });

  it('records a refusal as denied, naming the route’s action and server', async () => {
    const entry = await entryOf(done.denied!);
    expect(entry).toMatchObject({
      actor: { kind: 'account', id: actors.viewer.id, label: 'viewer@example.test' },
      action: 'server.delete',
      server: SERVER,
      outcome: 'denied',
    });
  });

  it('holds no secret value, password, API key, personal token, cookie or CSRF token', async () => {
    const text = JSON.stringify(await everyEntry());
    for (const secret of secrets) expect(text).not.toContain(secret);
    // A credential's listed prefix (its kind and 4 characters) may appear, never more of it.
    expect(text).not.toMatch(/mcph_(pat|ak)_[A-Za-z0-9_-]{5}/);
    expect(text).not.toMatch(/scrypt|passwordHash/i);
  });

  it('does not record reads', async () => {
    const before = (await everyEntry()).length;
    await call('GET', `/api/servers/${SERVER}/tools`, bootstrap);
    await call('GET', '/api/accounts', bootstrap);
    expect((await everyEntry()).length).toBe(before);
  });
});

describe('filters and pages', () => {
  it('filters by actor id or label, action, server and outcome', async () => {
    const all = await everyEntry();
    const byId = await everyEntry(`?actor=${actors.operator.id}`);
    expect(byId.length).toBeGreaterThanOrEqual(6);
    expect(byId.every((entry) => entry.actor.id === actors.operator.id)).toBe(true);
    expect(byId).toEqual(all.filter((entry) => entry.actor.id === actors.operator.id));
    const byLabel = await everyEntry(`?actor=${encodeURIComponent('admin token')}`);
    expect(byLabel.length).toBeGreaterThan(0);
    expect(byLabel).toEqual(all.filter((entry) => entry.actor.kind === 'bootstrap'));

    const saves = await everyEntry('?action=tool.save');
    expect(saves).toEqual(all.filter((entry) => entry.action === 'tool.save'));
    expect(saves.map((entry) => `${entry.server}/${entry.target}`).sort()).toEqual([
      `${SERVER}/greet`,
      `${SERVER}/leak`,
      `${OTHER}/elsewhere`,
    ]);
    const elsewhere = await everyEntry(`?server=${OTHER}`);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(elsewhere).toEqual(all.filter((entry) => entry.server === OTHER));
    for (const outcome of ['ok', 'failed', 'denied'] as const) {
      const some = await everyEntry(`?outcome=${outcome}`);
      expect(some.length, outcome).toBeGreaterThan(0);
      expect(some).toEqual(all.filter((entry) => entry.outcome === outcome));
    }
    const combined = await everyEntry(`?server=${SERVER}&outcome=denied&action=server.delete`);
    expect(combined.map((entry) => entry.requestId)).toEqual([done.denied]);
  });

  it('filters by time, bounds included', async () => {
    const all = await everyEntry();
    const middle = all[Math.floor(all.length / 2)]!;
    const since = await everyEntry(`?since=${encodeURIComponent(middle.at)}`);
    expect(since).toEqual(all.filter((entry) => entry.at >= middle.at));
    expect(since.map((entry) => entry.id)).toContain(middle.id);
    const until = await everyEntry(`?until=${encodeURIComponent(middle.at)}`);
    expect(until).toEqual(all.filter((entry) => entry.at <= middle.at));
    expect(until.map((entry) => entry.id)).toContain(middle.id);
    // A bound with an offset means the same instant.
    const shifted = new Date(Date.parse(middle.at) + 2 * 3600_000)
      .toISOString()
      .replace('Z', '+02:00');
    const withOffset = await everyEntry(`?since=${encodeURIComponent(shifted)}`);
    expect(withOffset).toEqual(since);
    const future = await audit(
      `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(future.body).toEqual({ entries: [], nextCursor: null });
  });

  it('pages newest first with limit and nextCursor, every entry exactly once', async () => {
    const whole = await audit('?limit=500');
    expect(whole.body.nextCursor).toBeNull();
    const all: Entry[] = whole.body.entries;
    expect(all.length).toBeGreaterThan(20);
    const ats = all.map((entry) => entry.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    const paged: Entry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await audit(`?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(3);
      paged.push(...page.body.entries);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(Math.ceil(all.length / 3));
    expect(paged.map((entry) => entry.id)).toEqual(all.map((entry) => entry.id));
    expect(new Set(paged.map((entry) => entry.id)).size).toBe(paged.length);
    // The default page is 100 entries.
    const first = await audit('');
    expect(first.body.entries).toEqual(all.slice(0, 100));
  });

  it('refuses a bad cursor, limit, outcome, bound or an unknown filter (400)', async () => {
    for (const query of [
      '?cursor=abc',
      '?cursor=-1',
      '?limit=0',
      '?limit=501',
      '?limit=ten',
      '?outcome=maybe',
      '?since=yesterday',
      '?until=2024-13-01T00:00:00Z',
      '?colour=blue',
    ]) {
      const answer = await audit(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code, query).toBe('ERR_VALIDATION');
    }
  });
});

describe('who reads what', () => {
  it('shows an operator its servers’ entries only, and refuses another server’s filter', async () => {
    const all = await everyEntry();
    const seen = await everyEntry('', operatorSession);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((entry) => entry.server === SERVER)).toBe(true);
    expect(seen).toEqual(all.filter((entry) => entry.server === SERVER));
    const own = await everyEntry(`?server=${SERVER}`, operatorSession);
    expect(own).toEqual(seen);
    const refused = await audit(`?server=${OTHER}`, operatorSession);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ERR_FORBIDDEN');
  });

  it('shows a viewer every entry', async () => {
    const all = await everyEntry();
    const seen = await everyEntry('', { bearer: viewerToken });
    // The viewer's reads are not entries: the two lists are the same.
    expect(seen.map((entry) => entry.id)).toEqual(all.map((entry) => entry.id));
  });

  it('answers 401 without a credential', async () => {
    const answer = await audit('', {});
    expect(answer.status).toBe(401);
  });
});
