/**
 * The empty-line console flood end to end: the whole control plane (real
 * containers, the embedded store, the admin API). The invoke answer, the
 * stored row and a page of `GET /api/invocations` stay bounded, and the
 * truncation is marked where it happened.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({
    TOOL_MAX_LOG_ENTRIES: '300',
    INVOCATION_ROW_MAX_BYTES: String(4 * 1024),
    INVOCATION_PAGE_MAX_BYTES: String(10 * 1024),
  });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'flood' })).status).toBe(201);
  const saved = await plane.admin('PUT', '/api/servers/flood/tools/empty', {
    description: 'console.log("") for a second',
    code: "const end = Date.now() + 1000; while (Date.now() < end) console.log(''); return 'done';",
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close().catch(() => undefined);
});

it('a console.log("") flood is capped in the answer, the row and the page', async () => {
  for (let call = 0; call < 4; call++) {
    const { status, body } = await plane.admin('POST', '/api/servers/flood/tools/empty/invoke', {});
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, result: 'done' });
    // 300 lines, the harness's notice; nothing else.
    expect(body.logs.length).toBeLessThanOrEqual(302);
    expect(body.logs.at(-1).text).toMatch(/^\[mcphost\] log output passed the limit of 300 lines/);
  }
  const { status, body } = await plane.admin('GET', '/api/invocations?server=flood&limit=100');
  expect(status).toBe(200);
  expect(body.invocations).toHaveLength(4);
  expect(JSON.stringify(body).length).toBeLessThan(10 * 1024 + 4 * 1024);
  const [newest] = body.invocations;
  expect(JSON.stringify(newest.logs).length).toBeLessThanOrEqual(4 * 1024);
  expect(newest.logs.at(-1).text).toMatch(
    /log lines not stored: an invocation log row holds at most 4096 bytes/,
  );
  expect(body.invocations.at(-1).logs[0].text).toMatch(/left out: this page reached its limit/);
});
