/**
 * The path address (`https://{BASE_DOMAIN}/servers/{sub}/mcp`, docs/addresses.md)
 * across two control-plane replicas on one PostgreSQL database behind the
 * shipped round-robin nginx example, as the host address is tested in
 * modern-replicas.test.ts and replica-sessions.test.ts: a modern-era call
 * (SDK v2 client pinned to 2026-07-28) whose tool asks its client twice
 * completes with each retry on the other replica (the park relay), and a
 * legacy session (SDK v1 client) gets its elicitation answered by the
 * replica running the call although the answer landed on the other one (the
 * session relay). The example sends the bare domain to its admin upstream;
 * the replicas run without ADMIN_PORT, so that upstream is their PORT too.
 * Which replica answered is read from the proxy's journal (round-robin-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childControlPlane,
  type ChildControlPlane,
} from '../faults/support/child-control-plane.js';
import { createEchoServer, saveTool } from '../faults/support/echo-tools.js';
import { onPostgresServer, postgresUrl } from '../store/store-targets.js';
import { freePort } from '../support/control-plane.js';
import { ELICITATION_ANSWER, openRecordingSession } from './recording-session.js';
import { stopReplicaPair, untilEachReplicaServesEcho } from './replica-pair.js';
import {
  findNginx,
  startRoundRobinProxy,
  type RoundRobinProxy,
  type RoutedExchange,
} from './round-robin-proxy.js';

const DOMAIN = 'paths.test';
const SUBDOMAIN = 'acme';

const TWO_ROUNDS = `const first = await sdk.elicit('First?', { type: 'object', properties: { a: { type: 'string' } } }, { key: 'first' });
  const second = await sdk.elicit('Second?', { type: 'object', properties: { b: { type: 'string' } } }, { key: 'second' });
  return first.content.a + '+' + second.content.b;`;
const ASK_NAME =
  "return await sdk.elicit('name?', { type: 'object', properties: { name: { type: 'string' } } });";

const nginx = await findNginx();
const database = `mcphost_path_replicas_${randomBytes(6).toString('hex')}`;
let replicaA: ChildControlPlane | undefined;
let replicaB: ChildControlPlane | undefined;
let proxy: RoundRobinProxy | undefined;
let httpsPort = 0;
const closers: { close(): Promise<void> }[] = [];
const replicas = () => [replicaA!, replicaB!];
const answeredBy = (exchange: RoutedExchange) => exchange.upstreams.at(-1);
/** The server's path address through the proxy. */
const pathUrl = () => new URL(`https://${DOMAIN}:${httpsPort}/servers/${SUBDOMAIN}/mcp`);

/** The first exchange since `mark` whose body carried a message starting with `prefix`. */
async function exchangeCarrying(mark: number, prefix: string): Promise<RoutedExchange> {
  const find = () =>
    proxy!.journal.slice(mark).find((e) => e.messages.some((m) => m.startsWith(prefix)));
  await expect.poll(find, { timeout: 5000, message: `no exchange carried ${prefix}` }).toBeTruthy();
  return find()!;
}

beforeAll(async () => {
  if (!nginx) return;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  httpsPort = await freePort();
  const scope = randomBytes(4).toString('hex');
  const shared = {
    DATABASE_URL: postgresUrl(database),
    BASE_DOMAIN: DOMAIN,
    PUBLIC_URL_TEMPLATE: `https://{subdomain}.${DOMAIN}:${httpsPort}`,
    PUBLIC_URL: `https://${DOMAIN}:${httpsPort}`,
    TRUSTED_PROXIES: '127.0.0.1/32',
    RATE_LIMIT_PER_MINUTE: '0',
    POOL_MIN_WARM: '1',
    POOL_MAX_SIZE: '4',
    GENERIC_POOL_SIZE: '1',
    SHUTDOWN_GRACE_MS: '2000',
  };
  replicaA = await childControlPlane({ ...shared, PLANE_NAME: `paths-a-${scope}` });
  replicaB = await childControlPlane({ ...shared, PLANE_NAME: `paths-b-${scope}` });
  await replicaA.start();
  await replicaB.start();
  await createEchoServer(replicaA, SUBDOMAIN, ['echo']);
  for (const [name, code] of [
    ['two_rounds', TWO_ROUNDS],
    ['ask_name', ASK_NAME],
  ]) {
    await saveTool(replicaA, SUBDOMAIN, name!, {
      description: name,
      code,
      limits: { timeoutMs: 30_000 },
    });
  }
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
  await Promise.all(closers.map((client) => client.close().catch(() => undefined)));
  await stopReplicaPair({
    proxy,
    replicas: [replicaA, replicaB],
    database: nginx ? database : undefined,
  });
}, 60_000);

if (!nginx) {
  it.skip('SKIPPED: nginx is not installed (apt-get install nginx; .ci/run installs it)', () => {});
}

(nginx ? describe : describe.skip)('the path address on two replicas behind nginx', () => {
  it('lists the proxied path address in both replicas’ views', async () => {
    for (const replica of replicas()) {
      const view = (await replica.admin('GET', `/api/servers/${SUBDOMAIN}`)).body;
      expect(view.mcpUrls.path).toBe(pathUrl().href);
    }
  });

  it('completes a modern call that asks twice, each retry on the other replica', async () => {
    const client = new Client(
      { name: 'path-replicas', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: {} } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      const first = (request.params as { message: string }).message === 'First?';
      const content: Record<string, string> = first ? { a: 'one' } : { b: 'two' };
      return { action: 'accept', content };
    });
    await client.connect(new StreamableHTTPClientTransport(pathUrl(), { fetch: proxy!.fetch }));
    closers.push(client);
    for (let attempt = 0; attempt < 2; attempt++) {
      const mark = proxy!.journal.length;
      const result = await client.callTool({ name: 'two_rounds', arguments: {} });
      expect((result.content as { text: string }[])[0]!.text).toBe('one+two');
      const rounds = proxy!.journal
        .slice(mark)
        .filter((exchange) => exchange.messages.some((m) => m.startsWith('tools/call')));
      expect(rounds).toHaveLength(3);
      expect(new Set(rounds.map(answeredBy)).size).toBe(2);
      for (let i = 1; i < rounds.length; i++) {
        expect(answeredBy(rounds[i]!), `round ${i + 1}`).not.toBe(answeredBy(rounds[i - 1]!));
      }
    }
  });

  it("delivers a legacy session's elicitation answer to the replica running the call", async () => {
    const session = await openRecordingSession(pathUrl(), proxy!.fetch);
    closers.push(session.client);
    const mark = proxy!.journal.length;
    const result = (await session.client.callTool({
      name: 'ask_name',
      arguments: {},
    })) as CallToolResult;
    expect(result.structuredContent, JSON.stringify(result)).toEqual({
      action: 'accept',
      content: ELICITATION_ANSWER,
    });
    expect(session.elicitations).toContain('name?');
    const call = await exchangeCarrying(mark, 'tools/call#');
    const answer = await exchangeCarrying(mark, 'response#');
    expect(answeredBy(answer), 'the answer went to the replica of the call').not.toBe(
      answeredBy(call),
    );
  });
});
