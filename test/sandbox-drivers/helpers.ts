/** Shared helpers of the sandbox-driver tests: the echo runner image and stdout collection. */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxInstance, SandboxSpec } from '../../control-plane/sandbox/driver.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';

/** The throwaway harness (ready + echo) these tests build their runner image from. */
export const ECHO_HARNESS_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'echo-harness',
);

/** Runner image built offline from the echo harness; content-addressed, so built once and reused. */
export function ensureEchoRunnerImage(): Promise<string> {
  return ensureRunnerImage({ base: 'local', harnessDir: ECHO_HARNESS_DIR });
}

/** A plane name no other test (or engineer) uses. */
export function uniquePlaneName(what: string): string {
  return `test-drivers-${what}-${randomUUID().slice(0, 8)}`;
}

/** A small spec; override what a test cares about. */
export function smallSpec(overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  return { labels: { 'mcphost.pool': 'test' }, memoryMb: 128, cpus: 0.5, pids: 64, ...overrides };
}

/** Everything an instance writes to stdout, as text, until it exits. */
export async function stdoutUntilExit(instance: SandboxInstance): Promise<string> {
  const chunks: Buffer[] = [];
  instance.onStdout((chunk) => chunks.push(Buffer.from(chunk)));
  await instance.exited;
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads stdout line by line: `next()` resolves with the next complete line. */
export function collectLines(instance: SandboxInstance): { next: () => Promise<string> } {
  let buffered = '';
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  instance.onStdout((chunk) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  return {
    next: () => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
