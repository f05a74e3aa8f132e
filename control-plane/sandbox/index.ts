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
/** The user the runner image runs as; image building sets the files' owner to it. */
export { RUNNER_USER } from './harness-command.js';
export {
  resolveLimits,
  effectiveLimits,
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
  CallContext,
  ProgressUpdate,
} from './invocation.js';
export type { PoolDefaults, PoolCaps, PoolSize } from './pool/pool-settings.js';
export type { PoolStats } from './pool/pool-contract.js';
export type { RetireReason } from './pool/pooled-instance.js';
export type { SandboxDriver, SandboxInstance, SandboxSpec, SandboxExit } from './driver.js';
export { DockerSandbox } from './docker/docker-sandbox.js';
export { MAX_SOCKET_ROOT_BYTES, prepareSocketRoot } from './docker/runner-socket.js';
export { probeSocketDataPath } from './docker/socket-probe.js';
export {
  MultiEngineSandbox,
  type EngineSource,
  type EngineStats,
} from './engines/multi-engine-sandbox.js';
export { DockerodeContainerClient } from './docker/container-client.js';
export {
  containerIdFromMountinfo,
  currentProcessOwner,
  readOwnMountinfo,
  rootFilesystemMatches,
  type PlaneOwner,
} from './docker/plane-owner.js';
export { ProcessSandbox } from './process/process-sandbox.js';
export { missingRuntimeMessage } from './runtime-availability.js';
