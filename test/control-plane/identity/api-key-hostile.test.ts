/**
 * A hostile tenant against the API keys of hosted servers, for real: one
 * control plane on SQLite (another on PostgreSQL for the lookup flood), the
 * tenant holding keys of its own server "alpha" (or an operator account of
 * it), the victim "bravo". Each test is an attack that must fail: the
 * tenant's key on bravo however it is sent, bravo's session driven with
 * another key or none, alpha's rate and session quotas spent so that bravo's
 * callers (and alpha's other key) would be refused, a flood of made-up keys
 * while bravo's key must keep working, an old key on a server re-created
 * under its name, an operator administering keys or reading bravo's key ids
 * in the logs, and refusals that would tell a key of another server from an
 * unknown one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request, type OutgoingHttpHeaders } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, passwordSignIn } from '../../support/admin-requests.js';
import { callsInFlight } from '../../support/busy-containers.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { INITIALIZE_BODY, postInitialize } from '../../support/mcp-requests.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';

/** The hostile tenant's server, and the victim's. */
const ALPHA = 'alpha';
const BRAVO = 'bravo';
/** Servers with a small rate limit of their own. */
const METERED_A = 'metered-a';
const METERED_B = 'metered-b';
/** Deleted and created again under the same name. */
const PHOENIX = 'phoenix';

const PASSWORD = 'a long passphrase for the operator';
const UNKNOWN_REFUSAL = 'this API key is not valid for this server';
const INVALID_CHALLENGE = `Bearer realm="mcphost", error="invalid_token", error_description="${UNKNOWN_REFUSAL}"`;
const NAP_CODE = "await new Promise((r) => setTimeout(r, params.ms)); return 'slept';";

interface MintedKey {
  id: string;
  label: string;
  key: string;
}

let plane: TestControlPlane;
const sessions: SdkSession[] = [];
/** The tenant's key of alpha, a second key of alpha (another client), and the victim's key of bravo. */
let alphaKey: MintedKey;
let alphaOtherKey: MintedKey;
let bravoKey: MintedKey;

/** Creates a key of `subdomain` with the admin token. */
async function createKey(
  on: TestControlPlane,
  subdomain: string,
  label: string,
): Promise<MintedKey> {
  const created = await on.admin('POST', `/api/servers/${subdomain}/api-keys`, { label });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, label: created.body.label, key: created.body.key };
}

/** A server in API-key mode with a tool that sleeps `ms`. */
async function createKeyedServer(
  on: TestControlPlane,
  subdomain: string,
  settings: Record<string, unknown> = {},
): Promise<void> {
  expect((await on.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  const tool = await on.admin('PUT', `/api/servers/${subdomain}/tools/nap`, {
    description: 'Sleeps for ms milliseconds.',
    parameters: [{ name: 'ms', type: 'number', required: true }],
    code: NAP_CODE,
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const switched = await on.admin('PATCH', `/api/servers/${subdomain}/settings`, {
    securityMode: 'apikey',
    ...settings,
  });
  expect(switched.status, JSON.stringify(switched.body)).toBe(200);
}

const bearer = (key: MintedKey | string) => ({
  authorization: `Bearer ${typeof key === 'string' ? key : key.key}`,
});

/** A key of the right shape that no server has. */
const madeUpKey = () => `mcph_ak_${randomBytes(32).toString('base64url')}`;

/** The status of an initialize sent with `headers`; the body is dropped. */
async function initializeStatus(
  on: TestControlPlane,
  subdomain: string,
  headers: Record<string, string>,
): Promise<number> {
  const response = await postInitialize(on.mcpUrl(subdomain), headers);
  await response.body?.cancel();
  return response.status;
}

/** A POST to `/mcp` inside session `sessionId` (tools/list), or GET/DELETE on it. */
function inSession(
  subdomain: string,
  sessionId: string,
  headers: Record<string, string>,
  method: 'POST' | 'GET' | 'DELETE' = 'POST',
): Promise<Response> {
  return loopbackFetch(plane.mcpUrl(subdomain), {
    method,
    headers: {
      ...headers,
      accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    body:
      method === 'POST'
        ? JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
        : undefined,
  });
}

/** Opens a session on `subdomain` with `headers`: its id. */
async function openSession(subdomain: string, headers: Record<string, string>): Promise<string> {
  const opened = await postInitialize(plane.mcpUrl(subdomain), headers);
  expect(opened.status).toBe(200);
  await opened.body?.cancel();
  const id = opened.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  return id!;
}

/** An SDK session on `subdomain` sending `headers`. */
async function connect(subdomain: string, headers: Record<string, string>): Promise<SdkSession> {
  const session = await connectSdkSession(plane.mcpUrl(subdomain), { requestInit: { headers } });
  sessions.push(session);
  return session;
}

/** Everything a refusal shows a client, minus what differs per request (date, request id). */
async function visibleAnswer(response: Response) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'x-request-id') headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

/**
 * A raw initialize to `subdomain` whose headers may repeat (an array value is
 * sent as that many header lines, which fetch would join into one).
 */
function rawInitialize(
  subdomain: string,
  headers: OutgoingHttpHeaders,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: plane.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          host: `${subdomain}.localhost:${plane.port}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE_BODY);
  });
}

/** Signs `email` in and mints its personal token. */
async function personalTokenOf(on: TestControlPlane, email: string): Promise<string> {
  const signIn = await passwordSignIn(on.adminUrl, email, PASSWORD);
  expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
  const minted = await adminRequest(on.adminUrl, 'POST', '/api/me/tokens', {
    cookie: signIn.cookie,
    csrf: signIn.csrf,
    body: { label: 'hostile operator' },
  });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body.token;
}

function text(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

beforeAll(async () => {
  plane = await startTestControlPlane({
    // No warm containers: only the few tests that run a tool start one, on demand.
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    POOL_MAX_SIZE: '1',
    MCP_MAX_SESSIONS_PER_CALLER: '2',
    MCP_MAX_SESSIONS_PER_SERVER: '6',
    SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
    // Every client here is loopback, one network: the brake per network (its own test,
    // hosted-auth-flood) would stop them all; what is tested here is each key's defences.
    MCP_AUTH_FAILURES_PER_MINUTE: '0',
  });
  for (const subdomain of [ALPHA, BRAVO, PHOENIX]) await createKeyedServer(plane, subdomain);
  for (const subdomain of [METERED_A, METERED_B]) {
    await createKeyedServer(plane, subdomain, { rateLimit: { perMinute: 60, burst: 3 } });
  }
  alphaKey = await createKey(plane, ALPHA, 'tenant of alpha');
  alphaOtherKey = await createKey(plane, ALPHA, 'another client of alpha');
  bravoKey = await createKey(plane, BRAVO, 'bravo payroll robot');
}, 180_000);

afterAll(async () => {
  await Promise.all(sessions.map((session) => session.client.close().catch(() => undefined)));
  await plane?.close();
});

describe("alpha's key at bravo's door", () => {
  it('is refused however it is sent, exactly as a made-up key is', async () => {
    const key = alphaKey.key;
    const unknown = await visibleAnswer(
      await postInitialize(plane.mcpUrl(BRAVO), bearer(madeUpKey())),
    );
    expect(unknown.status).toBe(401);
    expect(unknown.headers['www-authenticate']).toBe(INVALID_CHALLENGE);
    const attempts: Record<string, string>[] = [
      bearer(key),
      { 'x-api-key': key },
      { authorization: `bearer ${key}` },
      { authorization: `BEARER \t ${key}  ` },
      { 'x-api-key': `  ${key}\t` },
      // Both headers: the bearer decides, whichever of them holds the key.
      { ...bearer(key), 'x-api-key': key },
      { ...bearer(madeUpKey()), 'x-api-key': key },
      // A bearer that is no key, or another scheme, hands over to X-API-Key: still alpha's.
      { authorization: 'Bearer ', 'x-api-key': key },
      { authorization: 'Basic dTpw', 'x-api-key': key },
      // Variations of the key itself.
      bearer(key.toUpperCase()),
      bearer(`MCPH_AK_${key.slice('mcph_ak_'.length)}`),
      bearer(`${key}=`),
      bearer(key.slice(0, -1)),
    ];
    for (const headers of attempts) {
      const answer = await visibleAnswer(await postInitialize(plane.mcpUrl(BRAVO), headers));
      expect(answer, JSON.stringify(headers)).toEqual(unknown);
    }
    // The same key opens its own server: the refusals above were about the server.
    expect(await initializeStatus(plane, ALPHA, bearer(key))).toBe(200);
  });

  it('is refused in repeated headers, which Node joins or drops', async () => {
    const key = alphaKey.key;
    // The helper itself works: alpha's key once opens alpha.
    expect((await rawInitialize(ALPHA, { 'x-api-key': key })).status).toBe(200);
    const attempts: OutgoingHttpHeaders[] = [
      { 'x-api-key': [key, key] },
      { 'x-api-key': [madeUpKey(), key] },
      // Node's types allow one Authorization; a client may still send two.
      { authorization: [`Bearer ${key}`, `Bearer ${key}`] as unknown as string },
      { authorization: [`Bearer ${madeUpKey()}`, `Bearer ${key}`] as unknown as string },
      { authorization: ['Basic dTpw', `Bearer ${key}`] as unknown as string, 'x-api-key': [key] },
    ];
    for (const headers of attempts) {
      const answer = await rawInitialize(BRAVO, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(answer.body).toContain(UNKNOWN_REFUSAL);
    }
  });

  it('is not read from the query string', async () => {
    const url = plane.mcpUrl(BRAVO);
    url.searchParams.set('api_key', bravoKey.key);
    url.searchParams.set('key', bravoKey.key);
    const response = await postInitialize(url);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/an API key is required/);
    await response.body?.cancel();
  });
});

describe("bravo's sessions", () => {
  it('cannot be driven with alpha’s key or with no key, on either server', async () => {
    const bravoSession = await openSession(BRAVO, bearer(bravoKey));
    const noKey = await inSession(BRAVO, bravoSession, {});
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/an API key is required/);
    await noKey.body?.cancel();
    for (const headers of [bearer(alphaKey), { 'x-api-key': alphaKey.key }]) {
      const onBravo = await inSession(BRAVO, bravoSession, headers);
      expect(onBravo.status).toBe(401);
      expect(onBravo.headers.get('www-authenticate')).toBe(INVALID_CHALLENGE);
      await onBravo.body?.cancel();
    }
    // Through alpha's door with alpha's key, bravo's session id is as unknown as a made-up one.
    const madeUp = await visibleAnswer(await inSession(ALPHA, randomUUID(), bearer(alphaKey)));
    expect(madeUp.status).toBe(404);
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      const answer = await visibleAnswer(
        await inSession(ALPHA, bravoSession, bearer(alphaKey), method),
      );
      expect(answer.status, method).toBe(404);
      expect(answer.body).toContain('ERR_SESSION_NOT_FOUND');
      if (method === 'POST') expect(answer).toEqual(madeUp);
    }
    // The DELETE above closed nothing: bravo's key still drives its session.
    const owner = await inSession(BRAVO, bravoSession, bearer(bravoKey));
    expect(owner.status).toBe(200);
    expect(await owner.text()).toContain('"nap"');
  });

  it('cannot be taken over by alpha’s key on the same server after its own key is revoked', async () => {
    // A session of alpha's other client: alpha's tenant key may not adopt it, revoked or not.
    const victim = await createKey(plane, ALPHA, 'short-lived client');
    const sessionId = await openSession(ALPHA, bearer(victim));
    const revoked = await plane.admin('DELETE', `/api/servers/${ALPHA}/api-keys/${victim.id}`);
    expect(revoked.status).toBe(204);
    const adopted = await inSession(ALPHA, sessionId, bearer(alphaKey));
    expect(adopted.status).toBe(404);
    await adopted.body?.cancel();
  });
});

describe('what one key spends', () => {
  it('a key that exhausts its rate leaves its server’s other key and another server alone', async () => {
    const spender = await createKey(plane, METERED_A, 'spender');
    const neighbour = await createKey(plane, METERED_A, 'neighbour');
    const other = await createKey(plane, METERED_B, 'other tenant');
    // The spender's key, refused at the other server, costs that server's callers nothing.
    for (let index = 0; index < 10; index += 1) {
      expect(await initializeStatus(plane, METERED_B, bearer(spender))).toBe(401);
    }
    const statuses: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      statuses.push(await initializeStatus(plane, METERED_A, bearer(spender)));
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.at(-1)).toBe(429);
    // The same address, other keys: each with its whole burst.
    for (let index = 0; index < 3; index += 1) {
      expect(await initializeStatus(plane, METERED_A, bearer(neighbour))).toBe(200);
      expect(await initializeStatus(plane, METERED_B, bearer(other))).toBe(200);
    }
  });

  it('a key opening session after session evicts only its own idle sessions', async () => {
    const neighbour = await connect(ALPHA, bearer(alphaOtherKey));
    const victim = await connect(BRAVO, bearer(bravoKey));
    const statuses: number[] = [];
    // Twice the server's quota (6), from the address every other caller here uses too.
    for (let index = 0; index < 12; index += 1) {
      statuses.push(await initializeStatus(plane, ALPHA, bearer(alphaKey)));
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect((await neighbour.client.listTools()).tools.map((tool) => tool.name)).toEqual(['nap']);
    expect((await victim.client.listTools()).tools.map((tool) => tool.name)).toEqual(['nap']);
  });

  it('a key whose sessions are all busy is refused alone; other keys still get sessions', async () => {
    const pinned = await Promise.all([
      connect(ALPHA, bearer(alphaKey)),
      connect(ALPHA, bearer(alphaKey)),
    ]);
    const calls = pinned.map(({ client }) =>
      client.callTool({ name: 'nap', arguments: { ms: 2500 } }),
    );
    await expect.poll(() => callsInFlight(plane, ALPHA), { timeout: 30_000 }).toBe(2);
    const refused = await postInitialize(plane.mcpUrl(ALPHA), bearer(alphaKey));
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('ERR_SESSION_QUOTA');
    // Alpha's other client and bravo's client are not this key.
    expect(await initializeStatus(plane, ALPHA, bearer(alphaOtherKey))).toBe(200);
    expect(await initializeStatus(plane, BRAVO, bearer(bravoKey))).toBe(200);
    for (const result of (await Promise.all(calls)) as CallToolResult[]) {
      expect(text(result)).toBe('slept');
    }
  }, 90_000);
});

describe('a flood of made-up keys', () => {
  it('leaves bravo’s key working throughout', async () => {
    // Cached before the flood, as a key in use is.
    expect(await initializeStatus(plane, BRAVO, bearer(bravoKey))).toBe(200);
    const flood = Promise.all(
      Array.from({ length: 600 }, () => initializeStatus(plane, ALPHA, bearer(madeUpKey()))),
    );
    const during: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      during.push(await initializeStatus(plane, BRAVO, bearer(bravoKey)));
    }
    const flooded = await flood;
    expect(new Set(flooded).has(200)).toBe(false);
    expect(during).toEqual([200, 200, 200, 200, 200]);
  }, 60_000);
});

describe('a key and its server', () => {
  it('an old key, revoked or not, does not open a new server of the same name', async () => {
    const active = await createKey(plane, PHOENIX, 'kept');
    const revoked = await createKey(plane, PHOENIX, 'revoked');
    // Both cached: in use until the server goes.
    expect(await initializeStatus(plane, PHOENIX, bearer(active))).toBe(200);
    expect(await initializeStatus(plane, PHOENIX, bearer(revoked))).toBe(200);
    expect(
      (await plane.admin('DELETE', `/api/servers/${PHOENIX}/api-keys/${revoked.id}`)).status,
    ).toBe(204);
    expect((await plane.admin('DELETE', `/api/servers/${PHOENIX}`)).status).toBe(204);
    await createKeyedServer(plane, PHOENIX);
    for (const old of [active, revoked]) {
      const answer = await postInitialize(plane.mcpUrl(PHOENIX), bearer(old));
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(INVALID_CHALLENGE);
      await answer.body?.cancel();
    }
    const listed = await plane.admin('GET', `/api/servers/${PHOENIX}/api-keys`);
    expect(listed.body.apiKeys).toEqual([]);
    const reborn = await createKey(plane, PHOENIX, 'new');
    expect(await initializeStatus(plane, PHOENIX, bearer(reborn))).toBe(200);
  });

  it('a key id of bravo cannot be revoked through alpha’s path', async () => {
    const target = await createKey(plane, BRAVO, 'target of a cross revoke');
    const cross = await plane.admin('DELETE', `/api/servers/${ALPHA}/api-keys/${target.id}`);
    const madeUpId = randomUUID();
    const madeUp = await plane.admin('DELETE', `/api/servers/${ALPHA}/api-keys/${madeUpId}`);
    expect(cross.status).toBe(404);
    // Nothing tells an id of another server from a made-up one.
    expect(JSON.stringify(cross.body).replaceAll(target.id, 'ID')).toBe(
      JSON.stringify(madeUp.body).replaceAll(madeUpId, 'ID'),
    );
    expect(await initializeStatus(plane, BRAVO, bearer(target))).toBe(200);
  });
});

describe('an operator of alpha', () => {
  let token: string;
  const asOperator = (method: string, path: string, body?: unknown) =>
    adminRequest(plane.adminUrl, method, path, { bearer: token, body });

  beforeAll(async () => {
    const email = 'alpha-operator@example.test';
    const created = await plane.admin('POST', '/api/accounts', {
      email,
      role: 'operator',
      servers: [ALPHA],
      password: PASSWORD,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    token = await personalTokenOf(plane, email);
    // Bravo's key has been used for a call: the invocation log names it.
    const session = await connect(BRAVO, bearer(bravoKey));
    const result = (await session.client.callTool({
      name: 'nap',
      arguments: { ms: 1 },
    })) as CallToolResult;
    expect(text(result)).toBe('slept');
  }, 90_000);

  it('may neither create nor revoke keys, of alpha or bravo', async () => {
    const before = await plane.admin('GET', `/api/servers/${ALPHA}/api-keys`);
    for (const subdomain of [ALPHA, BRAVO]) {
      const created = await asOperator('POST', `/api/servers/${subdomain}/api-keys`, {
        label: 'mine now',
      });
      expect(created.status).toBe(403);
      expect(created.body.error.code).toBe('ERR_FORBIDDEN');
      expect(JSON.stringify(created.body)).not.toContain('mcph_ak_');
    }
    for (const [subdomain, key] of [
      [ALPHA, alphaOtherKey],
      [BRAVO, bravoKey],
    ] as const) {
      const revoked = await asOperator('DELETE', `/api/servers/${subdomain}/api-keys/${key.id}`);
      expect(revoked.status).toBe(403);
      expect(await initializeStatus(plane, subdomain, bearer(key))).toBe(200);
    }
    const after = await plane.admin('GET', `/api/servers/${ALPHA}/api-keys`);
    expect(after.body.apiKeys).toEqual(before.body.apiKeys);
    expect(
      (await plane.admin('GET', `/api/servers/${BRAVO}/api-keys`)).body.apiKeys,
    ).not.toContainEqual(expect.objectContaining({ label: 'mine now' }));
  });

  it('may not list bravo’s keys, and cannot tell bravo from a server that does not exist', async () => {
    const bravo = await asOperator('GET', `/api/servers/${BRAVO}/api-keys`);
    const nowhere = await asOperator('GET', '/api/servers/nowhere/api-keys');
    expect(bravo.status).toBe(403);
    expect(nowhere.status).toBe(403);
    expect(JSON.stringify(bravo.body).replaceAll(BRAVO, 'X')).toBe(
      JSON.stringify(nowhere.body).replaceAll('nowhere', 'X'),
    );
    const own = await asOperator('GET', `/api/servers/${ALPHA}/api-keys`);
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).not.toContain(bravoKey.id);
  });

  it('finds none of bravo’s key ids or labels in the invocation or audit logs', async () => {
    const bravoInvocations = await plane.admin('GET', `/api/invocations?server=${BRAVO}`);
    // The victim's entries exist and name its key: there is something to leak.
    expect(JSON.stringify(bravoInvocations.body)).toContain(bravoKey.id);
    const bravoAudit = await plane.admin('GET', `/api/audit?server=${BRAVO}&action=api-key.create`);
    expect(JSON.stringify(bravoAudit.body)).toContain(bravoKey.label);

    const reads = [
      '/api/invocations',
      '/api/invocations?limit=500',
      '/api/audit',
      '/api/audit?limit=500&action=api-key.create',
      '/api/audit?outcome=ok&limit=500',
      '/api/audit?actor=admin%20token&limit=500',
      '/api/servers',
    ];
    for (const path of reads) {
      const answer = await asOperator('GET', path);
      expect(answer.status, path).toBe(200);
      const seen = JSON.stringify(answer.body);
      expect(seen, path).not.toContain(bravoKey.id);
      expect(seen, path).not.toContain(bravoKey.label);
      expect(seen, path).not.toContain(`"${BRAVO}"`);
    }
    for (const path of [`/api/invocations?server=${BRAVO}`, `/api/audit?server=${BRAVO}`]) {
      expect((await asOperator('GET', path)).status, path).toBe(403);
    }
  });
});

describe('a refusal on alpha', () => {
  /** Milliseconds an initialize with `headers` to alpha takes, and what it showed. */
  async function timedRefusal(headers: Record<string, string>) {
    const started = process.hrtime.bigint();
    const response = await postInitialize(plane.mcpUrl(ALPHA), headers);
    const answer = await visibleAnswer(response);
    return { ms: Number(process.hrtime.bigint() - started) / 1e6, answer };
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

  it('reads and takes alike for a key of bravo and a made-up key, first seen or again', async () => {
    const bravoKeys: string[] = [];
    for (let index = 0; index < 30; index += 1) {
      bravoKeys.push((await createKey(plane, BRAVO, `probe ${index}`)).key);
    }
    const madeUp = bravoKeys.map(() => madeUpKey());
    const times = { bravo: [] as number[], madeUp: [] as number[] };
    // First seen (a store lookup each), then again (from the cache): interleaved, so load hits both.
    for (const round of ['cold', 'warm', 'warm']) {
      for (let index = 0; index < bravoKeys.length; index += 1) {
        const ofBravo = await timedRefusal(bearer(bravoKeys[index]!));
        const ofNobody = await timedRefusal(bearer(madeUp[index]!));
        expect(ofBravo.answer, round).toEqual(ofNobody.answer);
        expect(ofBravo.answer.status).toBe(401);
        times.bravo.push(ofBravo.ms);
        times.madeUp.push(ofNobody.ms);
      }
    }
    console.log(median(times.bravo), median(times.madeUp), times);
  });
});
