/**
 * The container budget, the host's limit ceilings and the start concurrency
 * in force, from the configuration and the machine:
 * - memory: containers' memory limits may add up to POOL_MAX_MEMORY_MB, unset
 *   POOL_MEMORY_SHARE of the machine's memory (idle runners use a fraction of
 *   their limit, so the default over a quarter of headroom is safe); this is
 *   what the budget counts, so no tenant's limits can commit more memory than
 *   the host has;
 * - containers: at most POOL_MAX_TOTAL, unset as many of the default size
 *   (TOOL_MEMORY_MB) as the memory holds, at least 4: the count bounds what
 *   every container costs besides memory (CPU share, pids, sockets);
 * - the largest memory a server or tool may set (TOOL_MAX_MEMORY_MB) is unset
 *   what one server may hold (POOL_SERVER_SHARE of the memory);
 * - as many containers start at once as fill the CPUs: a container boots
 *   within its own CPU quota (TOOL_CPUS), so CPUs ÷ TOOL_CPUS starts in flight
 *   keep every core busy and more would only make each one slower.
 * Read from this host, or with DOCKER_ENGINES from the engines that answered
 * at start, summed; with one remote engine (DOCKER_HOST), set POOL_MAX_TOTAL,
 * POOL_MAX_MEMORY_MB and POOL_START_CONCURRENCY. Settings that contradict each
 * other stop the start (ERR_CONFIG naming them).
 */
import { availableParallelism, totalmem } from 'node:os';
import type { Config } from '../config.js';
import { McphostError } from '../errors.js';
import type { LimitCeilings } from '../sandbox/index.js';
import { TOOL_LIMIT_BOUNDS } from '../store/index.js';

/** The least budget derived for a small machine, in containers of the default size. */
const MIN_DERIVED_TOTAL = 4;

/** What the machine offers. */
export interface HostCapacity {
  memoryBytes: number;
  cpus: number;
}

/** The budget in force. */
export interface PoolBudget {
  /** Containers at most across all pools. */
  maxTotal: number;
  /** Sum of containers' memory limits at most, in MiB. */
  maxMemoryMb: number;
  /** Container starts in flight at once. */
  startConcurrency: number;
  /** The most a server or tool may set. */
  limitCeilings: LimitCeilings;
}

/** The settings the budget is made of. */
export type PoolBudgetSettings = Pick<
  Config,
  | 'poolMaxTotal'
  | 'poolMaxMemoryMb'
  | 'poolMemoryShare'
  | 'poolServerShare'
  | 'poolStartConcurrency'
  | 'toolMemoryMb'
  | 'toolCpus'
  | 'toolTimeoutMs'
  | 'toolMaxMemoryMb'
  | 'toolMaxTimeoutMs'
>;

/** The budget in force: configured values win; otherwise derived from `host`. ERR_CONFIG when they contradict. */
export function poolBudget(
  config: PoolBudgetSettings,
  host: HostCapacity = { memoryBytes: totalmem(), cpus: availableParallelism() },
): PoolBudget {
  const hostMemoryMb = host.memoryBytes / (1024 * 1024);
  const maxMemoryMb =
    config.poolMaxMemoryMb ??
    Math.max(
      MIN_DERIVED_TOTAL * config.toolMemoryMb,
      Math.floor(config.poolMemoryShare * hostMemoryMb),
    );
  const derivedTotal = Math.floor(maxMemoryMb / config.toolMemoryMb);
  const serverMemoryMb = Math.floor(config.poolServerShare * maxMemoryMb);
  const budget: PoolBudget = {
    maxTotal: config.poolMaxTotal ?? Math.max(MIN_DERIVED_TOTAL, derivedTotal),
    maxMemoryMb,
    startConcurrency:
      config.poolStartConcurrency ?? Math.max(1, Math.ceil(host.cpus / config.toolCpus)),
    limitCeilings: {
      memoryMb:
        config.toolMaxMemoryMb ??
        Math.min(TOOL_LIMIT_BOUNDS.memoryMb, Math.max(config.toolMemoryMb, serverMemoryMb)),
      timeoutMs: config.toolMaxTimeoutMs,
    },
  };
  const problems = contradictions(config, budget);
  if (problems.length > 0) {
    throw new McphostError('ERR_CONFIG', `invalid configuration: ${problems.join('; ')}`, {
      details: problems,
    });
  }
  return budget;
}

/** Settings that cannot hold together: a default above its ceiling, a ceiling above the budget. */
function contradictions(config: PoolBudgetSettings, budget: PoolBudget): string[] {
  const problems: string[] = [];
  const { memoryMb, timeoutMs } = budget.limitCeilings;
  if (config.toolMemoryMb > budget.maxMemoryMb) {
    problems.push(
      `TOOL_MEMORY_MB=${config.toolMemoryMb} is above the memory budget of ${budget.maxMemoryMb} MiB (POOL_MAX_MEMORY_MB): not one container fits`,
    );
  } else if (config.toolMemoryMb > memoryMb) {
    problems.push(`TOOL_MEMORY_MB=${config.toolMemoryMb} is above TOOL_MAX_MEMORY_MB=${memoryMb}`);
  } else if (memoryMb > budget.maxMemoryMb) {
    // One container of the largest size must fit, or a tool allowed to save could never run.
    problems.push(
      `TOOL_MAX_MEMORY_MB=${memoryMb} is above the memory budget of ${budget.maxMemoryMb} MiB (POOL_MAX_MEMORY_MB)`,
    );
  }
  if (config.toolTimeoutMs > timeoutMs) {
    problems.push(
      `TOOL_TIMEOUT_MS=${config.toolTimeoutMs} is above TOOL_MAX_TIMEOUT_MS=${timeoutMs}`,
    );
  }
  return problems;
}
