/**
 * The configuration table is the one place a default is written: the parts
 * get every value from it (through app/component-settings.ts), tests and
 * scripts ask it for "the defaults", and an old variable name still counts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  brokerLimitsFrom,
  invocationLimitsFrom,
  poolDefaultsFrom,
} from '../../../control-plane/app/component-settings.js';
import {
  CONFIG_TABLE,
  defaultConfig,
  loadConfig,
  readSetting,
  serverAddress,
  settingsFileOf,
} from '../../../control-plane/config.js';

const NO_DOTENV = '/nonexistent/.env';

describe('defaultConfig', () => {
  it('is the configuration with nothing set, frozen', () => {
    const defaults = defaultConfig();
    expect(defaults).toEqual(loadConfig({}, NO_DOTENV));
    expect(Object.isFrozen(defaults)).toBe(true);
  });

  it('gives each part the table defaults, and a configured value wins', () => {
    const defaults = defaultConfig();
    // Spot checks against the table's own text, not numbers written here.
    expect(invocationLimitsFrom(defaults).timeoutMs).toBe(
      Number(CONFIG_TABLE.toolTimeoutMs.default),
    );
    expect(invocationLimitsFrom(defaults).maxLogBytes).toBe(
      Number(CONFIG_TABLE.toolMaxLogBytes.default),
    );
    expect(poolDefaultsFrom(defaults)).toMatchObject({
      maxQueue: Number(CONFIG_TABLE.poolMaxQueue.default),
      queueTimeoutMs: Number(CONFIG_TABLE.poolQueueTimeoutMs.default),
      startupTimeoutMs: Number(CONFIG_TABLE.runnerStartupTimeoutMs.default),
      timeoutGraceMs: Number(CONFIG_TABLE.toolTimeoutGraceMs.default),
    });
    expect(brokerLimitsFrom(defaults).db.statementTimeoutMs).toBe(
      Number(CONFIG_TABLE.dbStatementTimeoutMs.default),
    );

    const configured = loadConfig(
      { TOOL_TIMEOUT_GRACE_MS: '0', DB_CONNECT_TIMEOUT_MS: '1234', HTTP_EGRESS_TIMEOUT_MS: '99' },
      NO_DOTENV,
    );
    // 0 is a value, never "unset".
    expect(poolDefaultsFrom(configured).timeoutGraceMs).toBe(0);
    expect(brokerLimitsFrom(configured).db.connectTimeoutMs).toBe(1234);
    expect(brokerLimitsFrom(configured).http).toMatchObject({
      connectTimeoutMs: 99,
      totalTimeoutMs: 99,
    });
  });
});

describe('readSetting', () => {
  it('reads one variable from the given environment, else the default', () => {
    expect(readSetting('runnerBase', {})).toBe(CONFIG_TABLE.runnerBase.default);
    expect(readSetting('runnerBase', { RUNNER_BASE: 'registry' })).toBe('registry');
    // An empty value is unset, as at boot.
    expect(readSetting('runnerBase', { RUNNER_BASE: '' })).toBe('auto');
  });

  it('still reads MCPHOST_RUNNER_BASE, the former name, below RUNNER_BASE', () => {
    expect(readSetting('runnerBase', { MCPHOST_RUNNER_BASE: 'local' })).toBe('local');
    expect(
      readSetting('runnerBase', { RUNNER_BASE: 'registry', MCPHOST_RUNNER_BASE: 'local' }),
    ).toBe('registry');
    expect(loadConfig({ MCPHOST_RUNNER_BASE: 'local' }, NO_DOTENV).runnerBase).toBe('local');
  });

  it('refuses a bad value with ERR_CONFIG naming the variable that gave it', () => {
    expect(() => readSetting('runnerBase', { MCPHOST_RUNNER_BASE: 'cloud' })).toThrow(
      expect.objectContaining({
        code: 'ERR_CONFIG',
        message: expect.stringMatching(/^invalid configuration: MCPHOST_RUNNER_BASE="cloud": /),
      }),
    );
    expect(() => readSetting('runnerBase', { RUNNER_BASE: 'cloud' })).toThrow(
      expect.objectContaining({
        code: 'ERR_CONFIG',
        message: expect.stringContaining('RUNNER_BASE="cloud"'),
      }),
    );
  });
});

describe('serverAddress', () => {
  it('follows PORT in the default template, and takes an operator template as written', () => {
    expect(serverAddress(loadConfig({ PORT: '18400' }, NO_DOTENV), 'acme')).toBe(
      'http://acme.localhost:18400',
    );
    expect(serverAddress(defaultConfig(), 'acme')).toBe('http://acme.localhost:8080');
    const operator = loadConfig(
      { PORT: '18400', PUBLIC_URL_TEMPLATE: 'https://{subdomain}.mcp.example.com/' },
      NO_DOTENV,
    );
    expect(serverAddress(operator, 'acme')).toBe('https://acme.mcp.example.com');
    expect(() => loadConfig({ PUBLIC_URL_TEMPLATE: 'acme:{port}' }, NO_DOTENV)).toThrow(
      /PUBLIC_URL_TEMPLATE.*must contain \{subdomain\}/,
    );
  });
});

describe('the settings file', () => {
  it("is mcphost.env or MCPHOST_ENV_FILE, never compose's .env", () => {
    expect(settingsFileOf({})).toBe('mcphost.env');
    expect(() => loadConfig({ MCPHOST_ENV_FILE: '/nonexistent/dev.env' })).toThrow(
      /MCPHOST_ENV_FILE="\/nonexistent\/dev.env": no such file/,
    );
    expect(settingsFileOf({ MCPHOST_ENV_FILE: '/etc/mcphost.env' })).toBe('/etc/mcphost.env');
    const dir = mkdtempSync(join(tmpdir(), 'mcphost-settings-'));
    try {
      writeFileSync(join(dir, '.env'), 'PORT=9999\n');
      writeFileSync(join(dir, 'dev.env'), 'PORT=7777\n');
      // The environment wins over the file; the file fills in what it does not set.
      expect(loadConfig({ MCPHOST_ENV_FILE: join(dir, 'dev.env') }).port).toBe(7777);
      expect(loadConfig({ MCPHOST_ENV_FILE: join(dir, 'dev.env'), PORT: '8181' }).port).toBe(8181);
      // A compose .env in the working directory is not read.
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        expect(loadConfig({}).port).toBe(8080);
      } finally {
        process.chdir(cwd);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('secrets from files (NAME_FILE)', () => {
  const token = 'a'.repeat(32);

  it('reads a secret variable from the file NAME_FILE names, without its line break', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcphost-secret-'));
    try {
      writeFileSync(join(dir, 'admin_token'), `${token}\n`);
      const config = loadConfig({ ADMIN_TOKEN_FILE: join(dir, 'admin_token') }, NO_DOTENV);
      expect(config.adminToken).toBe(token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses both forms at once, a missing or empty file, and hides a bad value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcphost-secret-'));
    try {
      writeFileSync(join(dir, 'token'), token);
      writeFileSync(join(dir, 'empty'), '\n');
      writeFileSync(join(dir, 'short'), 'tooshort-secret');
      const problem = (env: Record<string, string>) => {
        try {
          loadConfig(env, NO_DOTENV);
          return '';
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(problem({ ADMIN_TOKEN: token, ADMIN_TOKEN_FILE: join(dir, 'token') })).toMatch(
        /ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set/,
      );
      expect(problem({ MASTER_KEY_FILE: join(dir, 'absent') })).toMatch(
        /MASTER_KEY_FILE=".*absent": cannot read it \(ENOENT\)/,
      );
      expect(problem({ ADMIN_TOKEN_FILE: join(dir, 'empty') })).toMatch(/file is empty/);
      const shortToken = problem({ ADMIN_TOKEN_FILE: join(dir, 'short') });
      expect(shortToken).toMatch(/ADMIN_TOKEN_FILE=\(value hidden\)/);
      expect(shortToken).not.toContain('tooshort-secret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads only a regular file, to a bound: not /dev/zero, a FIFO or a huge file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcphost-secret-'));
    try {
      const fifo = join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      writeFileSync(join(dir, 'huge'), 'x'.repeat(64 * 1024 + 1));
      const problem = (path: string) => {
        try {
          loadConfig({ MASTER_KEY_FILE: path }, NO_DOTENV);
          return '';
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(problem('/dev/zero')).toMatch(/not a regular file/);
      expect(problem(fifo)).toMatch(/not a regular file/);
      expect(problem(join(dir, 'huge'))).toMatch(/larger than 64 KiB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is only for credentials: other variables have no _FILE form', () => {
    const config = loadConfig({ BASE_DOMAIN_FILE: '/nonexistent' }, NO_DOTENV);
    expect(config.baseDomain).toBe(defaultConfig().baseDomain);
  });
});
