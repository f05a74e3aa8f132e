/**
 * `npm start`'s first hour, on the real service run as its own process: the
 * banner's token line makes its curl work as pasted, log lines are JSON on a
 * pipe and readable with LOG_FORMAT=pretty, and `--demo` on a data folder an
 * earlier start made creates the demo without the admin token, attributed
 * to the demo in the audit log. SANDBOX_DRIVER=process: nothing here runs a
 * tool, and the quick-start test covers the Docker default.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/control-plane.js';
import { startService, type ServiceProcess } from './service-process.js';

const run = promisify(execFile);
const started: ServiceProcess[] = [];
const folders: string[] = [];

afterAll(async () => {
  for (const service of started) await service.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A new working folder (no mcphost.env, no .env) holding the data folder. */
function workFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mcphost-first-hour-'));
  folders.push(folder);
  return folder;
}

async function start(
  folder: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServiceProcess> {
  const service = await startService({
    cwd: folder,
    args,
    env: {
      PORT: String(await freePort()),
      DATA_DIR: join(folder, 'data'),
      SANDBOX_DRIVER: 'process',
      MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
      PLANE_NAME: `first-hour-${process.pid}`,
      ...env,
    },
  });
  started.push(service);
  return service;
}

/** The line of the banner that exports the token, run through a shell: $TOKEN as the shell has it. */
async function tokenFromBanner(banner: string, env: Record<string, string> = {}): Promise<string> {
  const line = banner.split('\n').find((l) => l.trim().startsWith('export TOKEN='));
  if (line === undefined) throw new Error(`no export TOKEN line in:\n${banner}`);
  const { stdout } = await run('bash', ['-c', `${line.trim()}\nprintf %s "$TOKEN"`], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  });
  return stdout;
}

/** The admin origin the banner names. */
function dashboardOf(banner: string): string {
  const match = /^ {2}dashboard: +(http:\/\/\S+)\/$/m.exec(banner);
  if (!match) throw new Error(`no dashboard line in:\n${banner}`);
  return match[1]!;
}

async function admin(origin: string, token: string, path: string): Promise<any> {
  const response = await fetch(`${origin}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe('the banner', () => {
  it('exports a generated token its curl works with, on loopback, and logs JSON to a pipe', async () => {
    const folder = workFolder();
    const service = await start(folder, {});
    const banner = service.banner();
    expect(banner).toMatch(/listening on 127\.0\.0\.1:\d+: this machine only/);
    expect(banner).toContain('No servers yet. Create a first one:');
    const token = await tokenFromBanner(banner);
    expect(token).toMatch(/^mcph_/);
    // The banner's own curl, as printed, with $TOKEN from the export line.
    const curl = banner.slice(banner.indexOf('    curl')).split('\n').slice(0, 2).join('\n');
    const { stdout } = await run('bash', ['-c', `export TOKEN=${token}\n${curl.trim()}`]);
    expect(JSON.parse(stdout)).toMatchObject({ subdomain: 'acme' });
    expect((await admin(dashboardOf(banner), token, '/api/servers')).servers).toHaveLength(1);
    // Not a terminal: LOG_FORMAT=auto writes JSON.
    const lines = service.logLines();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((line) => JSON.parse(line).msg)).toContain('request');
    expect(await service.stop()).toBe(0);
  }, 240_000);

  it('with LOG_FORMAT=pretty writes readable lines, and exports ADMIN_TOKEN from the environment', async () => {
    const folder = workFolder();
    const adminToken = 'first-hour-admin-token-0123456789';
    const service = await start(folder, { LOG_FORMAT: 'pretty', ADMIN_TOKEN: adminToken });
    const banner = service.banner();
    expect(banner).toContain('    export TOKEN="$ADMIN_TOKEN"');
    expect(banner).not.toContain(adminToken);
    expect(await tokenFromBanner(banner, { ADMIN_TOKEN: adminToken })).toBe(adminToken);
    await admin(dashboardOf(banner), adminToken, '/api/servers');
    await expect
      .poll(() => service.logLines().some((l) => l.includes('[http] request')))
      .toBe(true);
    for (const line of service.logLines()) {
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) /);
    }
    const access = service.logLines().find((l) => l.includes('[http] request'))!;
    expect(access).toMatch(/ side=admin route="GET \/api\/servers" status=200 ms=/);
    expect(service.stdout()).not.toContain(adminToken);
    expect(await service.stop()).toBe(0);
  }, 240_000);
});

describe('npm start -- --demo', () => {
  it('creates the demo on a data folder an earlier start made, without the admin token', async () => {
    const folder = workFolder();
    const first = await start(folder, {});
    const token = await tokenFromBanner(first.banner());
    expect(await first.stop()).toBe(0);

    const second = await start(folder, {}, ['--demo']);
    const banner = second.banner();
    expect(`${second.stdout()}${second.stderr()}`).not.toContain('needs the admin token');
    expect(banner).toContain(
      'Demo server "demo" created, with tools greet, sales_summary, send_webhook.',
    );
    // The token was shown at the first start only; the servers are listed instead of a hint.
    expect(banner).not.toContain('export TOKEN');
    expect(banner).toContain('npm run admin-token -- --rotate');
    expect(banner).not.toContain('Create a first one');
    expect(banner).toMatch(
      / {2}1 server:\n {4}demo {2}http:\/\/localhost:\d+\/servers\/demo\/mcp\n/,
    );

    const origin = dashboardOf(banner);
    const tools = (await admin(origin, token, '/api/servers/demo/tools')).tools as {
      name: string;
      version: number;
    }[];
    expect(tools.map((tool) => [tool.name, tool.version])).toEqual([
      ['greet', 1],
      ['sales_summary', 1],
      ['send_webhook', 1],
    ]);
    const audit = (await admin(origin, token, '/api/audit?server=demo')).entries as {
      action: string;
      actor: { kind: string; label: string };
    }[];
    expect(audit.map((entry) => entry.action).sort()).toEqual([
      'server.create',
      'tool.save',
      'tool.save',
      'tool.save',
    ]);
    for (const entry of audit) {
      expect(entry.actor).toEqual({ kind: 'bootstrap', id: null, label: 'npm start -- --demo' });
    }
    expect(await second.stop()).toBe(0);

    // Again: the demo is there; nothing is saved anew.
    const third = await start(folder, {}, ['--demo']);
    expect(third.banner()).toContain('Demo server "demo" was there already');
    const again = (await admin(dashboardOf(third.banner()), token, '/api/servers/demo/tools'))
      .tools as { version: number }[];
    expect(again.map((tool) => tool.version)).toEqual([1, 1, 1]);
    expect(await third.stop()).toBe(0);
  }, 300_000);
});
