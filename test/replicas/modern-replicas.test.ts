/**
 * The modern era (MCP 2026-07-28) across two control-plane replicas on one
 * PostgreSQL database behind the shipped round-robin nginx example, with the
 * official SDK v2 client pinned to 2026-07-28: a call whose tool code asks
 * its client twice completes while each retry lands on the other replica
 * than the one before (the call stays parked on the replica running it, and
 * the retries are relayed there); a `subscriptions/listen` stream held by
 * one replica hears `list_changed` for a tool saved through the other.
 * Which replica answered is read from the proxy's journal (round-robin-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childControlPlane,
  type ChildControlPlane,
} from '../faults/support/child-control-plane.js';
import { createEchoServer, saveTool } from '../faults/support/echo-tools.js';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { freePort } from '../support/control-plane.js';
import { stopReplicaPair, untilEachReplicaServesEcho } from './replica-pair.js';
import {
  findNginx,
  startRoundRobinProxy,
  type RoundRobinProxy,
  type RoutedExchange,
} from './round-robin-proxy.js';

const DOMAIN = 'modern.test';
const SUBDOMAIN = 'acme';

const TWO_ROUNDS = `const first = await sdk.elicit('First?', { type: 'object', properties: { a: { type: 'string' } } }, { key: 'first' });
  const second = await sdk.elicit('Second?', { type: 'object', properties: { b: { type: 'string' } } }, { key: 'second' });
  return first.content.a + '+' + second.content.b;`;

const nginx = await findNginx();
const database = `mcphost_modern_replicas_${randomBytes(6).toString('hex')}`;
let replicaA: ChildControlPlane | undefined;
let replicaB: ChildControlPlane | undefined;
let proxy: RoundRobinProxy | undefined;
const clients: Client[] = [];
const replicas = () => [replicaA!, replicaB!];
const answeredBy = (exchange: RoutedExchange) => exchange.upstreams.at(-1);

async function modernClient(): Promise<Client> {
  const client = new Client(
    { name: 'modern-replicas', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    const first = (request.params as { message: string }).message === 'First?';
    const content: Record<string, string> = first ? { a: 'one' } : { b: 'two' };
    return { action: 'accept', content };
  });
  await client.connect(
    new StreamableHTTPClientTransport(proxy!.mcpUrl(SUBDOMAIN), { fetch: proxy!.fetch }),
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  if (!nginx) return;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const httpsPort = await freePort();
  const scope = randomBytes(4).toString('hex');
  const shared = {
    DATABASE_URL: postgresUrl(database),
    BASE_DOMAIN: DOMAIN,
    PUBLIC_URL_TEMPLATE: `https://{subdomain}.${DOMAIN}:${httpsPort}`,
    TRUSTED_PROXIES: '127.0.0.1/32',
    RATE_LIMIT_PER_MINUTE: '0',
    POOL_MIN_WARM: '1',
    POOL_MAX_SIZE: '4',
    GENERIC_POOL_SIZE: '1',
    SHUTDOWN_GRACE_MS: '2000',
  };
  replicaA = await childControlPlane({ ...shared, PLANE_NAME: `modern-a-${scope}` });
  replicaB = await childControlPlane({ ...shared, PLANE_NAME: `modern-b-${scope}` });
  await replicaA.start();
  await replicaB.start();
  await createEchoServer(replicaA, SUBDOMAIN, ['echo']);
  await saveTool(replicaA, SUBDOMAIN, 'two_rounds', {
    description: 'Asks twice.',
    code: TWO_ROUNDS,
    limits: { timeoutMs: 30_000 },
  });
  // Both replicas serve the configuration, and their pools are warm.
  await untilEachReplicaServesEcho(replicas(), SUBDOMAIN);
  proxy = await startRoundRobinProxy({
    nginx,
    replicaPorts: replicas().map((replica) => replica.port),
    domain: DOMAIN,
    httpsPort,
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await stopReplicaPair({
    proxy,
    replicas: [replicaA, replicaB],
    database: nginx ? database : undefined,
  });
}, 60_000);

if (!nginx) {
  it.skip('SKIPPED: nginx is not installed (apt-get install nginx; .ci/run installs it)', () => {});
}

(nginx ? describe : describe.skip)('two replicas behind round-robin nginx, modern era', () => {
  it('completes a call that asks twice while each retry lands on the other replica', async () => {
    const client = await modernClient();
    for (let attempt = 0; attempt < 3; attempt++) {
      const mark = proxy!.journal.length;
      const result = await client.callTool({ name: 'two_rounds', arguments: {} });
      expect((result.content as { text: string }[])[0]!.text).toBe('one+two');
      const rounds = proxy!.journal
        .slice(mark)
        .filter((exchange) => exchange.messages.some((m) => m.startsWith('tools/call')));
      expect(rounds).toHaveLength(3);
      // Round robin alternates: the call and its two retries went to alternate replicas.
      for (let i = 1; i < rounds.length; i++) {
        expect(answeredBy(rounds[i]!), `round ${i + 1}`).not.toBe(answeredBy(rounds[i - 1]!));
      }
    }
  });

  it('delivers list_changed on a listen stream of one replica for a tool saved through the other', async () => {
    const client = await modernClient();
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      changed += 1;
    });
    const mark = proxy!.journal.length;
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    const listenedOn = answeredBy(
      proxy!.journal
        .slice(mark)
        .find((e) => e.messages.some((m) => m.startsWith('subscriptions/listen')))!,
    );
    const other = replicas().find((replica) => replica.port !== listenedOn)!;
    expect(other).toBeDefined();
    await saveTool(other, SUBDOMAIN, 'added_elsewhere', { description: 'new', code: 'return 1;' });
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(0);
    await subscription.close();
  });
});
