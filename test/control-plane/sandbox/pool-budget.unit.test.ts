// The container budget, the host's limit ceilings and the start concurrency derived when the operator leaves them unset.
import { expect, it } from 'vitest';
import { poolBudget, type PoolBudgetSettings } from '../../../control-plane/app/pool-budget.js';
import { loadConfig } from '../../../control-plane/config.js';

const GiB = 1024 ** 3;
const unset: PoolBudgetSettings = {
  poolMaxTotal: undefined,
  poolMaxMemoryMb: undefined,
  poolMemoryShare: 0.75,
  poolServerShare: 0.5,
  poolStartConcurrency: undefined,
  toolMemoryMb: 128,
  toolCpus: 0.5,
  toolTimeoutMs: 30_000,
  toolMaxMemoryMb: undefined,
  toolMaxTimeoutMs: 600_000,
};

it('derives the budget from memory and the starts from CPUs and the container CPU share', () => {
  // 0.75 × 24 GiB = 18 GiB = 144 containers of 128 MiB; 2 CPUs ÷ 0.5 CPU per container = 4 boots in flight;
  // the largest container a server or tool may ask for is what one server may hold: half of 18 GiB.
  expect(poolBudget(unset, { memoryBytes: 24 * GiB, cpus: 2 })).toEqual({
    maxTotal: 144,
    maxMemoryMb: 18_432,
    startConcurrency: 4,
    limitCeilings: { memoryMb: 9_216, timeoutMs: 600_000 },
  });
  // A small machine still gets a usable budget; a container using whole CPUs starts one per CPU.
  expect(poolBudget({ ...unset, toolCpus: 1 }, { memoryBytes: 256 * 1024 ** 2, cpus: 3 })).toEqual({
    maxTotal: 4,
    maxMemoryMb: 512,
    startConcurrency: 3,
    limitCeilings: { memoryMb: 256, timeoutMs: 600_000 },
  });
  // A very large machine: the ceiling stops at the widest limit a record holds (64 GiB).
  expect(poolBudget(unset, { memoryBytes: 512 * GiB, cpus: 2 }).limitCeilings.memoryMb).toBe(
    65_536,
  );
});

it('keeps what the operator set', () => {
  const set = {
    ...unset,
    poolMaxTotal: 10,
    poolMaxMemoryMb: 2048,
    poolStartConcurrency: 1,
    toolMaxMemoryMb: 512,
    toolMaxTimeoutMs: 60_000,
  };
  expect(poolBudget(set, { memoryBytes: 64 * GiB, cpus: 16 })).toEqual({
    maxTotal: 10,
    maxMemoryMb: 2048,
    startConcurrency: 1,
    limitCeilings: { memoryMb: 512, timeoutMs: 60_000 },
  });
  // Without POOL_MAX_TOTAL the count follows the memory set: 2048 ÷ 128.
  expect(poolBudget({ ...set, poolMaxTotal: undefined }).maxTotal).toBe(16);
});

it('refuses settings that contradict each other at boot, naming them', () => {
  const host = { memoryBytes: 24 * GiB, cpus: 2 };
  const refused = (settings: Partial<PoolBudgetSettings>) => {
    try {
      poolBudget({ ...unset, ...settings }, host);
    } catch (error) {
      return error as { code: string; message: string };
    }
    throw new Error('accepted');
  };
  expect(refused({ toolMaxMemoryMb: 64 })).toMatchObject({
    code: 'ERR_CONFIG',
    message: expect.stringContaining('TOOL_MEMORY_MB=128 is above TOOL_MAX_MEMORY_MB=64'),
  });
  expect(refused({ toolMaxTimeoutMs: 10_000 }).message).toContain(
    'TOOL_TIMEOUT_MS=30000 is above TOOL_MAX_TIMEOUT_MS=10000',
  );
  expect(refused({ poolMaxMemoryMb: 100 }).message).toContain(
    'TOOL_MEMORY_MB=128 is above the memory budget of 100 MiB (POOL_MAX_MEMORY_MB): not one container fits',
  );
  expect(refused({ poolMaxMemoryMb: 1024, toolMaxMemoryMb: 4096 }).message).toContain(
    'TOOL_MAX_MEMORY_MB=4096 is above the memory budget of 1024 MiB (POOL_MAX_MEMORY_MB)',
  );
});

it('reads the ceilings from the configuration table, and refuses a ceiling out of range', () => {
  const config = loadConfig(
    { TOOL_MAX_MEMORY_MB: '300', TOOL_MAX_TIMEOUT_MS: '90000', POOL_MAX_MEMORY_MB: '4096' },
    '/nonexistent/.env',
  );
  expect(poolBudget(config, { memoryBytes: 24 * GiB, cpus: 2 })).toMatchObject({
    maxMemoryMb: 4096,
    limitCeilings: { memoryMb: 300, timeoutMs: 90_000 },
  });
  expect(() => loadConfig({ TOOL_MAX_MEMORY_MB: '70000' }, '/nonexistent/.env')).toThrow(
    /TOOL_MAX_MEMORY_MB/,
  );
  expect(() => loadConfig({ TOOL_MAX_TIMEOUT_MS: '0' }, '/nonexistent/.env')).toThrow(
    /TOOL_MAX_TIMEOUT_MS/,
  );
});
