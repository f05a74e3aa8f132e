/**
 * The configuration handed to the parts that take it as options: the
 * sandbox's invocation limits, pool defaults and driver settings, the
 * broker's limits, the hosted servers' gate, the admin API. The
 * parts write no default of their own; these functions are the one mapping
 * from the configuration table to their options, used by the composition root
 * and by tests and benchmarks that want the defaults (`defaultConfig()`).
 */
import { DEFAULT_MAX_LINE_BYTES } from '../../src/protocol/index.js';
import type { AdminSettings } from '../admin/index.js';
import type { BrokerOptions } from '../broker/index.js';
import type { AddressConfig, Config } from '../config.js';
import type { ServerGateSettings } from '../http/index.js';
import type { ToolInvoker } from '../invocation/index.js';
import type {
  InvocationLimits,
  PoolCaps,
  PoolDefaults,
  SandboxSettings,
} from '../sandbox/index.js';
import type { ResumeBudgetOptions } from '../mcp/index.js';
import type { PoolBudget } from './pool-budget.js';

/** The service limits every tool starts from (TOOL_*). */
export function invocationLimitsFrom(config: Config): InvocationLimits {
  return {
    timeoutMs: config.toolTimeoutMs,
    memoryMb: config.toolMemoryMb,
    cpus: config.toolCpus,
    pids: config.toolPids,
    maxResultBytes: config.toolMaxResultBytes,
    maxLogBytes: config.toolMaxLogBytes,
    maxLogEntries: config.toolMaxLogEntries,
  };
}

/** How tools' inputSchema/outputSchema checks run (TOOL_SCHEMA_CHECK_TIMEOUT_MS). */
export function schemaCheckSettingsFrom(
  config: Config,
): ConstructorParameters<typeof ToolInvoker>[2] {
  return { timeoutMs: config.toolSchemaCheckTimeoutMs };
}

/** What every warm pool starts from (POOL_*, RUNNER_STARTUP_TIMEOUT_MS, TOOL_*). */
export function poolDefaultsFrom(config: Config): PoolDefaults {
  return {
    minWarm: config.poolMinWarm,
    maxSize: config.poolMaxSize,
    maxInvocationsPerContainer: config.poolMaxInvocations,
    heapRetireShare: config.poolHeapRetireShare,
    idleTtlMs: config.poolIdleTtlMs,
    maxQueue: config.poolMaxQueue,
    queueTimeoutMs: config.poolQueueTimeoutMs,
    startupTimeoutMs: config.runnerStartupTimeoutMs,
    timeoutGraceMs: config.toolTimeoutGraceMs,
    // The protocol's line limit, which the harness reads with too: not a setting.
    maxLineBytes: DEFAULT_MAX_LINE_BYTES,
    maxConcurrentCalls: config.toolMaxConcurrentCalls,
    limits: invocationLimitsFrom(config),
  };
}

/** The caps pools and limits must fit; `budget` is the one in force (see pool-budget.ts). */
export function poolCapsFrom(
  config: Config,
  budget: Pick<PoolBudget, 'maxTotal' | 'maxMemoryMb' | 'limitCeilings'>,
): PoolCaps {
  return {
    maxSizePerPool: config.poolMaxSizeCap,
    maxTotal: budget.maxTotal,
    maxMemoryMb: budget.maxMemoryMb,
    serverShare: config.poolServerShare,
    limitCeilings: budget.limitCeilings,
  };
}

/** The broker's sdk.http and sdk.db limits (HTTP_EGRESS_*, DB_*). */
export function brokerLimitsFrom(config: Config): Pick<BrokerOptions, 'http' | 'db'> {
  return {
    http: {
      // One setting bounds both: a connection that takes the whole time leaves none for the answer anyway.
      connectTimeoutMs: config.httpEgressTimeoutMs,
      totalTimeoutMs: config.httpEgressTimeoutMs,
      maxResponseBytes: config.httpEgressMaxBytes,
      maxRedirects: config.httpEgressMaxRedirects,
      connectionsPerServerOrigin: config.httpEgressConnectionsPerServer,
      agentIdleMs: config.httpEgressAgentIdleMs,
    },
    db: {
      maxConnectionsPerKey: config.dbPoolMaxPerKey,
      maxConnectionsTotal: config.dbPoolMaxTotal,
      idleMs: config.dbPoolIdleMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
    },
  };
}

/** What cut MCP response streams may keep for resuming (MCP_RESUME_MAX_BYTES*); replicas share it out. */
export function resumeBoundsFrom(config: Config): Omit<ResumeBudgetOptions, 'share'> {
  return {
    maxBytesPerCaller: config.mcpResumeMaxBytesPerCaller,
    maxBytesPerServer: config.mcpResumeMaxBytesPerServer,
    maxBytes: config.mcpResumeMaxBytes,
  };
}

/** What the sandbox driver is made from (SANDBOX_DRIVER, RUNNER_*, PLANE_NAME, DOCKER_ENGINES*, DATA_DIR). */
export function sandboxSettingsFrom(config: Config): SandboxSettings {
  return {
    sandboxDriver: config.sandboxDriver,
    dataDir: config.dataDir,
    runnerImage: config.runnerImage,
    runnerBase: config.runnerBase,
    runnerSocketDir: config.runnerSocketDir,
    runnerStartupTimeoutMs: config.runnerStartupTimeoutMs,
    planeName: config.planeName,
    dockerEngines: config.dockerEngines,
    dockerEngineCheckIntervalMs: config.dockerEngineCheckIntervalMs,
  };
}

/** What the hosted servers' gate reads: their addresses and OAUTH_*. */
export function serverGateSettingsFrom(config: Config): ServerGateSettings {
  return {
    ...addressesFrom(config),
    oauthAllowInsecureLoopback: config.oauthAllowInsecureLoopback,
    oauthClockToleranceSec: config.oauthClockToleranceSec,
    oauthJwksCooldownMs: config.oauthJwksCooldownMs,
  };
}

/** What the admin API reads: addresses, MAX_BODY_BYTES, ADMIN_OIDC_*, ADMIN_SESSION_*, the pool defaults it shows. */
export function adminSettingsFrom(config: Config): AdminSettings {
  return {
    ...addressesFrom(config),
    maxBodyBytes: config.maxBodyBytes,
    adminOidcIssuer: config.adminOidcIssuer,
    adminOidcLabel: config.adminOidcLabel,
    adminCookieSecure: config.adminCookieSecure,
    adminSessionMaxHours: config.adminSessionMaxHours,
    adminSessionIdleMinutes: config.adminSessionIdleMinutes,
    invocationRefusalBucketSeconds: config.invocationRefusalBucketSeconds,
    poolMinWarm: config.poolMinWarm,
    poolMaxSize: config.poolMaxSize,
    poolMaxSizeCap: config.poolMaxSizeCap,
    genericPoolSize: config.genericPoolSize,
    poolMaxInvocations: config.poolMaxInvocations,
    poolHeapRetireShare: config.poolHeapRetireShare,
    poolIdleTtlMs: config.poolIdleTtlMs,
  };
}

/** The servers' addresses (PUBLIC_URL_TEMPLATE, PUBLIC_URL, PORT, ROUTING, BASE_DOMAIN). */
function addressesFrom(config: Config): AddressConfig {
  return {
    publicUrlTemplate: config.publicUrlTemplate,
    publicUrl: config.publicUrl,
    port: config.port,
    routing: config.routing,
    baseDomain: config.baseDomain,
  };
}
