/**
 * The sandbox's public face: what the composition root, the MCP endpoint,
 * the invocation path and the admin API use.
 */
export { SandboxManager, type ServerPoolStats, type BudgetStats } from './sandbox-manager.js';
export { checkSandboxEngine, createSandboxDriver, type SandboxSettings } from './create-sandbox.js';
export { poolUnitOf } from './pool/pool-key.js';
export {
  resolveLimits,
  ceilingProblems,
  InvocationLimitsSchema,
  OWN_LIMIT_FIELDS,
  type InvocationLimits,
  type OwnLimits,
  type LimitCeilings,
  type CeilingProblem,
} from './limits.js';
export type {
  ToolRuntime,
  InvokeHooks,
  LogEntry,
  InvocationOutcome,
  InvocationVerdict,
  OutcomeError,
  ProgressUpdate,
} from './invocation.js';
export type { PoolDefaults, PoolCaps, PoolSize } from './pool/pool-settings.js';
export type { PoolStats } from './pool/pool-contract.js';
/** RUNNER_SOCKET_DIR's bound (config.ts checks it). */
export { MAX_SOCKET_ROOT_BYTES } from './docker/runner-socket.js';
export { MultiEngineSandbox, type EngineStats } from './engines/multi-engine-sandbox.js';
export { missingRuntimeMessage } from './runtime-availability.js';
