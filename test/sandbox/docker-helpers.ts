/** Shared set-up of the sandbox integration tests: real Docker, the real harness and image. */
import { randomUUID } from 'node:crypto';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ensureRunnerImage } from '../../control-plane/sandbox/image/ensure-runner-image.js';
import type { InvokeHooks, ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import {
  DEFAULT_INVOCATION_LIMITS,
  type InvocationLimits,
} from '../../control-plane/sandbox/limits.js';
import {
  SandboxManager,
  type SandboxManagerOptions,
} from '../../control-plane/sandbox/sandbox-manager.js';

/** The runner image global-setup built (or builds it when a file runs alone). */
export async function runnerImage(): Promise<string> {
  return process.env.MCPHOST_TEST_RUNNER_IMAGE ?? (await ensureRunnerImage());
}

/** A plane name no other test file (or engineer) uses, so reaping stays ours. */
export function uniquePlaneName(what: string): string {
  return `test-sandbox-${what}-${randomUUID().slice(0, 8)}`;
}

/** Limits small enough for fast tests. */
export const TEST_LIMITS: InvocationLimits = {
  ...DEFAULT_INVOCATION_LIMITS,
  timeoutMs: 5_000,
  memoryMb: 128,
};

/** A manager on a real Docker driver; close both with `closeAll`. */
export function dockerManager(
  image: string,
  planeName: string,
  overrides: Partial<Omit<SandboxManagerOptions, 'driver'>> = {},
): { driver: DockerSandbox; sandbox: SandboxManager } {
  const driver = new DockerSandbox({ image, planeName, killTimeoutMs: 5_000 });
  const sandbox = new SandboxManager({
    driver,
    defaults: { minWarm: 0, maxSize: 2, queueTimeoutMs: 60_000, limits: TEST_LIMITS },
    generic: { size: 0 },
    caps: { maxSizePerPool: 8, maxTotal: 16 },
    ...overrides,
  });
  return { driver, sandbox };
}

/** A tool runtime; `limits` merge over TEST_LIMITS. */
export function runtime(
  poolKey: string,
  code: string,
  extra: Partial<ToolRuntime> = {},
): ToolRuntime {
  const [server = poolKey, tool = 'tool'] = poolKey.split('/');
  return {
    server,
    tool,
    isolation: 'tool',
    runtime: 'runc',
    code,
    env: {},
    strict: false,
    ...extra,
    limits: { ...TEST_LIMITS, ...extra.limits },
  };
}

/** Hooks with no brokered calls expected. */
export function hooks(
  params: Record<string, unknown> = {},
  extra: Partial<InvokeHooks> = {},
): InvokeHooks {
  return {
    params,
    onCall: async (operation) => {
      throw new Error(`unexpected ${operation} call`);
    },
    ...extra,
  };
}
