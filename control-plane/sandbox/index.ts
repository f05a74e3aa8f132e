/**
 * The sandbox's public face: what the MCP endpoint and the admin API use.
 */
export {
  SandboxManager,
  GENERIC_POOL_KEY,
  type SandboxManagerOptions,
  type SandboxEvents,
  type ServerPoolStats,
  type BudgetStats,
} from './sandbox-manager.js';
export { poolUnitOf } from './pool/pool-key.js';
export {
  resolveLimits,
  DEFAULT_INVOCATION_LIMITS,
  InvocationLimitsSchema,
  type InvocationLimits,
} from './limits.js';
export type {
  ToolRuntime,
  InvokeHooks,
  LogEntry,
  InvocationOutcome,
  OutcomeError,
  CallContext,
} from './invocation.js';
export type { PoolDefaults, PoolCaps, PoolSize } from './pool/pool-settings.js';
export type { PoolStats } from './pool/pool-contract.js';
export type { RetireReason } from './pool/pooled-instance.js';
export type { SandboxDriver, SandboxInstance, SandboxSpec, SandboxExit } from './driver.js';
