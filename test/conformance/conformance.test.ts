/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`)
 * against a hosted server, as an SDK maintainer would run it: a real control
 * plane, fixture tools, prompts and resources saved through the admin API
 * over HTTP, and the suite's
 * own CLI as the client — 0.1.13 under this Node (20), 0.1.16 under Node 22
 * from npm. Each version runs every server scenario once; the required ones
 * (scenarios.ts) must pass, with the checks REQUIRED_SUCCESSES names reporting
 * SUCCESS; the others' outcomes are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import {
  locateConformancePackage,
  runConformanceSuite,
  type ConformancePackage,
} from './conformance-cli.js';
import { conformanceFixtureEntries } from './fixture-entries.js';
import { conformanceFixtureTools } from './fixture-tools.js';
import { startHostForwardingProxy, type HostForwardingProxy } from './host-forwarding-proxy.js';
import { provisionNode22 } from './node22.js';
import { formatRun, requiredFailures } from './run-report.js';
import { NOT_REQUIRED_SCENARIOS, REQUIRED_SCENARIOS, REQUIRED_SUCCESSES } from './scenarios.js';

const SUBDOMAIN = 'conformance';

/** Each supported suite version: where npm installed it, and the Node that runs it. */
const VERSIONS: {
  installedAs: string;
  node: () => Promise<{ binary: string; version: string }>;
}[] = [
  {
    installedAs: 'mcp-conformance-0-1-13',
    node: async () => ({ binary: process.execPath, version: process.version }),
  },
  { installedAs: '@modelcontextprotocol/conformance', node: provisionNode22 },
];

let plane: TestControlPlane;
let proxy: HostForwardingProxy;
const failedSaves: string[] = [];

beforeAll(async () => {
  plane = await startTestControlPlane();
  const created = await plane.admin('POST', '/api/servers', {
    subdomain: SUBDOMAIN,
    name: 'MCP conformance fixtures',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // The CLI is one caller opening a session per scenario, a few hundred requests in
  // seconds, two runs back to back: the default limit (burst 60) refuses it partway
  // with 429, so the server gets a limit of its own, as an operator would give it.
  const limited = await plane.admin('PATCH', `/api/servers/${SUBDOMAIN}/settings`, {
    rateLimit: { perMinute: 100_000, burst: 10_000 },
  });
  expect(limited.status, JSON.stringify(limited.body)).toBe(200);
  // A save that is refused is recorded, not thrown: the suite still runs and
  // shows what every scenario reports, and the save test below names the refusal.
  for (const tool of conformanceFixtureTools()) {
    const saved = await plane.admin(
      'PUT',
      `/api/servers/${SUBDOMAIN}/tools/${tool.name}`,
      tool.body,
    );
    if (saved.status !== 201) {
      failedSaves.push(`${tool.name}: ${saved.status} ${JSON.stringify(saved.body)}`);
    }
  }
  for (const entry of conformanceFixtureEntries()) {
    const saved = await plane.admin(
      'PUT',
      `/api/servers/${SUBDOMAIN}/${entry.kind}/${entry.name}`,
      entry.body,
    );
    if (saved.status !== 201) {
      failedSaves.push(
        `${entry.kind}/${entry.name}: ${saved.status} ${JSON.stringify(saved.body)}`,
      );
    }
  }
  proxy = await startHostForwardingProxy({ port: plane.port, host: plane.mcpUrl(SUBDOMAIN).host });
}, 180_000);

afterAll(async () => {
  await proxy?.close();
  await plane?.close();
});

it('saves every fixture tool, prompt and resource through the admin API', () => {
  expect(failedSaves).toEqual([]);
});

describe.each(VERSIONS)('conformance suite $installedAs', ({ installedAs, node }) => {
  it('passes every required server scenario', async () => {
    const pkg: ConformancePackage = locateConformancePackage(installedAs);
    const runtime = await node();
    const run = await runConformanceSuite(runtime.binary, pkg, `${proxy.url}/mcp`);
    const label = `conformance ${pkg.version} under Node ${runtime.version}`;
    console.log(formatRun(label, run));

    const unclassified = run.listed.filter(
      (scenario) => !REQUIRED_SCENARIOS.includes(scenario) && !(scenario in NOT_REQUIRED_SCENARIOS),
    );
    expect(unclassified, `${label} has scenarios scenarios.ts does not classify`).toEqual([]);
    expect(run.outcomes.size, `${label} wrote no results:\n${run.output}`).toBeGreaterThan(0);
    expect(requiredFailures(run), label).toEqual([]);
    for (const [scenario, checkIds] of Object.entries(REQUIRED_SUCCESSES)) {
      const checks = run.outcomes.get(scenario)?.checks ?? [];
      const statuses = checkIds.map((id) => [
        id,
        checks.find((check) => check.id === id)?.status ?? 'absent',
      ]);
      expect(statuses, `${label}: ${scenario}`).toEqual(checkIds.map((id) => [id, 'SUCCESS']));
    }
  }, 600_000);
});
