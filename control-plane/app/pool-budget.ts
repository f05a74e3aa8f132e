/**
 * The container budget and start concurrency when the operator leaves them
 * unset: containers' memory limits may add up to POOL_MEMORY_SHARE of the
 * machine's memory (idle runners use a fraction of their limit, so the
 * default over a quarter of headroom is safe), and as many containers start at
 * once as fill the CPUs: a container boots within its own CPU quota
 * (TOOL_CPUS), so CPUs ÷ TOOL_CPUS starts in flight keep every core busy
 * and more would only make each one slower. Read from this host, or with
 * DOCKER_ENGINES from the engines that answered at start, summed; with one
 * remote engine (DOCKER_HOST), set POOL_MAX_TOTAL and POOL_START_CONCURRENCY.
 */
import { availableParallelism, totalmem } from 'node:os';
import type { Config } from '../config.js';

/** The least budget derived for a small machine. */
const MIN_DERIVED_TOTAL = 4;

/** What the machine offers. */
export interface HostCapacity {
  memoryBytes: number;
  cpus: number;
}

/** The budget in force: configured values win; otherwise derived from `host`. */
export function poolBudget(
  config: Pick<
    Config,
    'poolMaxTotal' | 'poolMemoryShare' | 'poolStartConcurrency' | 'toolMemoryMb' | 'toolCpus'
  >,
  host: HostCapacity = { memoryBytes: totalmem(), cpus: availableParallelism() },
): { maxTotal: number; startConcurrency: number } {
  const perContainer = config.toolMemoryMb * 1024 * 1024;
  const derived = Math.floor((config.poolMemoryShare * host.memoryBytes) / perContainer);
  return {
    maxTotal: config.poolMaxTotal ?? Math.max(MIN_DERIVED_TOTAL, derived),
    startConcurrency:
      config.poolStartConcurrency ?? Math.max(1, Math.ceil(host.cpus / config.toolCpus)),
  };
}
