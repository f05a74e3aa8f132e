/**
 * A tool that sleeps holding its server's whole pool (maxSize 2): further
 * callers queue and fail with ERR_NO_CAPACITY ("no capacity …") after the
 * bounded wait (POOL_QUEUE_TIMEOUT_MS), never hang, while another server's
 * calls keep succeeding meanwhile (the server is the isolation unit).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { faultIt, IN_FAULT_SUITE } from './support/fault-suite-guard.js';
import { loopbackFetch } from '../support/loopback-fetch.js';
import { childControlPlane, type ChildControlPlane } from './support/child-control-plane.js';
import { createEchoServer, saveTool } from './support/echo-tools.js';
import { pollUntil, removePlaneContainers } from './support/plane-containers.js';

const QUEUE_TIMEOUT_MS = 2_000;
const HOLD_MS = 7_000;
const CALLERS = 6;
const MAX_SIZE = 2;

let plane: ChildControlPlane;
const clients: Client[] = [];

async function connect(server = 'busy'): Promise<Client> {
  const client = new Client({ name: 'mcphost-faults', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl(server), { fetch: loopbackFetch }),
  );
  clients.push(client);
  return client;
}

interface PoolRow {
  server?: string;
  tool?: string;
  warm: number;
  busy: number;
  queued: number;
}

/** The shared pool of a server. */
async function pool(server: string): Promise<PoolRow | undefined> {
  const { body } = await plane.admin('GET', '/api/pools');
  return (body.pools as PoolRow[]).find((row) => row.server === server && !row.tool);
}

beforeAll(async () => {
  if (!IN_FAULT_SUITE) return;
  plane = await childControlPlane({
    POOL_MAX_SIZE: String(MAX_SIZE),
    POOL_MIN_WARM: String(MAX_SIZE),
    POOL_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS),
    GENERIC_POOL_SIZE: '1',
  });
  await plane.start();
  await createEchoServer(plane, 'busy', []);
  await createEchoServer(plane, 'calm', ['quick']);
  await saveTool(plane, 'busy', 'hold', {
    description: 'Sleeps for ms milliseconds.',
    parameters: [{ name: 'ms', type: 'number', required: true }],
    code: 'await new Promise((r) => setTimeout(r, params.ms)); return "held " + params.ms;',
  });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await plane?.close();
  if (plane) await removePlaneContainers(plane.planeName);
});

faultIt(
  'fails the callers beyond capacity with "no capacity" after the bounded wait, while another server still answers',
  async () => {
    // Both pools warm to their full size first, so the held containers are ready ones.
    const warm = await connect();
    expect(await warm.callTool({ name: 'hold', arguments: { ms: 0 } })).toMatchObject({
      content: [{ text: 'held 0' }],
    });
    const calm = await connect('calm');
    expect(await calm.callTool({ name: 'quick', arguments: { token: 'tok-warm' } })).toMatchObject({
      content: [{ text: 'tok-warm' }],
    });
    expect(await pollUntil(async () => (await pool('busy'))?.warm === MAX_SIZE, 30_000)).toBe(true);

    const callers = await Promise.all(Array.from({ length: CALLERS }, connect));
    const started = performance.now();
    const outcomes = callers.map(async (client) => {
      const result = (await client.callTool(
        { name: 'hold', arguments: { ms: HOLD_MS } },
        undefined,
        {
          timeout: 60_000,
        },
      )) as CallToolResult;
      return { result, elapsedMs: performance.now() - started };
    });

    // The excess callers are visibly queued, not lost.
    expect(
      await pollUntil(async () => (await pool('busy'))?.queued === CALLERS - MAX_SIZE, 1_500, 50),
    ).toBe(true);

    // Meanwhile another server answers promptly.
    const other = await connect('calm');
    for (let i = 0; i < 10; i++) {
      const begin = performance.now();
      const result = await other.callTool({
        name: 'quick',
        arguments: { token: `tok-other-${i}` },
      });
      expect(result).toMatchObject({ content: [{ text: `tok-other-${i}` }] });
      expect(result.isError).toBeFalsy();
      expect(performance.now() - begin).toBeLessThan(QUEUE_TIMEOUT_MS);
    }

    const settled = await Promise.all(outcomes);
    const succeeded = settled.filter(({ result }) => !result.isError);
    const refused = settled.filter(({ result }) => result.isError);
    expect(succeeded).toHaveLength(MAX_SIZE);
    for (const { result, elapsedMs } of succeeded) {
      expect(result.content).toEqual([{ type: 'text', text: `held ${HOLD_MS}` }]);
      expect(elapsedMs).toBeGreaterThanOrEqual(HOLD_MS - 50);
    }
    expect(refused).toHaveLength(CALLERS - MAX_SIZE);
    for (const { result, elapsedMs } of refused) {
      expect(result._meta?.['mcphost/errorCode']).toBe('ERR_NO_CAPACITY');
      const text = (result.content[0] as { text: string }).text;
      expect(text).toMatch(
        /^no capacity: pool busy has 2 of 2 containers busy and the wait of 2000 ms ran out/,
      );
      // After the bounded wait: not before it, and well before the holders finish.
      expect(elapsedMs).toBeGreaterThanOrEqual(QUEUE_TIMEOUT_MS - 50);
      expect(elapsedMs).toBeLessThan(QUEUE_TIMEOUT_MS + 2_500);
    }
    console.log(
      `[faults] pool exhaustion: ${succeeded.length} held ${HOLD_MS} ms, ${refused.length} refused after ${refused
        .map(({ elapsedMs }) => Math.round(elapsedMs))
        .join(', ')} ms (queue timeout ${QUEUE_TIMEOUT_MS} ms)`,
    );

    // The pool is usable again once the holders are done.
    const again = await warm.callTool({ name: 'hold', arguments: { ms: 0 } });
    expect(again).toMatchObject({ content: [{ text: 'held 0' }] });
  },
);
