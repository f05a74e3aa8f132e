/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12) against a hosted server, as an SDK maintainer would run
 * it: a real control plane, fixture tools, prompts and resources saved
 * through the admin API over HTTP, and the suite's own CLI as the client,
 * under Node 22 from npm (node22.ts). It runs once per requirement set
 * (`--requirements 2026-07-28`, the stateless modern era, and
 * `--requirements 2025-11-25`, the initialize handshake), each at its own
 * wire version; the required scenarios (scenarios.ts) must pass, with the
 * checks REQUIRED_SUCCESSES names reporting SUCCESS; the others' outcomes
 * (the tasks extension, the pending ones) are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../support/control-plane.js';
import { locateConformancePackage, runConformanceSuite } from './conformance-cli.js';
import { ADMIN_TOKEN_SECRET } from './fixture-diagnostic-tools.js';
import { conformanceFixtureEntries } from './fixture-entries.js';
import { conformanceFixtureTools } from './fixture-tools.js';
import { startHostForwardingProxy, type HostForwardingProxy } from './host-forwarding-proxy.js';
import { provisionNode22 } from './node22.js';
import { formatRun, missingSuccesses, requiredFailures, unclassified } from './run-report.js';
import { REQUIREMENT_SETS } from './scenarios.js';

const SUBDOMAIN = 'conformance';
const CONFORMANCE_PACKAGE = '@modelcontextprotocol/conformance';

let plane: TestControlPlane;
let proxy: HostForwardingProxy;
const failedSaves: string[] = [];

/** Records a refused save instead of throwing, so the suite still runs and shows every scenario. */
async function save(what: string, path: string, body: unknown): Promise<void> {
  const saved = await plane.admin('PUT', `/api/servers/${SUBDOMAIN}/${path}`, body);
  if (saved.status !== 200 && saved.status !== 201) {
    failedSaves.push(`${what}: ${saved.status} ${JSON.stringify(saved.body)}`);
  }
}

beforeAll(async () => {
  plane = await startTestControlPlane();
  const created = await plane.admin('POST', '/api/servers', {
    subdomain: SUBDOMAIN,
    name: 'MCP conformance fixtures',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // The CLI is one caller opening a session (or sending a stateless request) per
  // step, a few hundred requests in seconds, two runs back to back: the default
  // limit (burst 60) refuses it partway with 429, so the server gets a limit of its
  // own, as an operator would give it.
  const limited = await plane.admin('PATCH', `/api/servers/${SUBDOMAIN}/settings`, {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limited.status, JSON.stringify(limited.body)).toBe(200);
  // The 2026-07-28 run abandons about ten calls that wait for input (a first round
  // it never retries, a tampered retry): each keeps its container leased until its
  // time limit (ASKING_LIMITS), so the server's pool may grow past the default 4
  // for that while, as an operator of such a server would allow. Four kept warm: a
  // few scenarios time a call (server-stateless: a log tool answering within 500 ms)
  // while calls left waiting hold containers, and a cold start on a loaded machine
  // would take longer than the suite waits.
  const pooled = await plane.admin('PUT', `/api/pools/${SUBDOMAIN}`, { minWarm: 4, maxSize: 16 });
  expect(pooled.status, JSON.stringify(pooled.body)).toBe(200);
  // The list_changed triggers save an entry through the admin API from tool code.
  await save(`secret ${ADMIN_TOKEN_SECRET}`, `secrets/${ADMIN_TOKEN_SECRET}`, {
    value: TEST_ADMIN_TOKEN,
  });
  const context = { adminUrl: plane.adminUrl, subdomain: SUBDOMAIN };
  for (const tool of conformanceFixtureTools(context)) {
    await save(`tools/${tool.name}`, `tools/${tool.name}`, tool.body);
  }
  for (const entry of conformanceFixtureEntries()) {
    await save(`${entry.kind}/${entry.name}`, `${entry.kind}/${entry.name}`, entry.body);
  }
  // A pool starts with its first call: one test run starts it, and the suite begins
  // once its four are warm (server-stateless, the first scenario, times its calls).
  const warmUp = await plane.admin(
    'POST',
    `/api/servers/${SUBDOMAIN}/tools/test_simple_text/invoke`,
    {
      params: {},
    },
  );
  expect(warmUp.status, JSON.stringify(warmUp.body)).toBe(200);
  const warmBy = Date.now() + 60_000;
  while (((await serverPool())?.warm ?? 0) < 4 && Date.now() < warmBy) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect((await serverPool())?.warm, 'the fixture pool warms to 4').toBeGreaterThanOrEqual(4);
  proxy = await startHostForwardingProxy({ port: plane.port, host: plane.mcpUrl(SUBDOMAIN).host });
}, 180_000);

/** The fixture server's shared pool, as the admin API shows it. */
async function serverPool(): Promise<{ warm: number } | undefined> {
  const { body } = await plane.admin('GET', '/api/pools');
  const pools = body.pools as { server?: string; tool?: string; warm: number }[];
  return pools.find((row) => row.server === SUBDOMAIN && !row.tool);
}

afterAll(async () => {
  await proxy?.close();
  await plane?.close();
});

it('saves every fixture tool, prompt and resource through the admin API', () => {
  expect(failedSaves).toEqual([]);
});

describe.each(REQUIREMENT_SETS)('conformance suite, --requirements %s', (set) => {
  it('passes every required server scenario', async () => {
    const pkg = locateConformancePackage(CONFORMANCE_PACKAGE);
    const runtime = await provisionNode22();
    const run = await runConformanceSuite(runtime.binary, pkg, `${proxy.url}/mcp`, set);
    const label = `conformance ${pkg.version} under Node ${runtime.version}`;
    console.log(formatRun(label, run, set));

    expect(unclassified(run, set), `${label} has scenarios scenarios.ts does not classify`).toEqual(
      [],
    );
    expect(run.outcomes.size, `${label} wrote no results:\n${run.output}`).toBeGreaterThan(0);
    expect(requiredFailures(run, set), label).toEqual([]);
    expect(missingSuccesses(run, set), label).toEqual([]);
  }, 600_000);
});
