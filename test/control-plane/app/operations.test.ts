/**
 * Running mcphost for real: Prometheus metrics, request ids carried into the
 * invocation log, logs that never hold a secret or a token, readiness, and a
 * graceful shutdown that lets running calls finish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postInitialize } from '../../support/mcp-requests.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { busyContainers } from '../../support/busy-containers.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';

const SECRET_VALUE = 'sk-live-0123456789-do-not-log';
const METRICS_TOKEN = 'metrics-reader-token-0123456789';
const logLines: string[] = [];
let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane(
    { LOG_LEVEL: 'trace', METRICS_TOKEN, SHUTDOWN_GRACE_MS: '10000' },
    { logSink: (line) => void logLines.push(line) },
  );
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'ops' })).status).toBe(201);
  const tools: Record<string, object> = {
    leaky: {
      secrets: ['API_KEY'],
      code: "console.log('using', env.API_KEY); throw new Error('bad key ' + env.API_KEY);",
    },
    metadata: {
      code: "const r = await sdk.http({ url: 'http://169.254.169.254/latest/meta-data/' }); return r.status();",
    },
    ok: { code: 'return 42;' },
    slow: { code: 'await new Promise((r) => setTimeout(r, 1500)); return "finished";' },
  };
  for (const [name, body] of Object.entries(tools)) {
    const saved = await plane.admin('PUT', `/api/servers/ops/tools/${name}`, {
      description: name,
      ...body,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  expect(
    (await plane.admin('PUT', '/api/servers/ops/secrets/API_KEY', { value: SECRET_VALUE })).status,
  ).toBe(200);
}, 180_000);

afterAll(async () => {
  await plane?.close().catch(() => undefined);
});

const metricsText = async (token: string) => {
  const response = await loopbackFetch(`${plane.adminUrl}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, text: await response.text() };
};

describe('metrics', () => {
  it('counts invocations, pools, broker refusals, auth failures and HTTP requests', async () => {
    expect((await plane.admin('POST', '/api/servers/ops/tools/ok/invoke', {})).body).toMatchObject({
      ok: true,
      result: 42,
    });
    const denied = await plane.admin('POST', '/api/servers/ops/tools/metadata/invoke', {});
    // The tool did not catch the broker's refusal: the call fails with its code.
    expect(denied.body.error.code).toBe('ERR_EGRESS_DENIED');
    expect(denied.body.error.message).toMatch(/cloud metadata/);
    expect(
      (
        await loopbackFetch(`${plane.adminUrl}/api/servers`, {
          headers: { authorization: 'Bearer wrong' },
        })
      ).status,
    ).toBe(401);

    const { status, text } = await metricsText(TEST_ADMIN_TOKEN);
    expect(status).toBe(200);
    expect(text).toMatch(
      /mcphost_invocations_total\{server="ops",tool="ok",outcome="ok",kind="tool"\} 1/,
    );
    expect(text).toMatch(
      /mcphost_invocations_total\{server="ops",tool="metadata",outcome="ERR_EGRESS_DENIED",kind="tool"\} 1/,
    );
    expect(text).toMatch(
      /mcphost_broker_requests_total\{operation="http",outcome="ERR_EGRESS_DENIED"\} 1/,
    );
    expect(text).toMatch(
      /mcphost_auth_failures_total\{side="admin",reason="invalid_admin_token"\} 1/,
    );
    expect(text).toMatch(
      /mcphost_invocation_duration_seconds_bucket\{le="[^"]+",server="ops",tool="ok",kind="tool"\}/,
    );
    // The server's shared pool (its key names the container shape), and per-server scheduler figures.
    expect(text).toMatch(/mcphost_pool_containers\{pool="ops@128m-[^"]*",state="warm"\} \d/);
    expect(text).toMatch(/mcphost_container_starts_total\{server=""\} [1-9]/);
    expect(text).toMatch(/mcphost_lease_wait_seconds_count\{server="ops"\} [1-9]/);
    expect(text).toMatch(
      /mcphost_http_requests_total\{side="admin",route="POST \/api\/servers\/:sub\/tools\/:name\/invoke",status="200"\} \d/,
    );
  });

  it('lets the metrics token read /metrics and nothing else', async () => {
    expect((await metricsText(METRICS_TOKEN)).status).toBe(200);
    expect((await metricsText('nope-nope-nope-nope')).status).toBe(401);
    const api = await loopbackFetch(`${plane.adminUrl}/api/servers`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(api.status).toBe(401);
  });
});

describe('request ids and logs', () => {
  it('echoes a request id and records it in the invocation log', async () => {
    const response = await loopbackFetch(`${plane.adminUrl}/api/servers/ops/tools/ok/invoke`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
        'content-type': 'application/json',
        'x-request-id': 'trace-abc-123',
      },
      body: '{}',
    });
    expect(response.headers.get('x-request-id')).toBe('trace-abc-123');
    const log = await plane.admin('GET', '/api/invocations?server=ops&tool=ok&limit=1');
    expect(log.body.invocations[0].requestId).toBe('trace-abc-123');
    const generated = await loopbackFetch(`${plane.adminUrl}/healthz`, {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(logLines.some((line) => line.includes('"requestId":"trace-abc-123"'))).toBe(true);
  });

  it('never logs a secret value or a bearer token', async () => {
    const run = await plane.admin('POST', '/api/servers/ops/tools/leaky/invoke', {});
    expect(run.body.error.message).toBe('bad key [REDACTED:API_KEY]');
    await postInitialize(plane.mcpUrl('ops'), { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' });
    const everything = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(10);
    expect(everything).not.toContain(SECRET_VALUE);
    expect(everything).not.toContain(TEST_ADMIN_TOKEN);
    expect(everything).not.toContain(METRICS_TOKEN);
    expect(everything).not.toContain('eyJhbGciOiJub25lIn0');
  });
});

describe('health and shutdown', () => {
  it('reports readiness of the sandbox, the store and the configuration', async () => {
    const response = await loopbackFetch(`${plane.adminUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ready: true,
      checks: { sandbox: 'ok', store: 'ok', configuration: 'ok' },
    });
  });

  it('lets a running call finish on shutdown and refuses new ones', async () => {
    const running = plane.admin('POST', '/api/servers/ops/tools/slow/invoke', {});
    // The call is in its container (a cold start may come first).
    await expect.poll(() => busyContainers(plane, 'ops'), { timeout: 20_000 }).toBe(1);
    const closing = plane.app.close();
    const health = () =>
      loopbackFetch(`${plane.adminUrl}/healthz`).then(
        (response) => response.status,
        () => 'refused',
      );
    await expect.poll(health, { timeout: 5_000 }).toBeOneOf([503, 'refused']);
    expect((await running).body).toMatchObject({ ok: true, result: 'finished' });
    await closing;
  });
});
