/**
 * The CFS period of runner containers: each keeps its share of the CPU
 * (quota ÷ period = cpus); runc ones over a period long enough for a quota of
 * CPU_BURST_MS, within the kernel's 100 ms default and 1 s maximum.
 */
import { describe, expect, it } from 'vitest';
import {
  CPU_BURST_MS,
  cpuPeriodUs,
  hardenedContainerOptions,
} from '../../control-plane/sandbox/docker/hardened-container-config.js';

const SETTINGS = {
  image: 'mcphost-runner:test',
  planeName: 'unit',
  planeInstance: 'unit-instance',
  ownerLabels: {},
  labels: {},
  tmpfsMb: 16,
  nofile: 256,
};

function cpuOf(cpus: number, runtime?: 'runc' | 'runsc'): { period: number; quota: number } {
  const host = hardenedContainerOptions(
    { labels: {}, memoryMb: 128, cpus, pids: 64, runtime },
    SETTINGS,
  ).HostConfig!;
  expect(host.NanoCpus).toBeUndefined(); // Docker refuses NanoCpus beside a period
  return { period: host.CpuPeriod!, quota: host.CpuQuota! };
}

describe('runner CPU quota', () => {
  it('gives the default 0.5 CPU a quota of CPU_BURST_MS per period', () => {
    expect(CPU_BURST_MS).toBe(250);
    expect(cpuOf(0.5)).toEqual({ period: 500_000, quota: 250_000 });
  });

  it('keeps the share exact while the period is within the kernel’s bounds', () => {
    for (const cpus of [0.3, 0.5, 1, 2]) {
      const { period, quota } = cpuOf(cpus);
      expect(quota / period).toBeCloseTo(cpus, 5);
      expect(quota).toBeGreaterThanOrEqual(CPU_BURST_MS * 1000);
    }
  });

  it('stays at the kernel default of 100 ms for large shares and at most 1 s for small ones', () => {
    expect(cpuPeriodUs(2.5)).toBe(100_000);
    expect(cpuPeriodUs(8)).toBe(100_000);
    expect(cpuOf(4)).toEqual({ period: 100_000, quota: 400_000 });
    expect(cpuPeriodUs(0.25)).toBe(1_000_000);
    expect(cpuOf(0.1)).toEqual({ period: 1_000_000, quota: 100_000 });
  });

  it('keeps the kernel default under gVisor, whose sandbox kernel spends the quota too', () => {
    expect(cpuOf(0.5, 'runsc')).toEqual({ period: 100_000, quota: 50_000 });
    expect(cpuOf(0.5, 'runc')).toEqual({ period: 500_000, quota: 250_000 });
  });

  it('never asks for a quota under the kernel’s 1 ms minimum', () => {
    expect(cpuOf(0.0001)).toEqual({ period: 1_000_000, quota: 1_000 });
  });
});
