/**
 * Loopback by default: `npm start` binds 127.0.0.1 (nothing it serves is
 * offered to the network before its operator says so), while both control
 * plane images and compose.yaml bind every interface inside their container,
 * whose loopback is its own; the published ports decide what the host offers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { defaultConfig } from '../../control-plane/config.js';
import { offlineDockerfile } from '../../scripts/control-plane-image.js';

const REPO = new URL('../../', import.meta.url).pathname;

/** The runtime stage's ENV instructions of a Dockerfile, joined. */
function runtimeEnv(dockerfile: string): string {
  const stages = dockerfile.split(/^FROM /m);
  return (stages.at(-1) ?? '')
    .split('\n')
    .filter((line) => line.startsWith('ENV '))
    .join('\n');
}

it('binds 127.0.0.1 when nothing is set (npm start)', () => {
  expect(defaultConfig().listenHost).toBe('127.0.0.1');
});

it('binds every interface inside both images', () => {
  const registry = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  expect(runtimeEnv(registry)).toMatch(/\bLISTEN_HOST=0\.0\.0\.0\b/);
  expect(runtimeEnv(offlineDockerfile('base:test'))).toMatch(/\bLISTEN_HOST=0\.0\.0\.0\b/);
});

it('binds every interface in the compose stack, and publishes on loopback by default', () => {
  const compose = readFileSync(join(REPO, 'compose.yaml'), 'utf8');
  const controlPlane = compose.slice(
    compose.indexOf('\n  control-plane:'),
    compose.indexOf('\n  postgres:'),
  );
  expect(controlPlane).toMatch(/^ {6}LISTEN_HOST: '?0\.0\.0\.0'?$/m);
  expect(controlPlane).toContain("- '${MCPHOST_PUBLISH:-127.0.0.1:8080}:8080'");
  expect(controlPlane).toContain("- '${MCPHOST_ADMIN_PUBLISH:-127.0.0.1:8081}:8081'");
});
