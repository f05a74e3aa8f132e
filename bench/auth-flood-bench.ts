/**
 * `npx tsx bench/auth-flood-bench.ts`: what a flood of made-up credentials
 * from one network costs another tenant, without and with the brake on
 * failed authentications (MCP_AUTH_FAILURES_PER_MINUTE 0 vs its default).
 * Two control planes, one of each, alternate round by round so both see the
 * same machine. In each round another tenant's client (the official SDK)
 * calls a tool as fast as it can, alone and then while a child process sends
 * made-up API keys (or forged access tokens signed under the Authorization
 * Server's kid) to a server of the first tenant from a new network, at a
 * steady FLOOD_RATE (default 1000/s); and the control plane's CPU time
 * during a flood as fast as answers come, with no victim calling. The same flood at a
 * server that does not exist (404) gives the floor any request costs. Not a
 * test: the figures are printed, medians of ROUNDS (default 3) rounds.
 */
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { signToken, validClaims } from '../test/auth/helpers/forge-token.js';
import { startAuthorizationServer } from '../test/fixtures/authorization-server.js';
import { startTestControlPlane, type TestControlPlane } from '../test/support/control-plane.js';
import { floodCredentials, type CredentialFloodResult } from '../test/support/credential-flood.js';
import { connectSdkSession, type SdkSession } from '../test/support/sdk-session.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PHASE_MS = 3_000;
const CONCURRENCY = 64;
/** The steady attacker's rate (the issue measured 1,500 made-up keys a second). */
const FLOOD_RATE = Number(process.env.FLOOD_RATE ?? 1_000);

interface Setup {
  label: string;
  plane: TestControlPlane;
  victim: SdkSession;
  target: string;
  tokens?: string[];
}

interface RoundFigures {
  alone: number;
  during: number;
  flood: CredentialFloodResult;
  /** The control plane's CPU time during a flood with no victim calling, in % of one core. */
  cpuPercent: number;
}

async function callsPerSecond(session: SdkSession, ms: number): Promise<number> {
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    await session.client.callTool({ name: 'echo', arguments: {} });
    calls += 1;
  }
  return calls / ((performance.now() - started) / 1000);
}

async function createServer(
  plane: TestControlPlane,
  subdomain: string,
  settings: Record<string, unknown>,
): Promise<void> {
  await plane.admin('POST', '/api/servers', { subdomain });
  await plane.admin('PUT', `/api/servers/${subdomain}/tools/echo`, {
    description: 'Answers ok.',
    code: "return 'ok';",
  });
  const switched = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, settings);
  if (switched.status !== 200) throw new Error(JSON.stringify(switched.body));
}

/** A flood alone: the control plane's (this process's) CPU time, in % of one core. */
async function cpuDuringFlood(setup: Setup, network: string): Promise<number> {
  const before = process.cpuUsage();
  const started = performance.now();
  await floodCredentials({
    port: setup.plane.port,
    subdomain: setup.target,
    forwardedFor: network,
    concurrency: CONCURRENCY,
    durationMs: PHASE_MS,
    ...(setup.tokens === undefined ? {} : { tokens: setup.tokens }),
  });
  const used = process.cpuUsage(before);
  return ((used.user + used.system) / 1000 / (performance.now() - started)) * 100;
}

async function round(setup: Setup, network: string): Promise<RoundFigures> {
  const cpuPercent = await cpuDuringFlood(setup, network.replace('198.51.100.', '203.0.113.'));
  const alone = await callsPerSecond(setup.victim, PHASE_MS);
  const flooding = floodCredentials({
    port: setup.plane.port,
    subdomain: setup.target,
    forwardedFor: network,
    concurrency: CONCURRENCY,
    durationMs: PHASE_MS + 300,
    ratePerSecond: FLOOD_RATE,
    ...(setup.tokens === undefined ? {} : { tokens: setup.tokens }),
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const during = await callsPerSecond(setup.victim, PHASE_MS);
  return { alone, during, flood: await flooding, cpuPercent };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

process.env.MCPHOST_TEST_RUNNER_IMAGE ??= await ensureRunnerImage({
  base: readSetting('runnerBase'),
  log: () => undefined,
});
const as = await startAuthorizationServer();
const setups: Setup[] = [];
for (const limit of ['0', '60']) {
  const plane = await startTestControlPlane({
    TRUSTED_PROXIES: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    MCP_AUTH_FAILURES_PER_MINUTE: limit,
  });
  const brake = limit === '0' ? 'no brake' : `brake ${limit}/min`;
  await createServer(plane, 'attacked-keys', { securityMode: 'apikey' });
  await createServer(plane, 'victim-keys', { securityMode: 'apikey' });
  const key = (await plane.admin('POST', '/api/servers/victim-keys/api-keys', { label: 'v' })).body
    .key as string;
  setups.push({
    label: `API keys, ${brake}`,
    plane,
    target: 'attacked-keys',
    victim: await connectSdkSession(plane.mcpUrl('victim-keys'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  });
  for (const subdomain of ['attacked-oauth', 'victim-oauth']) {
    await createServer(plane, subdomain, {
      securityMode: 'oauth2',
      oauthServerUrl: as.metadataUrl,
    });
  }
  const resource = plane.mcpUrl('attacked-oauth').href;
  const real = await as.issueTokenFor(resource);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = {
    ...(await exportJWK(privateKey)),
    kid: decodeProtectedHeader(real).kid,
    alg: 'RS256',
  };
  const tokens = await Promise.all(
    Array.from({ length: 64 }, () =>
      signToken(jwk, { ...validClaims(as.issuer, resource), jti: randomBytes(8).toString('hex') }),
    ),
  );
  const victimToken = await as.issueTokenFor(plane.mcpUrl('victim-oauth').href);
  setups.push({
    label: `OAuth, ${brake}`,
    plane,
    target: 'attacked-oauth',
    tokens,
    victim: await connectSdkSession(plane.mcpUrl('victim-oauth'), {
      requestInit: { headers: { authorization: `Bearer ${victimToken}` } },
    }),
  });
  if (limit !== '0') {
    // The floor: the same flood at a server that does not exist (404), which any request costs.
    setups.push({ ...setups.at(-2)!, label: 'unknown server (404, the floor)', target: 'no-such' });
  }
}
for (const setup of setups) await callsPerSecond(setup.victim, 1_000); // warm

const figures = new Map<string, RoundFigures[]>();
let network = 1;
for (let index = 0; index < ROUNDS; index += 1) {
  for (const setup of setups) {
    const result = await round(setup, `198.51.100.${network++}`);
    figures.set(setup.label, [...(figures.get(setup.label) ?? []), result]);
  }
}
console.log(
  `auth flood — ${ROUNDS} rounds of ${PHASE_MS} ms, medians; the attacker at ${FLOOD_RATE}/s, at most ${CONCURRENCY} in flight (as fast as answers come for the CPU figure)`,
);
for (const [label, rounds] of figures) {
  const sent = median(rounds.map((r) => r.flood.sent / r.flood.seconds));
  const statuses = rounds.map((r) => JSON.stringify(r.flood.byStatus)).join(' ');
  console.log(
    `  ${label}: victim ${median(rounds.map((r) => r.alone)).toFixed(1)} calls/s alone, ` +
      `${median(rounds.map((r) => r.during)).toFixed(1)} during the flood; ` +
      `attacker ${sent.toFixed(0)} requests/s (${statuses}); ` +
      `control plane CPU during a flood ${median(rounds.map((r) => r.cpuPercent)).toFixed(0)}% of a core`,
  );
}
for (const session of new Set(setups.map((setup) => setup.victim))) await session.client.close();
await Promise.all([...new Set(setups.map((s) => s.plane))].map((plane) => plane.close()));
await as.close();
process.exit(0);
