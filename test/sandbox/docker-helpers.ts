/** Shared set-up of the sandbox integration tests: real Docker, the real harness and image. */
import { randomUUID } from 'node:crypto';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { ensureRunnerImage } from '../../control-plane/image-build/ensure-runner-image.js';
import type { InvokeHooks, ToolRuntime } from '../../control-plane/sandbox/invocation.js';
import { readSetting } from '../../control-plane/config.js';
import type {
  InvocationLimits,
  PoolCaps,
  PoolDefaults,
} from '../../control-plane/sandbox/index.js';
import {
  SandboxManager,
  type SandboxManagerOptions,
} from '../../control-plane/sandbox/sandbox-manager.js';
import {
  DEFAULT_INVOCATION_LIMITS,
  DEFAULT_POOL_DEFAULTS,
  DEFAULT_CAP_EXTRAS,
  DEFAULT_START_CONCURRENCY,
} from '../support/config-defaults.js';

/** The runner image global-setup built (or builds it when a file runs alone). */
export async function runnerImage(): Promise<string> {
  return (
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }))
  );
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

/**
 * What a test may set: `defaults` and `caps` it gives replace this helper's own
 * choices; whatever they leave out is the configuration table's default,
 * except the queue timeout: a loaded engine may take long to start a container.
 */
export type DockerManagerOverrides = Partial<
  Omit<SandboxManagerOptions, 'driver' | 'defaults' | 'caps'>
> & {
  defaults?: Partial<PoolDefaults>;
  caps?: Omit<PoolCaps, keyof typeof DEFAULT_CAP_EXTRAS> & Partial<typeof DEFAULT_CAP_EXTRAS>;
};

/** A manager on a real Docker driver; close both with `closeAll`. */
export function dockerManager(
  image: string,
  planeName: string,
  { defaults, caps, ...overrides }: DockerManagerOverrides = {},
): { driver: DockerSandbox; sandbox: SandboxManager } {
  const driver = new DockerSandbox({ image, planeName, killTimeoutMs: 5_000 });
  const sandbox = new SandboxManager({
    driver,
    defaults: {
      ...DEFAULT_POOL_DEFAULTS,
      queueTimeoutMs: 60_000,
      ...(defaults ?? { minWarm: 0, maxSize: 2, limits: TEST_LIMITS }),
    },
    generic: { size: 0 },
    startConcurrency: DEFAULT_START_CONCURRENCY,
    reapIntervalMs: 30_000,
    caps: { ...DEFAULT_CAP_EXTRAS, ...(caps ?? { maxSizePerPool: 8, maxTotal: 16 }) },
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
