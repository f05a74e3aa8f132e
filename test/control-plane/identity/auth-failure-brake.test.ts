/**
 * The brake on failed authentications at hosted servers, on a real control
 * plane: it counts a client network's failures per server, so wrong keys
 * sent to one server (the sender's own, say) do not lock another tenant's
 * right key out of its server from the same network (a shared NAT); and a
 * ceiling per network over all servers still brakes failures spread over
 * many servers. Networks are told apart as behind a reverse proxy
 * (TRUSTED_PROXIES: loopback), so each test has networks of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { postInitialize } from '../../support/mcp-requests.js';

/** Failures one network may cause at one server a minute, and over all servers. */
const PER_SERVER = 5;
const PER_NETWORK = 12;

const SERVERS = ['brake-a', 'brake-b', 'brake-c', 'brake-d', 'brake-victim'];

let plane: TestControlPlane;
const keys = new Map<string, string>();

/** The status of an initialize on `subdomain` with `key`, from `network`. */
async function initializeStatus(subdomain: string, key: string, network: string): Promise<number> {
  const response = await postInitialize(plane.mcpUrl(subdomain), {
    authorization: `Bearer ${key}`,
    'x-forwarded-for': network,
  });
  await response.body?.cancel();
  return response.status;
}

/** A made-up key: well formed, unknown. */
const madeUp = (index: number) => `mcph_ak_made_up_${index}_${'x'.repeat(20)}`;

beforeAll(async () => {
  plane = await startTestControlPlane({
    TRUSTED_PROXIES: '127.0.0.1',
    MCP_AUTH_FAILURES_PER_MINUTE: String(PER_SERVER),
    MCP_AUTH_FAILURES_PER_NETWORK_PER_MINUTE: String(PER_NETWORK),
    RATE_LIMIT_PER_MINUTE: '0',
  });
  for (const subdomain of SERVERS) {
    expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    const key = await plane.admin('POST', `/api/servers/${subdomain}/api-keys`, { label: 'own' });
    expect(key.status).toBe(201);
    keys.set(subdomain, key.body.key);
    const mode = await plane.admin('PATCH', `/api/servers/${subdomain}/settings`, {
      securityMode: 'apikey',
    });
    expect(mode.status, JSON.stringify(mode.body)).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

describe('the pre-authentication brake', () => {
  it('counts per server: wrong keys at one server leave another server’s right key admitted', async () => {
    const shared = '198.51.100.10';
    for (let index = 0; index < PER_SERVER; index += 1) {
      expect(await initializeStatus('brake-a', madeUp(index), shared)).toBe(401);
    }
    // That server is braked for this network, its right key included…
    expect(await initializeStatus('brake-a', keys.get('brake-a')!, shared)).toBe(429);
    // …another tenant's server is not, from the same network…
    expect(await initializeStatus('brake-victim', keys.get('brake-victim')!, shared)).toBe(200);
    // …nor the braked server from another network.
    expect(await initializeStatus('brake-a', keys.get('brake-a')!, '198.51.100.11')).toBe(200);
  }, 60_000);

  it('still brakes a network whose failures are spread over many servers', async () => {
    const flooding = '198.51.100.20';
    const spread = ['brake-a', 'brake-b', 'brake-c', 'brake-d'];
    const perServer = PER_NETWORK / spread.length;
    expect(perServer).toBeLessThan(PER_SERVER);
    let index = 100;
    for (const subdomain of spread) {
      for (let sent = 0; sent < perServer; sent += 1) {
        expect(await initializeStatus(subdomain, madeUp(index++), flooding)).toBe(401);
      }
    }
    // No server saw its allowance spent, but the network's ceiling is reached.
    expect(await initializeStatus('brake-victim', keys.get('brake-victim')!, flooding)).toBe(429);
    expect(await initializeStatus('brake-victim', keys.get('brake-victim')!, '198.51.100.21')).toBe(
      200,
    );
  }, 60_000);
});
