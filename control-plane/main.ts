/**
 * `npm start`: loads the configuration, starts the service, prints where it
 * answers (and the admin token, once, when it was generated), and shuts down
 * cleanly on SIGINT/SIGTERM. `--demo` also creates a demo server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { isMcphostError } from './errors.js';
import { loadConfig, serverAddress } from './config.js';
import { createLogger } from './logger.js';
import { startApp } from './app/index.js';
import { createDemoServer } from './app/index.js';

async function main(): Promise<void> {
  // One settings source per mode: a compose `.env` beside the checkout is not read.
  // One that holds what a start must not do without (its key, its store) stops it:
  // a start without them would generate another key or open an empty store.
  if (!process.env.MCPHOST_ENV_FILE && existsSync('.env') && !existsSync('mcphost.env')) {
    const held = Object.keys(parseEnv(readFileSync('.env', 'utf8'))).filter((name) =>
      ['MASTER_KEY', 'DATABASE_URL', 'DATA_DIR', 'ADMIN_TOKEN'].includes(name),
    );
    const hint =
      "./.env is not read (it is compose's file); put settings for npm start in mcphost.env, or set MCPHOST_ENV_FILE=.env";
    if (held.some((name) => process.env[name] === undefined)) {
      console.error(`mcphost: ${hint}. It sets ${held.join(', ')}: not starting without them.`);
      process.exit(78); // EX_CONFIG
    }
    console.warn(`mcphost: ${hint}`);
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(isMcphostError(error) ? error.message : error);
    process.exit(78); // EX_CONFIG
  }
  const log = createLogger(config.logLevel);
  const app = await startApp(config, log);
  const adminUrl = `http://localhost:${app.adminPort}`;
  const banner = [
    '',
    `mcphost is running.`,
    `  admin API:   ${adminUrl}/api  (OpenAPI: ${adminUrl}/api/openapi.json)`,
    `  MCP servers: ${serverAddress(config, '{subdomain}')}/mcp`,
  ];
  if (app.generatedAdminToken) {
    banner.push(
      '',
      `  Admin token (shown only this once; set ADMIN_TOKEN to choose your own):`,
      `    ${app.generatedAdminToken}`,
    );
  }
  banner.push(
    '',
    '  Create a first server:',
    `    curl -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \\`,
    `      -d '{"subdomain":"demo"}' ${adminUrl}/api/servers`,
    '',
  );
  if (process.argv.includes('--demo')) {
    const token = config.adminToken ?? app.generatedAdminToken;
    if (token === undefined) {
      banner.push(
        '  --demo needs the admin token: set ADMIN_TOKEN (it was generated at an earlier start).',
      );
    } else {
      const created = await createDemoServer(`http://127.0.0.1:${app.adminPort}`, token);
      banner.push(
        `  Demo server: ${serverAddress(config, created.subdomain)}/mcp with tools ${created.tools.join(', ')}`,
        '',
      );
    }
  }
  process.stdout.write(`${banner.join('\n')}\n`);

  // A supervisor's SIGTERM to the process group reaches node twice (directly,
  // and forwarded by a wrapper such as tsx or npm): a repeat within
  // REPEAT_WINDOW_MS is the same request. A later one means "now".
  const REPEAT_WINDOW_MS = 2000;
  let stoppingSince: number | undefined;
  const stop = (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < REPEAT_WINDOW_MS) return;
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stoppingSince = Date.now();
    log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(
    isMcphostError(error) ? `mcphost could not start: ${error.code}: ${error.message}` : error,
  );
  process.exit(1);
});
