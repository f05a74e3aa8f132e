/**
 * The control plane is SIGKILLed mid-load and started again on the same data
 * directory and environment: the containers the dead process left behind are
 * reaped at start, the configuration and the secrets are intact (a tool that
 * returns its secret returns the same value), and calls work again. Calls
 * caught by the kill fail (transport errors), none hangs or gets another
 * call's answer.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { faultIt, IN_FAULT_SUITE } from './support/fault-suite-guard.js';
import { loopbackFetch } from '../support/loopback-fetch.js';
import { childControlPlane, type ChildControlPlane } from './support/child-control-plane.js';
import { runCallLoad } from './support/call-load.js';
import { createEchoServer, saveTool } from './support/echo-tools.js';
import { formatFigures } from './support/load-figures.js';
import { planeContainers, pollUntil, removePlaneContainers } from './support/plane-containers.js';

const TOOLS = ['echo_a', 'echo_b'];
const SECRET_VALUE = `s3cret-${randomBytes(6).toString('hex')}`;

let plane: ChildControlPlane;

/** Everything an operator configured, as the admin API shows it. */
async function configurationSnapshot(): Promise<unknown> {
  const paths = [
    '/api/servers',
    '/api/servers/keep',
    '/api/servers/keep/tools',
    '/api/servers/keep/secrets',
    '/api/servers/keep/tools/reveal/versions',
    '/api/servers/other',
  ];
  const answers = await Promise.all(paths.map((path) => plane.admin('GET', path)));
  return Object.fromEntries(paths.map((path, i) => [path, answers[i]]));
}

async function callReveal(): Promise<string> {
  const client = new Client({ name: 'mcphost-faults', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(plane.mcpUrl('keep'), { fetch: loopbackFetch }),
  );
  try {
    const result = await client.callTool({ name: 'reveal', arguments: {} });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    return (result.content as { text: string }[])[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  if (!IN_FAULT_SUITE) return;
  plane = await childControlPlane({
    POOL_MAX_SIZE: '6',
    POOL_MIN_WARM: '1',
    GENERIC_POOL_SIZE: '2',
    // The load generator is one anonymous caller: the per-caller rate limit is not under test.
    RATE_LIMIT_PER_MINUTE: '0',
  });
  await plane.start();
  await createEchoServer(plane, 'keep', TOOLS);
  await createEchoServer(plane, 'other', ['echo_c']);
  await saveTool(plane, 'keep', 'reveal', {
    description: 'Returns its secret.',
    secrets: ['SECRET'],
    code: 'return env.SECRET ?? "no secret";',
  });
  // A second version, so the history is part of what must survive.
  await saveTool(plane, 'keep', 'reveal', {
    description: 'Returns its secret (v2).',
    secrets: ['SECRET'],
    code: 'return env.SECRET ?? "no secret";',
  });
  expect(
    (await plane.admin('PUT', '/api/servers/keep/secrets/SECRET', { value: SECRET_VALUE })).status,
  ).toBe(200);
  expect(
    (
      await plane.admin('PATCH', '/api/servers/other/settings', {
        name: 'Other one',
        active: false,
      })
    ).status,
  ).toBe(200);
  expect((await plane.admin('PUT', '/api/pools/keep', { minWarm: 1, maxSize: 3 })).status).toBe(
    200,
  );
});

afterAll(async () => {
  await plane?.close();
  if (plane) await removePlaneContainers(plane.planeName);
});

faultIt(
  'reaps the leftovers of a SIGKILLed control plane and keeps configuration and secrets',
  async () => {
    expect(await callReveal()).toBe(SECRET_VALUE);
    const before = await configurationSnapshot();

    // Load, then SIGKILL in the middle of it.
    const stop = new AbortController();
    const load = runCallLoad({
      url: plane.mcpUrl('keep'),
      clients: 8,
      calls: 1_000_000,
      tools: TOOLS,
      extraArgs: (index) => (index % 3 === 0 ? { delayMs: 20 } : {}),
      callTimeoutMs: 20_000,
      signal: stop.signal,
    });
    await new Promise((r) => setTimeout(r, 5_000));
    const running = await planeContainers(plane.planeName);
    expect(running.length).toBeGreaterThan(0);
    await plane.kill('SIGKILL');
    stop.abort();
    const figures = await load;
    console.log(formatFigures('load cut by SIGKILL of the control plane', figures));
    expect(figures.ok).toBeGreaterThan(0);
    expect(figures.errorsByKind['mixed-up'] ?? 0).toBe(0);
    expect(figures.errorsByKind['hang'] ?? 0).toBe(0);
    expect(figures.errorsByKind['timeout'] ?? 0).toBe(0);

    // The dead process's containers are still there: nobody removed them.
    const leftovers = await planeContainers(plane.planeName, true);
    expect(leftovers.length).toBeGreaterThan(0);
    const leftoverIds = new Set(leftovers.map((info) => info.Id));

    const restartedAt = performance.now();
    await plane.start();
    const reaped = await pollUntil(async () => {
      const now = await planeContainers(plane.planeName, true);
      return now.every((info) => !leftoverIds.has(info.Id));
    }, 30_000);
    expect(reaped, 'containers of the killed control plane are removed at start').toBe(true);
    console.log(
      `[faults] SIGKILL: ${leftoverIds.size} leftover containers reaped within ${Math.round(performance.now() - restartedAt)} ms of the restart`,
    );

    expect(await configurationSnapshot()).toEqual(before);
    expect(await callReveal()).toBe(SECRET_VALUE);
    const after = await runCallLoad({
      url: plane.mcpUrl('keep'),
      clients: 8,
      calls: 200,
      tools: TOOLS,
    });
    expect(after.ok, JSON.stringify(after)).toBe(200);
    const { body } = await plane.admin('GET', '/api/pools');
    expect(body.pools).toEqual(
      expect.arrayContaining([expect.objectContaining({ server: 'keep', minWarm: 1, maxSize: 3 })]),
    );
  },
);
