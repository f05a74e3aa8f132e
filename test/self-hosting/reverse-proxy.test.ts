/**
 * The reverse-proxy examples in deploy/ (nginx and Caddy, as Debian 12
 * packages them) in front of a real control plane: the shipped files, with
 * only their named literals replaced, terminate TLS with a wildcard
 * certificate from a throwaway CA and carry an official MCP SDK client's
 * session — progress that arrives while a call runs (no buffering), a
 * notification on the open GET stream, the client's address in
 * X-Forwarded-For — plus the restricted admin site, the request body limit
 * and the HTTP→HTTPS redirect. Each proxy is skipped, saying so, where its
 * binary is absent; .ci/run installs both.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, TEST_ADMIN_TOKEN } from '../support/control-plane.js';
import type { TestControlPlane } from '../support/control-plane.js';
import { loopbackFetch } from '../support/loopback-fetch.js';
import { connectSdkSession, type SdkSession } from '../support/sdk-session.js';
import { REPO_ROOT } from './build-output.js';
import {
  caddyGlobalOptions,
  findBinary,
  hasIpv6Loopback,
  makeWildcardCertificate,
  ProxyClients,
  startProxy,
  substituteLiterals,
  writeNginxMainConfig,
  type ProxyProcess,
  type WildcardCertificate,
} from './proxy-fixtures.js';

const DOMAIN = 'mcp.test';
const SUBDOMAIN = 'acme';
/** The admin sites allow only this host; a connection from 127.0.0.2 stands for anyone else. */
const OUTSIDER_ADDRESS = '127.0.0.2';
/** What a client claims to be in its own X-Forwarded-For: the proxy must not let it count. */
const SPOOFED_ADDRESS = '203.0.113.7';
/** How long the progress tool waits between its two reports, in ms. */
const PROGRESS_PAUSE_MS = 1500;

const nginxBinary = await findBinary('nginx');
const caddyBinary = await findBinary('caddy');

let workDir = '';
let certificate: WildcardCertificate;
let plane: TestControlPlane | undefined;
let clients: ProxyClients | undefined;
/** One pair of proxy ports, used by each proxy in turn: PUBLIC_URL_TEMPLATE names the HTTPS one. */
let httpPort = 0;
let httpsPort = 0;

/** The example's literals and what a test run puts in their place. */
function commonReplacements(): [string, string][] {
  return [
    ['mcp.example.com', DOMAIN],
    ['/etc/ssl/mcphost/fullchain.pem', certificate.certificatePath],
    ['/etc/ssl/mcphost/privkey.pem', certificate.keyPath],
    ['127.0.0.1:8080', `127.0.0.1:${plane!.port}`],
    ['127.0.0.1:8081', `127.0.0.1:${plane!.app.adminPort}`],
  ];
}

async function startNginx(runDir: string): Promise<ProxyProcess> {
  const example = await readFile(join(REPO_ROOT, 'deploy/nginx/mcphost.conf'), 'utf8');
  // Loopback only; where there is no IPv6 the example's IPv6 listeners become comments.
  const ipv6 = await hasIpv6Loopback();
  const ipv6Listen = (port: number) =>
    ipv6 ? `listen [::1]:${port}` : `# no IPv6: listen ${port}`;
  const site = substituteLiterals(example, [
    ...commonReplacements(),
    ['listen 443 ', `listen 127.0.0.1:${httpsPort} `],
    ['listen [::]:443', ipv6Listen(httpsPort)],
    ['listen 80;', `listen 127.0.0.1:${httpPort};`],
    ['listen [::]:80', ipv6Listen(httpPort)],
  ]);
  const siteFile = join(runDir, 'mcphost.conf');
  await writeFile(siteFile, site);
  const mainConfig = await writeNginxMainConfig(runDir, siteFile);
  return startProxy(
    nginxBinary!,
    ['-c', mainConfig, '-p', runDir, '-e', join(runDir, 'error.log')],
    [httpsPort, httpPort],
  );
}

async function startCaddy(runDir: string): Promise<ProxyProcess> {
  const example = await readFile(join(REPO_ROOT, 'deploy/caddy/Caddyfile'), 'utf8');
  const caddyfile =
    caddyGlobalOptions(runDir, httpPort, httpsPort) +
    substituteLiterals(example, commonReplacements());
  const file = join(runDir, 'Caddyfile');
  await writeFile(file, caddyfile);
  return startProxy(
    caddyBinary!,
    ['run', '--config', file, '--adapter', 'caddyfile'],
    [httpsPort, httpPort],
    // Caddy keeps its data and configuration under HOME / XDG directories: the run's own.
    { HOME: runDir, XDG_DATA_HOME: join(runDir, 'data'), XDG_CONFIG_HOME: join(runDir, 'config') },
  );
}

const saveTool = async (name: string, code: string) => {
  const saved = await plane!.admin('PUT', `/api/servers/${SUBDOMAIN}/tools/${name}`, {
    description: `The ${name} fixture.`,
    code,
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
};

const anySuite = nginxBinary !== undefined || caddyBinary !== undefined;
let mcpUrl = '';

beforeAll(async () => {
  if (!anySuite) return;
  workDir = await mkdtemp(join(tmpdir(), 'mcphost-proxy-'));
  certificate = await makeWildcardCertificate(workDir, DOMAIN);
  clients = new ProxyClients(certificate.caPem);
  [httpPort, httpsPort] = [await freePort(), await freePort()];
  plane = await startTestControlPlane({
    BASE_DOMAIN: DOMAIN,
    PUBLIC_URL_TEMPLATE: `https://{subdomain}.${DOMAIN}:${httpsPort}`,
    ADMIN_PORT: String(await freePort()),
    // Both proxies connect from 127.0.0.1; their X-Forwarded-For names the client.
    TRUSTED_PROXIES: '127.0.0.1/32',
  });
  const created = await plane.admin('POST', '/api/servers', { subdomain: SUBDOMAIN });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // The address the admin API announces is the one clients use: through the proxy.
  mcpUrl = created.body.mcpUrl;
  expect(mcpUrl).toBe(`https://${SUBDOMAIN}.${DOMAIN}:${httpsPort}/mcp`);
  await saveTool(
    'slow_steps',
    `sdk.progress(1, 2, 'started');
    await new Promise((resolve) => setTimeout(resolve, ${PROGRESS_PAUSE_MS}));
    sdk.progress(2, 2, 'finishing');
    return 'done';`,
  );
});

afterAll(async () => {
  await clients?.close();
  await plane?.close();
  if (workDir !== '') await rm(workDir, { recursive: true, force: true });
});

const sessions: Client[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((client) => client.close()));
});

/** An SDK session from OUTSIDER_ADDRESS through the proxy, claiming SPOOFED_ADDRESS in X-Forwarded-For. */
async function connectThroughProxy(): Promise<SdkSession> {
  const session = await connectSdkSession(new URL(mcpUrl), {
    fetch: clients!.from(OUTSIDER_ADDRESS),
    requestInit: { headers: { 'x-forwarded-for': SPOOFED_ADDRESS } },
  });
  sessions.push(session.client);
  return session;
}

function proxySuite(
  name: string,
  binary: string | undefined,
  install: string,
  start: (runDir: string) => Promise<ProxyProcess>,
) {
  const suite = binary ? describe : describe.skip;
  const title = binary
    ? `${name} example in front of the control plane`
    : `${name} example — SKIPPED: ${name} is not installed (${install})`;

  suite(title, () => {
    let proxy: ProxyProcess | undefined;
    let runDir = '';

    beforeAll(async () => {
      // Its own directory, outside workDir (which holds the CA key): nginx workers must enter it.
      runDir = await mkdtemp(join(tmpdir(), `mcphost-${name}-`));
      proxy = await start(runDir);
    });

    afterAll(async () => {
      await proxy?.stop();
      if (runDir !== '') await rm(runDir, { recursive: true, force: true });
    });

    it('carries an MCP session over TLS and passes progress on while the call runs', async () => {
      const { client } = await connectThroughProxy();
      expect(client.getServerVersion()).toBeDefined();
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('slow_steps');

      const progress: { progress: number; at: number }[] = [];
      const result = (await client.callTool({ name: 'slow_steps', arguments: {} }, undefined, {
        onprogress: ({ progress: value }) =>
          progress.push({ progress: value, at: performance.now() }),
      })) as CallToolResult;
      const answeredAt = performance.now();

      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
      expect(progress.map((p) => p.progress)).toEqual([1, 2]);
      // A buffering proxy would hand the first report over together with the result.
      expect(answeredAt - progress[0]!.at).toBeGreaterThan(PROGRESS_PAUSE_MS / 2);
    });

    it('passes a notification on the open GET stream', async () => {
      const { client, streamOpen } = await connectThroughProxy();
      let announced = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void announced++);
      await streamOpen;
      await saveTool(`added_via_${name}`, 'return 1;');
      await expect.poll(() => announced, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(
        `added_via_${name}`,
      );
    });

    it("names the client's own address in X-Forwarded-For, not the one it claimed", async () => {
      // A tool of this proxy's own, so the one invocation logged is this call's.
      const tool = `address_via_${name}`;
      await saveTool(tool, 'return 1;');
      const { client } = await connectThroughProxy();
      const result = (await client.callTool({ name: tool, arguments: {} })) as CallToolResult;
      expect(result.content).toEqual([{ type: 'text', text: '1' }]);
      const log = await plane!.admin('GET', `/api/invocations?server=${SUBDOMAIN}&tool=${tool}`);
      expect(log.status).toBe(200);
      expect(log.body.invocations.map((row: { client: string }) => row.client)).toEqual([
        OUTSIDER_ADDRESS,
      ]);
    });

    it('passes a request body of MAX_BODY_BYTES to the control plane and refuses a larger one itself', async () => {
      const { transport } = await connectThroughProxy();
      const limit = plane!.config.maxBodyBytes;
      const frame = (pad: string) =>
        JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping', params: { _meta: { pad } } });
      const pingOfSize = (size: number) => frame('x'.repeat(size - Buffer.byteLength(frame(''))));
      const post = (body: string | ReadableStream<Uint8Array>) =>
        clients!.from(OUTSIDER_ADDRESS)(mcpUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': transport.sessionId!,
            'mcp-protocol-version': transport.protocolVersion!,
          },
          body,
          duplex: 'half',
        } as RequestInit);

      const fitting = await post(pingOfSize(limit));
      expect(fitting.status, await fitting.clone().text()).toBe(200);
      expect(await fitting.json()).toMatchObject({ jsonrpc: '2.0', id: 'big', result: {} });

      // Chunked, without Content-Length: the control plane cannot refuse it up
      // front, so the 413 must come from the proxy's own limit (the control
      // plane stamps x-request-id on every answer).
      const bytes = new TextEncoder().encode(pingOfSize(limit + 1));
      const tooLarge = await post(
        new ReadableStream({
          start(controller) {
            for (let at = 0; at < bytes.length; at += 64 * 1024) {
              controller.enqueue(bytes.subarray(at, at + 64 * 1024));
            }
            controller.close();
          },
        }),
      );
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.headers.get('x-request-id')).toBeNull();
    });

    it('serves the admin site from allowed addresses only, and not on the MCP names', async () => {
      const admin = (address: string, host: string) =>
        clients!.from(address)(`https://${host}:${httpsPort}/api/servers`, {
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        });
      const allowed = await admin('127.0.0.1', DOMAIN);
      expect(allowed.status).toBe(200);
      expect(JSON.stringify(await allowed.json())).toContain(`"${SUBDOMAIN}"`);
      expect((await admin(OUTSIDER_ADDRESS, DOMAIN)).status).toBe(403);
      // The MCP site goes to PORT, which serves hosted servers only.
      expect((await admin('127.0.0.1', `${SUBDOMAIN}.${DOMAIN}`)).status).toBe(404);
    });

    it('redirects plain HTTP to HTTPS and offers HTTP/2', async () => {
      const response = await loopbackFetch(`http://${SUBDOMAIN}.${DOMAIN}:${httpPort}/mcp`, {
        redirect: 'manual',
      });
      expect(response.status).toBe(308);
      const location = new URL(response.headers.get('location')!);
      expect([location.protocol, location.hostname, location.pathname]).toEqual([
        'https:',
        `${SUBDOMAIN}.${DOMAIN}`,
        '/mcp',
      ]);
      expect(await clients!.negotiatedProtocol(httpsPort, `${SUBDOMAIN}.${DOMAIN}`)).toBe('h2');
    });
  });
}

proxySuite('nginx', nginxBinary, 'apt-get install nginx', startNginx);
proxySuite('caddy', caddyBinary, 'apt-get install caddy', startCaddy);
