/**
 * A start that cannot reach the Docker engine says where it looked and what
 * to do, and writes nothing first: no data directory, no generated
 * master.key (a key generated before a failed start would later not match
 * the one an operator sets).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explainDockerFailure } from '../../../control-plane/sandbox/docker/docker-preflight.js';
import { startApp } from '../../../control-plane/app/index.js';
import { loadConfig } from '../../../control-plane/config.js';
import { createLogger } from '../../../control-plane/logger.js';

const SOCKET = 'unix:///run/mcphost-test-missing/docker.sock';

describe('explainDockerFailure', () => {
  const failure = (code: string) =>
    explainDockerFailure(Object.assign(new Error(`connect ${code}`), { code }), SOCKET);

  it('names the fix for a missing socket, a refused permission and a silent engine', () => {
    expect(failure('ENOENT').message).toMatch(
      /no Docker engine socket at unix:\/\/\/run.*DOCKER_HOST.*rootless/,
    );
    expect(failure('EACCES').message).toMatch(/permission denied.*usermod -aG docker.*DOCKER_GID/);
    expect(failure('ECONNREFUSED').message).toMatch(
      /nothing answers at .*is the Docker engine running/,
    );
    expect(failure('EOTHER').message).toMatch(
      /does not answer \(connect EOTHER\); check DOCKER_HOST/,
    );
    expect(failure('ENOENT').code).toBe('ERR_SANDBOX_UNAVAILABLE');
  });
});

describe('a start without a reachable engine', () => {
  const saved = process.env.DOCKER_HOST;
  const parent = mkdtempSync(join(tmpdir(), 'mcphost-preflight-'));
  afterEach(() => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    rmSync(parent, { recursive: true, force: true });
  });

  it('stops with the fix and writes neither the data directory nor a master.key', async () => {
    process.env.DOCKER_HOST = SOCKET;
    const dataDir = join(parent, 'data');
    const config = loadConfig(
      { PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      '/nonexistent/.env',
    );
    await expect(startApp(config, createLogger('silent'))).rejects.toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: expect.stringContaining(`no Docker engine socket at ${SOCKET}`),
    });
    expect(existsSync(dataDir)).toBe(false);
    expect(existsSync(join(dataDir, 'master.key'))).toBe(false);
  });
});
