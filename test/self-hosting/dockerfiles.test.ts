/**
 * The two ways to build the control plane image must give one runtime: the
 * repository's Dockerfile (registry path) and the Dockerfile that
 * scripts/control-plane-image.ts generates (offline path) declare the same
 * user, entry point, port, volume, environment and health check.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offlineDockerfile } from '../../scripts/control-plane-image.js';
import { REPO_ROOT } from './build-output.js';

const RUNTIME_INSTRUCTIONS = [
  'USER',
  'WORKDIR',
  'ENV',
  'VOLUME',
  'EXPOSE',
  'HEALTHCHECK',
  'ENTRYPOINT',
];

/** Instructions of the last stage, joined across line continuations, keyed by instruction name. */
function runtimeStage(dockerfile: string): Map<string, string[]> {
  const lines = dockerfile
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const lastFrom = lines.findLastIndex((line) => line.startsWith('FROM '));
  const stage = new Map<string, string[]>();
  for (const line of lines.slice(lastFrom + 1)) {
    const instruction = line.split(/\s/)[0] ?? '';
    stage.set(instruction, [...(stage.get(instruction) ?? []), line]);
  }
  return stage;
}

const repositoryDockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

describe('Dockerfile and the offline image', () => {
  it.each(RUNTIME_INSTRUCTIONS)('declare the same %s', (instruction) => {
    const registry = runtimeStage(repositoryDockerfile).get(instruction);
    const offline = runtimeStage(offlineDockerfile('mcphost-node-base:test')).get(instruction);
    expect(registry).toBeDefined();
    expect(registry).toEqual(offline);
  });

  it('builds with the toolchain and ships production dependencies only, as a non-root user', () => {
    expect(repositoryDockerfile).toMatch(/^ARG NODE_IMAGE=node:22-slim$/m);
    expect(repositoryDockerfile).toMatch(
      /apt-get install -y --no-install-recommends python3 make g\+\+/,
    );
    expect(repositoryDockerfile).toContain('RUN npm ci');
    expect(repositoryDockerfile).toContain('npm prune --omit=dev');
    const runtime = runtimeStage(repositoryDockerfile);
    expect(runtime.get('USER')?.[0]).not.toMatch(/^USER (0|root)\b/);
    expect(runtime.get('COPY')?.join('\n')).toContain('Dockerfile.runner');
  });

  it('keeps host dependencies, build output, data and secrets out of the build context', () => {
    const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of [
      'node_modules',
      'dist',
      'data',
      '.env',
      '.git',
      'secrets',
      '*.backup.json',
    ])
      expect(ignored).toContain(entry);
  });
});
