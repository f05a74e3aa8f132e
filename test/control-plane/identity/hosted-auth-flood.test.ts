/**
 * A flood of made-up credentials at hosted servers, for real: one control
 * plane (SQLite), a server in API-key mode and one in OAuth 2.0 mode (a real
 * Authorization Server, oidc-provider), another tenant's client (the
 * official MCP SDK) calling a tool on its own server the whole time, and the
 * flood sent from a child process claiming one client network through the
 * trusted proxy (loopback).
 *
 * What must hold: past MCP_AUTH_FAILURES_PER_MINUTE failed authentications,
 * the flooding network is answered 429 with Retry-After before its
 * credential is looked at (no key lookup, no signature check), its right
 * credential included, each answer held back a second (so the flood slows to
 * its connections a second); a client of the same server on another
 * network, and the other tenant's client, are served throughout. The victim's calls per
 * second with and without the flood are printed (not asserted: timings).
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken, validClaims } from '../../auth/helpers/forge-token.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { floodCredentials, type CredentialFloodResult } from '../../support/credential-flood.js';
import { postInitialize } from '../../support/mcp-requests.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';

/** Failed authentications one network may cause a minute here. */
const FAILURES_ALLOWED = 30;
const CONCURRENCY = 32;
const FLOOD_MS = 4_000;
const MEASURE_MS = 3_000;

/** The attacker's servers, the victim tenant's servers. */
const KEYED = 'keyed';
const KEYED_VICTIM = 'keyed-victim';
const GUARDED = 'guarded';
const GUARDED_VICTIM = 'guarded-victim';

let plane: TestControlPlane;
let as: TestAuthorizationServer;
const sessions: SdkSession[] = [];

/** A server in `securityMode` with a tool answering at once. */
async function createServer(subdomain: string, settings: Record<string, unknown>): Promise<void> {
  expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
  const tool = await plane.admin('PUT', `/api/servers/${subdomain}/tools/echo`, {
    description: 'Answers ok.',
    code: "return 'ok';",
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const switched = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, settings);
  expect(switched.status, JSON.stringify(switched.body)).toBe(200);
}

async function createKey(subdomain: string): Promise<string> {
  const created = await plane.admin('POST', `/api/servers/${subdomain}/api-keys`, {
    label: `client of ${subdomain}`,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.key;
}

async function connect(subdomain: string, bearer: string): Promise<SdkSession> {
  const session = await connectSdkSession(plane.mcpUrl(subdomain), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  sessions.push(session);
  return session;
}

/** Sequential tools/call for `ms`: how many, per second, and how many failed. */
async function callsPerSecond(session: SdkSession, ms: number) {
  let calls = 0;
  let failures = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    try {
      const result = (await session.client.callTool({
        name: 'echo',
        arguments: {},
      })) as CallToolResult;
      if (result.isError) failures += 1;
    } catch {
      failures += 1;
    }
    calls += 1;
  }
  return { calls, failures, perSecond: calls / ((performance.now() - started) / 1000) };
}

/** The status of an initialize on `subdomain` with `bearer`, claiming to come from `network`. */
async function initializeStatus(subdomain: string, bearer: string, network: string) {
  const response = await postInitialize(plane.mcpUrl(subdomain), {
    authorization: `Bearer ${bearer}`,
    'x-forwarded-for': network,
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * Measures the victim alone, then during a flood at `target` from `network`;
 * prints both and the flood's figures; answers the flood's result and the
 * victim's calls during it.
 */
async function floodWhileMeasuring(
  label: string,
  victim: SdkSession,
  target: string,
  network: string,
  tokens?: string[],
): Promise<{ flood: CredentialFloodResult; during: { calls: number; failures: number } }> {
  for (let warm = 0; warm < 20; warm += 1) await victim.client.callTool({ name: 'echo' });
  const alone = await callsPerSecond(victim, MEASURE_MS);
  const flooding = floodCredentials({
    port: plane.port,
    subdomain: target,
    forwardedFor: network,
    concurrency: CONCURRENCY,
    durationMs: FLOOD_MS,
    ...(tokens === undefined ? {} : { tokens }),
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const during = await callsPerSecond(victim, MEASURE_MS);
  const flood = await flooding;
  console.log(
    `[${label}] attacker: ${flood.sent} requests in ${flood.seconds.toFixed(2)} s = ${(flood.sent / flood.seconds).toFixed(0)}/s, answers ${JSON.stringify(flood.byStatus)}; ` +
      `victim tools/call: ${alone.perSecond.toFixed(1)}/s alone, ${during.perSecond.toFixed(1)}/s during the flood (${during.failures} failed)`,
  );
  return { flood, during };
}

/** The mechanism: a few checked and refused (401), the rest refused unchecked (429, Retry-After). */
function expectRefusedEarly(flood: CredentialFloodResult): void {
  const checked = flood.byStatus['401'] ?? 0;
  const throttled = flood.byStatus['429'] ?? 0;
  expect(checked).toBeGreaterThanOrEqual(FAILURES_ALLOWED);
  // Those already in flight when the allowance ran out are still checked.
  expect(checked).toBeLessThanOrEqual(FAILURES_ALLOWED + CONCURRENCY);
  expect(checked + throttled).toBe(flood.sent);
  // Each refusal is held back a second: a client waiting for its answers is slowed to
  // about one request per connection a second (a bound, not a timing: answers cannot come sooner).
  expect(flood.sent).toBeLessThanOrEqual(FAILURES_ALLOWED + CONCURRENCY * (FLOOD_MS / 1_000 + 2));
  const sample = flood.samples['429']!;
  expect(Number(sample.retryAfter)).toBeGreaterThan(0);
  expect(Number(sample.retryAfter)).toBeLessThanOrEqual(60);
  expect(JSON.parse(sample.body).error.data.code).toBe('ERR_RATE_LIMITED');
}

beforeAll(async () => {
  [plane, as] = await Promise.all([
    startTestControlPlane({
      TRUSTED_PROXIES: '127.0.0.1',
      MCP_AUTH_FAILURES_PER_MINUTE: String(FAILURES_ALLOWED),
      // The victim calls as fast as it can: its own rate limit is not what is measured.
      RATE_LIMIT_PER_MINUTE: '0',
    }),
    startAuthorizationServer(),
  ]);
  await createServer(KEYED, { securityMode: 'apikey' });
  await createServer(KEYED_VICTIM, { securityMode: 'apikey' });
  for (const subdomain of [GUARDED, GUARDED_VICTIM]) {
    await createServer(subdomain, { securityMode: 'oauth2', oauthServerUrl: as.metadataUrl });
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(sessions.map((session) => session.client.close().catch(() => undefined)));
  await Promise.all([plane?.close(), as?.close()]);
});

describe('a flood of made-up API keys from one network', () => {
  it('is refused before any key lookup, while other clients and tenants are served', async () => {
    const attacker = '198.51.100.7';
    const keyedKey = await createKey(KEYED);
    const victim = await connect(KEYED_VICTIM, await createKey(KEYED_VICTIM));
    const { flood, during } = await floodWhileMeasuring('API keys', victim, KEYED, attacker);
    expectRefusedEarly(flood);
    expect(during.failures).toBe(0);
    // The flooding network waits, its right key too; the same server's clients elsewhere do not.
    expect(await initializeStatus(KEYED, keyedKey, attacker)).toBe(429);
    expect(await initializeStatus(KEYED, keyedKey, '198.51.100.99')).toBe(200);
  }, 60_000);
});

describe('a flood of forged access tokens from one network', () => {
  it('is refused before any signature check, while other clients and tenants are served', async () => {
    const attacker = '198.51.100.8';
    const resource = plane.mcpUrl(GUARDED).href;
    const real = await as.issueTokenFor(resource);
    // Signed with the attacker's key under the Authorization Server's kid: each costs a signature check.
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = {
      ...(await exportJWK(privateKey)),
      kid: decodeProtectedHeader(real).kid,
      alg: 'RS256',
    };
    const forged = await Promise.all(
      Array.from({ length: 64 }, () =>
        signToken(jwk, {
          ...validClaims(as.issuer, resource),
          jti: randomBytes(8).toString('hex'),
        }),
      ),
    );
    const victim = await connect(
      GUARDED_VICTIM,
      await as.issueTokenFor(plane.mcpUrl(GUARDED_VICTIM).href),
    );
    const { flood, during } = await floodWhileMeasuring('OAuth', victim, GUARDED, attacker, forged);
    expectRefusedEarly(flood);
    expect(during.failures).toBe(0);
    expect(await initializeStatus(GUARDED, real, attacker)).toBe(429);
    expect(await initializeStatus(GUARDED, real, '198.51.100.99')).toBe(200);
  }, 60_000);
});
