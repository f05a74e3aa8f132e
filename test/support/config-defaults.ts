/**
 * The configuration table's defaults in the shapes the parts take them. A
 * test that needs "the defaults" starts from these — the same table the
 * control plane boots from — never from numbers of its own.
 */
import {
  brokerLimitsFrom,
  invocationLimitsFrom,
  poolDefaultsFrom,
  schemaCheckSettingsFrom,
} from '../../control-plane/app/component-settings.js';
import { poolBudget } from '../../control-plane/app/pool-budget.js';
import { defaultConfig } from '../../control-plane/config.js';
import type {
  InvocationLimits,
  PoolCaps,
  PoolDefaults,
} from '../../control-plane/sandbox/index.js';

/** Every setting at its default. */
export const DEFAULT_CONFIG = defaultConfig();

/** The service limits every tool starts from (TOOL_*). */
export const DEFAULT_INVOCATION_LIMITS: Readonly<InvocationLimits> = Object.freeze(
  invocationLimitsFrom(DEFAULT_CONFIG),
);

/** What every warm pool starts from (POOL_*, RUNNER_STARTUP_TIMEOUT_MS, TOOL_*). */
export const DEFAULT_POOL_DEFAULTS: Readonly<PoolDefaults> = Object.freeze(
  poolDefaultsFrom(DEFAULT_CONFIG),
);

/** A server's default share of the container budget (POOL_SERVER_SHARE). */
export const DEFAULT_SERVER_SHARE: PoolCaps['serverShare'] = DEFAULT_CONFIG.poolServerShare;

/** The budget and ceilings in force on this machine with nothing set. */
const DEFAULT_BUDGET = poolBudget(DEFAULT_CONFIG);

/** Container starts in flight on this machine (POOL_START_CONCURRENCY unset: CPUs ÷ TOOL_CPUS). */
export const DEFAULT_START_CONCURRENCY = DEFAULT_BUDGET.startConcurrency;

/** The memory budget on this machine (POOL_MAX_MEMORY_MB unset: POOL_MEMORY_SHARE of its memory). */
export const DEFAULT_MAX_MEMORY_MB: PoolCaps['maxMemoryMb'] = DEFAULT_BUDGET.maxMemoryMb;

/** The host's ceilings on this machine (TOOL_MAX_MEMORY_MB derived, TOOL_MAX_TIMEOUT_MS). */
export const DEFAULT_LIMIT_CEILINGS: Readonly<PoolCaps['limitCeilings']> = Object.freeze(
  DEFAULT_BUDGET.limitCeilings,
);

/** The caps a test's manager takes unless it sets its own (serverShare, memory, ceilings). */
export const DEFAULT_CAP_EXTRAS: Pick<PoolCaps, 'serverShare' | 'maxMemoryMb' | 'limitCeilings'> =
  Object.freeze({
    serverShare: DEFAULT_SERVER_SHARE,
    maxMemoryMb: DEFAULT_MAX_MEMORY_MB,
    limitCeilings: DEFAULT_LIMIT_CEILINGS,
  });

/** The broker's sdk.http and sdk.db limits (HTTP_EGRESS_*, DB_*). */
export const DEFAULT_BROKER_LIMITS = brokerLimitsFrom(DEFAULT_CONFIG);

/** How inputSchema/outputSchema checks run (TOOL_SCHEMA_CHECK_TIMEOUT_MS). */
export const DEFAULT_SCHEMA_CHECKS = Object.freeze(schemaCheckSettingsFrom(DEFAULT_CONFIG));
