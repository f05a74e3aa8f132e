/**
 * The OAuth gate in front of `/mcp`, over real HTTP listeners: an
 * Authorization Server whose keys cannot be had answers 503
 * ERR_AUTH_SERVER_UNAVAILABLE (the token may be fine: no 401), and so does a
 * stored jwks_uri the policy no longer accepts; an unexpected exception while
 * checking a token is not dressed up as that outage but answered as the bug
 * it is (500 ERR_INTERNAL, the detail in the log only). Keys are served on
 * loopback and fetched as the service fetches them (the egress-guarded fetch).
 */
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceUrlFor } from '../../../control-plane/identity/index.js';
import {
  createGuardedFetch,
  EgressPolicy,
  systemLookup,
  type GuardedFetch,
} from '../../../control-plane/broker/index.js';
import { loadConfig, serverAddress, type Config } from '../../../control-plane/config.js';
import { GENERIC_MESSAGE } from '../../../control-plane/errors.js';
import { sendJson } from '../../../control-plane/http/error-response.js';
import { startListeners, type Listeners } from '../../../control-plane/http/http-listeners.js';
import { TrustedProxies } from '../../../control-plane/http/index.js';
import { ServerGate } from '../../../control-plane/http/server-gate.js';
import { DEFAULT_SERVER_TENANCY, type ServerRecord } from '../../../control-plane/store/records.js';
import { signToken, validClaims } from '../../auth/helpers/forge-token.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  answerRoutes,
  closedPortUrl,
  freePort,
  startLoopbackServer,
  type LoopbackServer,
} from '../../support/loopback-server.js';

const ISSUER = 'https://as.example.com';

let keys: LoopbackServer;
let privateJwk: JWK & { kid: string; alg: string };
let egress: GuardedFetch;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  privateJwk = { ...(await exportJWK(privateKey)), kid: 'gate', alg: 'ES256' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'gate', alg: 'ES256', use: 'sig' };
  keys = await startLoopbackServer(answerRoutes({ '/jwks': { json: { keys: [publicJwk] } } }));
  // As app.ts wires it: the egress policy, loopback allowed in development.
  egress = createGuardedFetch({
    policy: EgressPolicy.fromAllowList([]),
    lookup: systemLookup,
    allowLoopback: true,
    connectTimeoutMs: 2_000,
  });
});
afterAll(async () => {
  await Promise.all([keys.close(), egress.agent.close()]);
});

/** A hosted server in OAuth 2.0 mode whose Authorization Server publishes `jwksUri`. */
function oauthServer(subdomain: string, jwksUri: string): ServerRecord {
  return {
    ...DEFAULT_SERVER_TENANCY,
    id: `id-${subdomain}`,
    subdomain,
    name: subdomain,
    securityMode: 'oauth2',
    oauthServerUrl: `${ISSUER}/.well-known/oauth-authorization-server`,
    oauthMetadata: { issuer: ISSUER, jwks_uri: jwksUri },
    oauthAudience: null,
    oauthRequiredScopes: [],
    limits: {},
    active: true,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** A gate fetching keys through `jwksFetch`, behind real listeners whose hosted side is the gate alone. */
async function startGate(
  jwksFetch: typeof fetch,
  servers: ServerRecord[],
  allowInsecureLoopback = true,
): Promise<{ gate: ServerGate; listeners: Listeners; config: Config; logged: unknown[] }> {
  const port = await freePort();
  const config = loadConfig(
    {
      PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
      OAUTH_ALLOW_INSECURE_LOOPBACK: String(allowInsecureLoopback),
    },
    '/nonexistent/.env',
  );
  const gate = new ServerGate(config, jwksFetch);
  const logged: unknown[] = [];
  const listeners = await startListeners({
    port,
    host: '127.0.0.1',
    routing: { baseDomain: 'localhost', hostForm: true, pathForm: null },
    trustedProxies: TrustedProxies.parse([]),
    // As the hosted side answers: the refusal as the gate gives it; here 200 when admitted.
    hosted: async (req, res, url, { subdomain, form }) => {
      const server = servers.find((candidate) => candidate.subdomain === subdomain)!;
      const authentication = await gate.authenticate(server, req, url, form);
      req.resume();
      if (authentication.ok) sendJson(res, 200, { caller: authentication.caller });
      else sendJson(res, authentication.status, authentication.body, authentication.headers);
    },
    admin: async (_req, res) => sendJson(res, 404, {}),
    onRequest: () => undefined,
    onError: (error) => logged.push(error),
  });
  started.push(listeners);
  return { gate, listeners, config, logged };
}
const started: Listeners[] = [];
afterAll(() => Promise.all(started.map((listeners) => listeners.close())));

async function post(listeners: Listeners, subdomain: string, token: string) {
  const response = await loopbackFetch(`http://${subdomain}.localhost:${listeners.port}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** A token for `subdomain`'s resource, signed with the served key. */
async function tokenFor(config: Config, subdomain: string): Promise<string> {
  const resource = resourceUrlFor(serverAddress(config, subdomain));
  return signToken(privateJwk, validClaims(ISSUER, resource));
}

describe('the OAuth gate', () => {
  it('admits a valid token and answers 503 ERR_AUTH_SERVER_UNAVAILABLE when the keys cannot be fetched', async () => {
    const unreachable = `${await closedPortUrl()}/jwks`;
    const { listeners, config, logged } = await startGate(egress.fetch, [
      oauthServer('good', `${keys.url}/jwks`),
      oauthServer('down', unreachable),
    ]);

    const admitted = await post(listeners, 'good', await tokenFor(config, 'good'));
    expect(admitted.status).toBe(200);
    expect(admitted.body.caller).toMatchObject({ kind: 'oauth', subject: 'attacker' });

    const refused = await post(listeners, 'down', await tokenFor(config, 'down'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.headers.get('www-authenticate')).toBeNull();
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: `authorization server keys at ${unreachable}: unreachable (ECONNREFUSED)`,
        data: { code: 'ERR_AUTH_SERVER_UNAVAILABLE' },
      },
    });
    expect(logged).toEqual([]);
  });

  it('answers 503 without fetching for a stored plain-HTTP jwks_uri the policy no longer accepts', async () => {
    const { listeners, config, logged } = await startGate(
      egress.fetch,
      [oauthServer('strict', `${keys.url}/jwks`)],
      false,
    );
    const fetchedBefore = keys.requests.length;
    const refused = await post(listeners, 'strict', await tokenFor(config, 'strict'));
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      message: expect.stringMatching(/no longer accepted.*OAUTH_ALLOW_INSECURE_LOOPBACK/),
      data: { code: 'ERR_AUTH_SERVER_UNAVAILABLE' },
    });
    expect(keys.requests.length).toBe(fetchedBefore);
    expect(logged).toEqual([]);
  });

  it('answers an unexpected exception in the verifier as a bug (500), not as the AS being unavailable', async () => {
    const bug = new RangeError('a bug while fetching the keys');
    const broken = (async () => {
      throw bug;
    }) as unknown as typeof fetch;
    const { listeners, config, logged } = await startGate(broken, [
      oauthServer('buggy', `${keys.url}/jwks`),
    ]);
    const answered = await post(listeners, 'buggy', await tokenFor(config, 'buggy'));
    expect(answered.status).toBe(500);
    expect(answered.body).toEqual({ error: { code: 'ERR_INTERNAL', message: GENERIC_MESSAGE } });
    expect(logged).toEqual([bug]);
  });
});
