/**
 * The README's quick start, followed as written, in a fresh copy of this
 * checkout: `npm start` (the real service, Docker runners, the defaults),
 * the banner it prints (held against the sample in the README), every
 * `curl` of the README run by bash with the `export TOKEN=…` line the banner
 * printed, then the MCP Inspector's command line and the official SDK
 * client on the address the banner printed, through the system resolver: no
 * hosts file, no DNS help, no Host header.
 *
 * What differs from a person's first hour, and why:
 * - the copy holds the files `git ls-files -co --exclude-standard` names
 *   (tracked and new, not ignored), so it tests the checkout as it will be
 *   committed, uncommitted changes included; not `git clone`, which would
 *   test the last commit;
 * - its node_modules is a symbolic link to this checkout's (an `npm ci` is
 *   minutes of compiling; `npm start`'s own dependency check still runs);
 * - PORT is a free port instead of 8080 (the README's commands are run with
 *   8080 replaced by it) and PLANE_NAME is the test's own, so parallel test
 *   files keep their runner containers apart; RUNNER_BASE and DOCKER_HOST
 *   pass through from the test's environment, as a person's shell would;
 * - `npx @modelcontextprotocol/inspector` is the same pinned package run by
 *   Node 22 from a cache folder (inspector-cli.ts): it needs Node ≥ 22.19.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { existsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeSection } from '../../scripts/readme-section.js';
import { freePort } from '../support/control-plane.js';
import { provisionInspector } from './inspector-cli.js';
import { startService, type ServiceProcess } from './service-process.js';

const run = promisify(execFile);
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README_PORT = '8080';

/** The quick start's fenced `sh` and `text` blocks, in the README's order. */
function quickStartBlocks(): { lang: string; body: string }[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readmeSection(readme, 'quick-start');
  if (section === undefined) throw new Error('README.md has no quick-start markers');
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1]!,
    body: match[2]!,
  }));
}

/** This checkout's files as they will be committed, copied into a new folder. */
async function copyOfCheckout(): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'mcphost-quick-start-'));
  const clone = join(folder, 'mcphost');
  const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const path of stdout.split('\0').filter((p) => p !== '')) {
    const from = join(REPO_ROOT, path);
    // Deleted in the working tree, not yet in the index: not part of the checkout.
    if (!existsSync(from) || !statSync(from).isFile()) continue;
    mkdirSync(dirname(join(clone, path)), { recursive: true });
    copyFileSync(from, join(clone, path));
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

let blocks: { lang: string; body: string }[];
let folder: string;
let clone: string;
let port: number;
let service: ServiceProcess | undefined;
let banner = '';

/** A README command with the README's port replaced by the test's. */
const onOurPort = (text: string) =>
  text.replaceAll(`localhost:${README_PORT}`, `localhost:${port}`);

beforeAll(async () => {
  blocks = quickStartBlocks();
  clone = await copyOfCheckout();
  folder = dirname(clone);
  port = await freePort();
  const [start] = blocks;
  expect(start?.lang).toBe('sh');
  const commands = start!.body.split('\n').filter((line) => line.trim() !== '');
  expect(commands[0]).toMatch(/^git clone \S+ && cd mcphost\b/);
  expect(commands[1]).toBe('npm start');
  service = await startService({
    cwd: clone,
    command: { file: 'npm', args: ['start'] },
    processGroup: true,
    env: {
      PORT: String(port),
      PLANE_NAME: `quick-start-${process.pid}`,
      ...(process.env.RUNNER_BASE ? { RUNNER_BASE: process.env.RUNNER_BASE } : {}),
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    },
    waitMs: 300_000,
  });
  banner = service.banner();
}, 360_000);

afterAll(async () => {
  await service?.stop();
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

/** The MCP address of `subdomain` as the banner prints it (its preferred form). */
function printedAddress(subdomain: string): string {
  const match = /^ {2}MCP servers: (\S+)$/m.exec(banner);
  if (!match) throw new Error(`no MCP servers line in the banner:\n${banner}`);
  return match[1]!.replace('{subdomain}', subdomain);
}

describe("the README's quick start", () => {
  it('prints the banner the README shows', () => {
    const sample = blocks.find((block) => block.lang === 'text');
    expect(sample).toBeDefined();
    const real = banner.split('\n');
    for (const line of sample!.body.split('\n').filter((l) => l.trim() !== '')) {
      if (line.trim().startsWith('export TOKEN=')) {
        expect(real.some((l) => /^ {4}export TOKEN=mcph_\S+$/.test(l))).toBe(true);
      } else {
        expect(real).toContain(line.replaceAll(`:${README_PORT}`, `:${port}`));
      }
    }
  });

  it('runs its curl commands as written, with the token line the banner printed', async () => {
    const commands = blocks.filter((block) => block.lang === 'sh')[1];
    expect(commands).toBeDefined();
    const lines = commands!.body.split('\n');
    const tokenLine = lines.findIndex((line) => line.startsWith('export TOKEN='));
    expect(tokenLine).toBe(0);
    const printed = banner.split('\n').find((line) => line.trim().startsWith('export TOKEN='));
    expect(printed).toBeDefined();
    lines[tokenLine] = printed!.trim();
    const script = onOurPort(lines.join('\n'));
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: clone,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    expect(stdout).not.toContain('"error"');
    expect(stdout).toContain('"subdomain":"acme"');
    // The README's "# →" line is what the last command answers (but for its timing).
    const shown = /^# → (\{.*\})$/m.exec(commands!.body);
    expect(shown).not.toBeNull();
    const expected = JSON.parse(shown![1]!) as Record<string, unknown>;
    const last = JSON.parse(stdout.slice(stdout.lastIndexOf('{"ok"'))) as Record<string, unknown>;
    expect(last).toMatchObject({
      ok: expected.ok,
      result: expected.result,
      version: expected.version,
      logs: [expect.objectContaining({ level: 'log', text: 'adding' })],
    });
  }, 120_000);

  it('reaches the printed address with the MCP Inspector command it shows', async () => {
    const inspector = blocks.filter((block) => block.lang === 'sh')[2];
    expect(inspector).toBeDefined();
    const command = inspector!.body.trim();
    const prefix = 'npx @modelcontextprotocol/inspector ';
    expect(command.startsWith(prefix)).toBe(true);
    const args = onOurPort(command.slice(prefix.length)).split(/\s+/);
    // The README names the address the banner prints.
    expect(args).toContain(printedAddress('acme'));
    const { node, script } = await provisionInspector();
    const { stdout } = await run(node, [script, ...args], {
      cwd: folder,
      env: { PATH: `${dirname(node)}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: folder },
      timeout: 60_000,
    });
    const listed = JSON.parse(stdout) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toEqual(['add']);
  }, 900_000);

  it('serves the official SDK client at the printed address', async () => {
    const client = new Client({ name: 'quick-start', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(printedAddress('acme'))));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
      const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as {
        content: { type: string; text: string }[];
      };
      expect(result.content[0]).toMatchObject({ type: 'text', text: '5' });
    } finally {
      await client.close();
    }
  }, 120_000);
});
