/**
 * The shipped replicas example (deploy/nginx/mcphost-replicas.conf) run by
 * Debian's nginx as a child process in front of control-plane replicas on
 * loopback: only its literals replaced (addresses, ports, certificate paths —
 * the certificate from a throwaway CA), so the example is what is tested. Its
 * own prefix, configuration, pid and log files live in a temp directory; it
 * is stopped by the PID it was started with.
 *
 * Which replica answered is the test's evidence that requests really spread,
 * so the run adds one header of its own beside the example (at the `http`
 * level, the example untouched): X-Test-Upstream, nginx's `$upstream_addr`.
 * The proxy's fetch reads it into a journal of every exchange.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  findBinary,
  hasIpv6Loopback,
  makeWildcardCertificate,
  ProxyClients,
  startProxy,
  substituteLiterals,
  writeNginxMainConfig,
  type ProxyProcess,
} from '../self-hosting/proxy-fixtures.js';
import { freePort } from '../support/loopback-server.js';

/** The example this fixture runs, relative to the repository root. */
export const REPLICAS_EXAMPLE = 'deploy/nginx/mcphost-replicas.conf';
const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** The example's replica lines, replaced as a block by one line per replica of the run. */
const EXAMPLE_MCP_SERVERS = [11, 12, 13].map((host) => `    server 10.0.0.${host}:8080;`);
const EXAMPLE_ADMIN_SERVERS = [11, 12, 13].map((host) => `    server 10.0.0.${host}:8081;`);

/** Response header naming the replica(s) nginx tried for a request. */
const UPSTREAM_HEADER = 'x-test-upstream';

/** The absolute path of nginx (PATH or /usr/sbin), or undefined when it is not installed. */
export function findNginx(): Promise<string | undefined> {
  return findBinary('nginx');
}

export interface RoundRobinProxyOptions {
  /** The nginx binary (from findNginx). */
  nginx: string;
  /** The replicas' PORTs (hosted servers), in upstream order. */
  replicaPorts: readonly number[];
  /** Their ADMIN_PORTs; default replicaPorts (replicas without ADMIN_PORT serve both sides on PORT). */
  adminPorts?: readonly number[];
  /** The replicas' BASE_DOMAIN; the certificate covers it and `*.{domain}`. */
  domain: string;
  /** Loopback port of the HTTPS listener; default a free one. */
  httpsPort?: number;
}

/** One HTTP exchange through the proxy, as the client saw it when the response headers arrived. */
export interface RoutedExchange {
  method: string;
  /**
   * The JSON-RPC messages a POST carried: `method#id` for a request,
   * `method` for a notification, `response#id` for the client's answer.
   */
  messages: string[];
  sessionId: string | undefined;
  lastEventId: string | undefined;
  status: number;
  /** Replica ports nginx tried, in order: the last one answered (earlier ones refused). */
  upstreams: number[];
}

export interface RoundRobinProxy {
  /** The nginx master process this fixture started. */
  readonly pid: number;
  readonly httpsPort: number;
  /** `https://{subdomain}.{domain}:{httpsPort}/mcp` */
  mcpUrl(subdomain: string): URL;
  /** fetch through the proxy: trusts the test CA, sends every name to 127.0.0.1, records the journal. */
  readonly fetch: typeof fetch;
  /** Every exchange made with `fetch`, in the order their response headers arrived. */
  readonly journal: readonly RoutedExchange[];
  /** nginx's error log so far (for failure messages). */
  errorLog(): Promise<string>;
  /** Stops nginx (SIGTERM, then SIGKILL) and removes its files. */
  stop(): Promise<void>;
}

/** Starts nginx on the example in front of the replicas; resolves once it listens. */
export async function startRoundRobinProxy(
  options: RoundRobinProxyOptions,
): Promise<RoundRobinProxy> {
  const { domain, replicaPorts } = options;
  const adminPorts = options.adminPorts ?? replicaPorts;
  if (replicaPorts.length === 0 || adminPorts.length !== replicaPorts.length) {
    throw new TypeError('startRoundRobinProxy: one admin port per replica, at least one replica');
  }
  const httpsPort = options.httpsPort ?? (await freePort());
  const httpPort = await freePort();
  // The CA key stays outside runDir, which nginx's unprivileged workers must enter.
  const tlsDir = await mkdtemp(join(tmpdir(), 'mcphost-replicas-tls-'));
  const runDir = await mkdtemp(join(tmpdir(), 'mcphost-replicas-nginx-'));
  const clients = new ProxyClients((await makeWildcardCertificate(tlsDir, domain)).caPem);
  const removeFiles = async () => {
    await clients.close();
    await rm(tlsDir, { recursive: true, force: true });
    await rm(runDir, { recursive: true, force: true });
  };

  let nginx: ProxyProcess;
  try {
    const example = await readFile(join(REPO_ROOT, REPLICAS_EXAMPLE), 'utf8');
    const ipv6 = await hasIpv6Loopback();
    // Loopback only; where there is no IPv6 the example's IPv6 listeners become comments.
    const ipv6Listen = (port: number) =>
      ipv6 ? `listen [::1]:${port}` : `# no IPv6: listen ${port}`;
    const serverLines = (ports: readonly number[], lines: string[]): [string, string] => [
      lines.join('\n'),
      ports.map((port) => `    server 127.0.0.1:${port};`).join('\n'),
    ];
    const site = substituteLiterals(example, [
      serverLines(replicaPorts, EXAMPLE_MCP_SERVERS),
      serverLines(adminPorts, EXAMPLE_ADMIN_SERVERS),
      ['mcp.example.com', domain],
      ['/etc/ssl/mcphost/fullchain.pem', join(tlsDir, 'fullchain.pem')],
      ['/etc/ssl/mcphost/privkey.pem', join(tlsDir, 'privkey.pem')],
      ['listen 443 ', `listen 127.0.0.1:${httpsPort} `],
      ['listen [::]:443', ipv6Listen(httpsPort)],
      ['listen 80;', `listen 127.0.0.1:${httpPort};`],
      ['listen [::]:80', ipv6Listen(httpPort)],
    ]);
    // The test's own instrumentation, beside the example: inherited by its
    // locations, which set no add_header of their own.
    const instrumentation = `add_header X-Test-Upstream $upstream_addr always;\n\n`;
    const siteFile = join(runDir, 'mcphost-replicas.conf');
    await writeFile(siteFile, instrumentation + site);
    const mainConfig = await writeNginxMainConfig(runDir, siteFile);
    nginx = await startProxy(
      options.nginx,
      ['-c', mainConfig, '-p', runDir, '-e', join(runDir, 'error.log')],
      [httpsPort, httpPort],
    );
  } catch (error) {
    await removeFiles();
    throw error;
  }

  const journal: RoutedExchange[] = [];
  const send = clients.from('127.0.0.1');
  const recordingFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const response = await send(input, init);
    journal.push(exchangeOf(init, response));
    return response;
  }) as typeof fetch;

  return {
    pid: nginx.pid,
    httpsPort,
    mcpUrl: (subdomain) => new URL(`https://${subdomain}.${domain}:${httpsPort}/mcp`),
    fetch: recordingFetch,
    journal,
    errorLog: () => readFile(join(runDir, 'error.log'), 'utf8').catch(() => ''),
    stop: async () => {
      await nginx.stop();
      await removeFiles();
    },
  };
}

/** What the journal keeps of one exchange. */
function exchangeOf(init: RequestInit | undefined, response: Response): RoutedExchange {
  const headers = new Headers(init?.headers);
  const upstream = response.headers.get(UPSTREAM_HEADER);
  if (upstream === null) {
    // The example's locations gained an add_header of their own: the journal would be blind.
    throw new Error(`nginx sent no ${UPSTREAM_HEADER} header (does the example set add_header?)`);
  }
  return {
    method: (init?.method ?? 'GET').toUpperCase(),
    messages: typeof init?.body === 'string' ? jsonRpcMessagesOf(init.body) : [],
    sessionId: headers.get('mcp-session-id') ?? undefined,
    lastEventId: headers.get('last-event-id') ?? undefined,
    status: response.status,
    upstreams: [...upstream.matchAll(/:(\d+)/g)].map((match) => Number(match[1])),
  };
}

function jsonRpcMessagesOf(body: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).map((message) => {
    const { method, id } = (message ?? {}) as { method?: unknown; id?: unknown };
    if (typeof method === 'string') return id === undefined ? method : `${method}#${String(id)}`;
    return `response#${String(id)}`;
  });
}
