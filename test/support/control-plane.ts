/**
 * Starts a real control plane in-process for a test file: its own data
 * directory, its own label scope for containers, the runner image built by
 * the global setup, a fixed admin token. Hosted servers answer at
 * `http://{subdomain}.localhost:{port}` (reached through `loopbackFetch`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type App } from '../../control-plane/app/app.js';
import { loadConfig, type Config } from '../../control-plane/config.js';
import { createLogger } from '../../control-plane/logger.js';
import { loopbackFetch } from './loopback-fetch.js';
import { freePort } from './loopback-server.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestControlPlane {
  app: App;
  config: Config;
  port: number;
  dataDir: string;
  adminUrl: string;
  mcpUrl(subdomain: string): URL;
  /** Admin API call with the admin token; JSON in and out. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Restarts the control plane on the same data directory and port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

// The address template must name the port before the listener starts.
export { freePort };

export interface TestControlPlaneOptions {
  /** Receives every log line (JSON text) the control plane writes. */
  logSink?: (line: string) => void;
}

export async function startTestControlPlane(
  env: Record<string, string> = {},
  options: TestControlPlaneOptions = {},
): Promise<TestControlPlane> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'mcphost-test-'));
  const port = await freePort();
  const image = process.env.MCPHOST_TEST_RUNNER_IMAGE;
  const config = loadConfig(
    {
      PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      BASE_DOMAIN: 'localhost',
      PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
      EGRESS_ALLOW: '127.0.0.0/8,::1/128',
      OAUTH_ALLOW_INSECURE_LOOPBACK: 'true',
      PLANE_NAME: `test-${process.pid}-${port}`,
      GENERIC_POOL_SIZE: '1',
      POOL_MIN_WARM: '1',
      LOG_LEVEL: 'silent',
      ...(image ? { RUNNER_IMAGE: image } : {}),
      ...env,
    },
    '/nonexistent/.env',
  );
  const sink = options.logSink;
  const log = sink
    ? createLogger(config.logLevel, { write: (line: string) => void sink(line) })
    : createLogger(config.logLevel);
  let app = await startApp(config, log);
  const adminUrl = `http://127.0.0.1:${app.adminPort}`;
  const plane: TestControlPlane = {
    get app() {
      return app;
    },
    config,
    port,
    dataDir,
    adminUrl,
    mcpUrl: (subdomain) => new URL(`http://${subdomain}.localhost:${port}/mcp`),
    admin: async (method, path, body) => {
      const response = await loopbackFetch(`${adminUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body:
          body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    restart: async () => {
      await app.close();
      app = await startApp(config, log);
    },
    close: async () => {
      await app.close();
      if (env.DATA_DIR === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return plane;
}

/**
 * The settings of a control plane on `port` whose dashboard signs in through
 * the OpenID provider `issuer` as client `clientId` (a confidential client:
 * `clientSecret`); the callback is `http://127.0.0.1:{port}/auth/oidc/callback`,
 * which the provider must list. Sign-ins are not throttled (tests make dozens
 * from one address; the allowance is tested on its own).
 */
export function oidcSignInEnv(
  port: number,
  issuer: string,
  clientId: string,
  clientSecret: string,
): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_URL_TEMPLATE: `http://{subdomain}.localhost:${port}`,
    ADMIN_OIDC_ISSUER: issuer,
    ADMIN_OIDC_CLIENT_ID: clientId,
    ADMIN_OIDC_CLIENT_SECRET: clientSecret,
    ADMIN_OIDC_REDIRECT_URL: oidcCallbackUrl(port),
    SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
  };
}

/** The OpenID callback of a control plane on `port`, as its provider must list it. */
export function oidcCallbackUrl(port: number): string {
  return `http://127.0.0.1:${port}/auth/oidc/callback`;
}
