/**
 * A modern retry whose `requestState` names a replica that has stopped (its
 * parked call went with it), on two in-process control planes sharing one
 * PostgreSQL database: the replica the retry reaches relays it, hears no
 * acceptance, and answers the refusal of an ended call (-32602,
 * `invalid_request_state`) instead of holding the client for the longest call.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { modernToolCall } from '../support/mcp-requests.js';

const database = `mcphost_relay_gone_${randomBytes(6).toString('hex')}`;
let survivor: TestControlPlane;
let holder: TestControlPlane | undefined;

async function callAsk(
  plane: TestControlPlane,
  round: { state?: string; answers?: object } = {},
): Promise<{
  result?: { resultType?: string; requestState?: string };
  error?: { code: number; message: string; data?: { reason?: string } };
}> {
  return (await modernToolCall(plane.mcpUrl('acme'), 'ask', round)).body;
}

beforeAll(async () => {
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const env = {
    DATABASE_URL: postgresUrl(database),
    GENERIC_POOL_SIZE: '0',
    POOL_MIN_WARM: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    // The longest call: a relay that waited for it would outlive this test.
    TOOL_TIMEOUT_MS: '120000',
  };
  survivor = await startTestControlPlane(env);
  holder = await startTestControlPlane(env);
  expect((await survivor.admin('POST', '/api/servers', { subdomain: 'acme' })).status).toBe(201);
  const saved = await survivor.admin('PUT', '/api/servers/acme/tools/ask', {
    description: 'asks a name',
    code: `const answer = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' });
      return 'hello ' + answer.content.name;`,
  });
  expect(saved.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await Promise.all([survivor?.close(), holder?.close()]);
  await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

it('refuses a retry whose holding replica stopped as an ended call, without waiting for the longest call', async () => {
  let first = await callAsk(holder!);
  for (let tries = 0; first.error !== undefined && tries < 50; tries++) {
    // The holder hears of the server through the store's change feed.
    await new Promise((resolve) => setTimeout(resolve, 200));
    first = await callAsk(holder!);
  }
  expect(first.result?.resultType, JSON.stringify(first)).toBe('input_required');
  const requestState = first.result!.requestState!;

  await holder!.close();
  holder = undefined;

  const retry = await callAsk(survivor, {
    state: requestState,
    answers: { name: { action: 'accept', content: { name: 'Ada' } } },
  });
  expect(retry.error?.code, JSON.stringify(retry)).toBe(-32602);
  expect(retry.error?.data?.reason).toBe('invalid_request_state');
  expect(retry.error?.message).toMatch(/no replica now/);

  // A call started again on the survivor runs as usual.
  const again = await callAsk(survivor);
  expect(again.result?.resultType, JSON.stringify(again)).toBe('input_required');
}, 60_000);
