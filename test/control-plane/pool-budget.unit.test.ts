// The container budget and start concurrency derived when the operator leaves them unset.
import { expect, it } from 'vitest';
import { poolBudget } from '../../control-plane/app/pool-budget.js';

const GiB = 1024 ** 3;
const unset = {
  poolMaxTotal: undefined,
  poolMemoryShare: 0.75,
  poolStartConcurrency: undefined,
  toolMemoryMb: 128,
  toolCpus: 0.5,
};

it('derives the budget from memory and the starts from CPUs and the container CPU share', () => {
  // 0.75 × 24 GiB ÷ 128 MiB = 144; 2 CPUs ÷ 0.5 CPU per container = 4 boots in flight.
  expect(poolBudget(unset, { memoryBytes: 24 * GiB, cpus: 2 })).toEqual({
    maxTotal: 144,
    startConcurrency: 4,
  });
  // A small machine still gets a usable budget; a container using whole CPUs starts one per CPU.
  expect(poolBudget({ ...unset, toolCpus: 1 }, { memoryBytes: 256 * 1024 ** 2, cpus: 3 })).toEqual({
    maxTotal: 4,
    startConcurrency: 3,
  });
});

it('keeps what the operator set', () => {
  const set = { ...unset, poolMaxTotal: 10, poolStartConcurrency: 1 };
  expect(poolBudget(set, { memoryBytes: 64 * GiB, cpus: 16 })).toEqual({
    maxTotal: 10,
    startConcurrency: 1,
  });
});
