/**
 * A JSON-RPC batch (protocol versions before 2025-06-18) pays the rate limit
 * for every request it holds, not one token per POST: a batch of reads of a
 * large resource must not multiply what one token buys. Refused before any
 * of its requests is answered.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

let plane: TestControlPlane;

beforeAll(async () => {
  plane = await startTestControlPlane({ GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' });
  for (const subdomain of ['batched', 'bigger']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    const limited = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, {
      rateLimit: { perMinute: 60, burst: 6 },
    });
    expect(limited.status, JSON.stringify(limited.body)).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await plane?.close();
});

function post(body: unknown, session?: string, subdomain = 'batched'): Promise<Response> {
  return loopbackFetch(plane.mcpUrl(subdomain), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-03-26',
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
    },
    body: JSON.stringify(body),
  });
}

const pings = (from: number, length = 5) =>
  Array.from({ length }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method: 'ping' }));

async function open(subdomain: string): Promise<string> {
  const opened = await post(
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    },
    undefined,
    subdomain,
  );
  expect(opened.status).toBe(200);
  await opened.text();
  return opened.headers.get('mcp-session-id')!;
}

it('charges a batch one token per request, and refuses one the caller cannot pay for', async () => {
  const session = await open('batched');
  // 1 (initialize) + 5 = the burst of 6.
  const first = await post(pings(10), session);
  expect(first.status).toBe(200);
  expect(await first.json()).toHaveLength(5);
  // The next batch of 5 finds no tokens: refused whole, with Retry-After.
  const second = await post(pings(20), session);
  expect(second.status).toBe(429);
  expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await second.json()).toMatchObject({ error: { data: { code: 'ERR_RATE_LIMITED' } } });
});

it('takes a batch larger than the burst from a full bucket, and the caller then waits it off', async () => {
  const session = await open('bigger');
  // 5 of 6 tokens left: the POST takes one, the other 9 requests need a full bucket.
  const early = await post(pings(10, 10), session, 'bigger');
  expect(early.status).toBe(429);
  const wait = Number(early.headers.get('retry-after'));
  expect(wait).toBe(2);
  await early.text();
  await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 100));
  const full = await post(pings(30, 10), session, 'bigger');
  expect(full.status).toBe(200);
  expect(await full.json()).toHaveLength(10);
  // All ten were paid: the bucket is in debt, and the next request is refused.
  const after = await post({ jsonrpc: '2.0', id: 99, method: 'ping' }, session, 'bigger');
  expect(after.status).toBe(429);
  expect(Number(after.headers.get('retry-after'))).toBeGreaterThanOrEqual(4);
}, 30_000);
