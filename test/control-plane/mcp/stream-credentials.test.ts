/**
 * Long-lived streams end with the credential that opened them, on a real
 * control plane: a `subscriptions/listen` stream (modern era) and a legacy
 * session with its GET stream end when their API key is revoked — the
 * listen stream with its request's result, the session closed — while those
 * of another key of the same server go on (a key created meanwhile ends
 * nothing); a listen stream ends at its key's `expiresAt`, and one opened
 * with an access token at the token's `exp`; a legacy session whose token
 * expired is closed, so the next request, with a fresh token, is answered
 * 404 "session not found" and the client starts a new session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../../fixtures/authorization-server.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { INITIALIZE_BODY } from '../../support/mcp-requests.js';

const MODERN = '2026-07-28';
const LEGACY = '2025-06-18';
/** Lifetime of the Authorization Server's access tokens, in seconds. */
const TOKEN_TTL_SEC = 3;

let plane: TestControlPlane;
let as: TestAuthorizationServer;

/** An open response read as it comes: its text so far, and whether it ended. */
interface OpenStream {
  status: number;
  text(): string;
  isEnded(): boolean;
  cancel(): Promise<void>;
}

function follow(response: Response): OpenStream {
  const reader = response.body!.getReader();
  let text = '';
  let ended = false;
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    ended = true;
  })().catch(() => undefined);
  return {
    status: response.status,
    text: () => text,
    isEnded: () => ended,
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

const streams: OpenStream[] = [];

/** Waits until the server ended `stream`; fails after `ms`. */
async function endOf(stream: OpenStream, ms = 10_000): Promise<void> {
  await expect.poll(() => stream.isEnded(), { timeout: ms, interval: 50 }).toBe(true);
}

/** A modern `subscriptions/listen` for tool list changes on `server` with `bearer`. */
async function listen(server: string, bearer: string): Promise<OpenStream> {
  const response = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'subscriptions/listen',
      authorization: `Bearer ${bearer}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: {
        notifications: { toolsListChanged: true },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const stream = follow(response);
  streams.push(stream);
  await expect.poll(() => stream.text()).toContain('notifications/subscriptions/acknowledged');
  return stream;
}

/** A legacy POST to `/mcp` with `bearer`, in session `sessionId` when given. */
function legacyPost(server: string, bearer: string, body: string, sessionId?: string) {
  return loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${bearer}`,
      ...(sessionId === undefined
        ? {}
        : { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY }),
    },
    body,
  });
}

/** A legacy session opened with `bearer`, and its GET stream. */
async function legacySession(server: string, bearer: string) {
  const opened = await legacyPost(server, bearer, INITIALIZE_BODY);
  expect(opened.status).toBe(200);
  await opened.text();
  const id = opened.headers.get('mcp-session-id')!;
  const initialized = await legacyPost(
    server,
    bearer,
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    id,
  );
  expect(initialized.status).toBe(202);
  const get = await loopbackFetch(plane.mcpUrl(server), {
    headers: {
      accept: 'text/event-stream',
      authorization: `Bearer ${bearer}`,
      'mcp-session-id': id,
      'mcp-protocol-version': LEGACY,
    },
  });
  expect(get.status).toBe(200);
  const stream = follow(get);
  streams.push(stream);
  return { id, stream };
}

/** Creates an API key of `server` (expiring at `expiresAt` when given). */
async function createKey(server: string, expiresAt?: string) {
  const created = await plane.admin('POST', `/api/servers/${server}/api-keys`, {
    label: 'streams',
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id as string, key: created.body.key as string };
}

async function revoke(server: string, id: string) {
  expect((await plane.admin('DELETE', `/api/servers/${server}/api-keys/${id}`)).status).toBe(204);
}

async function saveTool(server: string, name: string) {
  const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${name}`, {
    description: name,
    code: 'return 1;',
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  [plane, as] = await Promise.all([
    startTestControlPlane({ RATE_LIMIT_PER_MINUTE: '0', MCP_AUTH_FAILURES_PER_MINUTE: '0' }),
    startAuthorizationServer({ accessTokenTtlSec: TOKEN_TTL_SEC }),
  ]);
  for (const server of ['keyed', 'oauthed']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
    await saveTool(server, 'first');
  }
  // A key must exist before the switch; the tests make their own.
  await createKey('keyed');
  expect(
    (await plane.admin('PATCH', '/api/servers/keyed/settings', { securityMode: 'apikey' })).status,
  ).toBe(200);
  const oauth = await plane.admin('PATCH', '/api/servers/oauthed/settings', {
    securityMode: 'oauth2',
    oauthServerUrl: as.metadataUrl,
  });
  expect(oauth.status, JSON.stringify(oauth.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.cancel()));
  await Promise.all([plane?.close(), as?.close()]);
});

describe('a revoked API key', () => {
  it('ends its listen streams with their result; another key’s stream goes on', async () => {
    const revoked = await createKey('keyed');
    const kept = await createKey('keyed');
    const gone = await listen('keyed', revoked.key);
    const staying = await listen('keyed', kept.key);

    await revoke('keyed', revoked.id);
    await endOf(gone);
    // Ended by the server, with the listen request's own result.
    expect(gone.text()).toMatch(/"id":"listen-1","result":\{"resultType":"complete"/);

    // A key created is a change of the server's keys too: it ends nothing.
    await createKey('keyed');
    await saveTool('keyed', 'after_revocation');
    await expect.poll(() => staying.text()).toContain('notifications/tools/list_changed');
    expect(staying.isEnded()).toBe(false);
    expect(gone.text()).not.toContain('notifications/tools/list_changed');
  }, 60_000);

  it('closes its legacy sessions, their GET streams with them; another key’s session goes on', async () => {
    const revoked = await createKey('keyed');
    const kept = await createKey('keyed');
    const gone = await legacySession('keyed', revoked.key);
    const staying = await legacySession('keyed', kept.key);

    await revoke('keyed', revoked.id);
    await endOf(gone.stream);
    await settle(300);
    expect(staying.stream.isEnded()).toBe(false);
    // The key is refused from now on; the other key's session still answers.
    const refused = await legacyPost(
      'keyed',
      revoked.key,
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      gone.id,
    );
    expect(refused.status).toBe(401);
    const listed = await legacyPost(
      'keyed',
      kept.key,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      staying.id,
    );
    expect(listed.status).toBe(200);
    await listed.text();
  }, 60_000);
});

describe('a credential that expires', () => {
  it('ends a listen stream at its API key’s expiresAt', async () => {
    const expiring = await createKey('keyed', new Date(Date.now() + 3_000).toISOString());
    const stream = await listen('keyed', expiring.key);
    const opened = Date.now();
    await endOf(stream);
    expect(Date.now() - opened).toBeLessThan(10_000);
    expect(stream.text()).toMatch(/"result":\{"resultType":"complete"/);
  }, 60_000);

  it('ends a listen stream at its access token’s exp', async () => {
    const token = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const stream = await listen('oauthed', token);
    const opened = Date.now();
    await endOf(stream);
    expect(Date.now() - opened).toBeLessThan((TOKEN_TTL_SEC + 5) * 1000);
    expect(stream.text()).toMatch(/"result":\{"resultType":"complete"/);
  }, 60_000);

  it('closes a legacy session whose token expired: a fresh token then gets 404', async () => {
    const token = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const { id, stream } = await legacySession('oauthed', token);
    await endOf(stream);
    const fresh = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const answer = await legacyPost(
      'oauthed',
      fresh,
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
      id,
    );
    expect(answer.status).toBe(404);
    expect(await answer.text()).toMatch(/Session not found/);
    // The client starts a new session with its fresh token.
    const again = await legacyPost('oauthed', fresh, INITIALIZE_BODY);
    expect(again.status).toBe(200);
    await again.text();
  }, 60_000);

  it('keeps a legacy session used with a refreshed token past the first token’s exp', async () => {
    const first = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const opened = await legacyPost('oauthed', first, INITIALIZE_BODY);
    await opened.text();
    const id = opened.headers.get('mcp-session-id')!;
    await settle(2_000);
    // The same caller with a token that ends later: the session now ends with it.
    const refreshed = await as.issueTokenFor(plane.mcpUrl('oauthed').href);
    const initialized = await legacyPost(
      'oauthed',
      refreshed,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      id,
    );
    expect(initialized.status).toBe(202);
    // Past the first token's exp (whole seconds), well before the refreshed one's.
    await settle((TOKEN_TTL_SEC - 2) * 1000 + 500);
    const later = await legacyPost(
      'oauthed',
      await as.issueTokenFor(plane.mcpUrl('oauthed').href),
      JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
      id,
    );
    expect(later.status).toBe(200);
    await later.text();
  }, 60_000);
});
