/**
 * `npm start`: loads the configuration, starts the service, prints the banner
 * (banner.ts: where it answers, the admin token once when it was generated,
 * the next step), and shuts down cleanly on SIGINT/SIGTERM. `--demo` also
 * creates a demo server (app/demo.ts), without needing the admin token.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { isMcphostError } from './errors.js';
import {
  loadConfig,
  preferredMcpUrl,
  serverMcpUrls,
  settingsFileOf,
  type Config,
} from './config.js';
import { createServiceLogger } from './logger.js';
import { startApp } from './app/index.js';
import { bannerLines, type AdminTokenSource, type BannerFacts } from './banner.js';

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
  const log = createServiceLogger(config);
  const app = await startApp(config, log);
  // Created before the banner, which then lists it with the other servers. A demo
  // that cannot be made is logged; the service it would run on keeps running.
  const demo = process.argv.includes('--demo')
    ? await app.createDemoServer().catch((error: unknown) => {
        log.error({ err: error }, 'the demo server could not be created');
        return undefined;
      })
    : undefined;
  // The bound ports (PORT=0 picks one), not the configured ones.
  const bound = { ...config, port: app.port };
  const urls = serverMcpUrls(bound, '{subdomain}');
  const preferred = preferredMcpUrl(bound, '{subdomain}');
  const facts: BannerFacts = {
    listenHost: config.listenHost,
    port: app.port,
    adminPort: app.adminPort,
    mcpUrlPattern: preferred,
    otherMcpUrlPatterns: Object.values(urls).filter((url) => url !== preferred),
    token: adminTokenSource(config, app.generatedAdminToken),
    servers: (await app.serverSubdomains()).map((subdomain) => ({
      subdomain,
      mcpUrl: preferredMcpUrl(bound, subdomain),
    })),
    ...(demo === undefined ? {} : { demo }),
  };
  process.stdout.write(`${bannerLines(facts).join('\n')}\n`);

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

/**
 * Where this start's admin token comes from, looked up as loadConfig does
 * (the environment first, then the settings file), so the banner can say how
 * to put it in $TOKEN. The value itself is printed only when generated now.
 */
function adminTokenSource(config: Config, generated: string | undefined): AdminTokenSource {
  if (generated !== undefined) return { kind: 'generated', token: generated };
  if (config.adminToken === undefined) return { kind: 'stored' };
  const file = settingsFileOf();
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, 'utf8')) : {};
  const lookup = (name: string) => {
    const value = process.env[name] ?? fromFile[name];
    return value === '' ? undefined : value;
  };
  const path = lookup('ADMIN_TOKEN_FILE');
  if (path !== undefined) return { kind: 'file', path };
  if (process.env.ADMIN_TOKEN !== undefined && process.env.ADMIN_TOKEN !== '') {
    return { kind: 'environment' };
  }
  return { kind: 'settings-file', file };
}

main().catch((error: unknown) => {
  console.error(
    isMcphostError(error) ? `mcphost could not start: ${error.code}: ${error.message}` : error,
  );
  process.exit(1);
});
