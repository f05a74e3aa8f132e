// Limits are ceilings set from above: host ≥ server ≥ tool; a tool may only lower.
import { describe, expect, it } from 'vitest';
import {
  ceilingProblems,
  effectiveLimits,
  resolveLimits,
} from '../../control-plane/sandbox/limits.js';
import { DEFAULT_INVOCATION_LIMITS } from '../support/config-defaults.js';

const defaults = { ...DEFAULT_INVOCATION_LIMITS, memoryMb: 128, timeoutMs: 30_000 };
const host = { memoryMb: 1024, timeoutMs: 60_000 };

describe('resolveLimits', () => {
  it("takes the tool's value only below its server's, and keeps 0 as a value", () => {
    const server = { memoryMb: 64, timeoutMs: 5_000 };
    expect(
      resolveLimits({ memoryMb: 65_536, timeoutMs: 3_600_000 }, server, defaults),
    ).toMatchObject({ memoryMb: 64, timeoutMs: 5_000 });
    expect(resolveLimits({ memoryMb: 32, timeoutMs: 0 }, server, defaults)).toMatchObject({
      memoryMb: 32,
      timeoutMs: 0,
    });
    // A server that sets nothing bounds nothing: the tool's value, else the default.
    expect(resolveLimits({ memoryMb: 512 }, {}, defaults)).toMatchObject({
      memoryMb: 512,
      timeoutMs: 30_000,
    });
  });
});

describe('effectiveLimits', () => {
  it("clamps what was saved before the host's ceilings were lowered", () => {
    expect(
      effectiveLimits({ memoryMb: 4096 }, { timeoutMs: 120_000 }, defaults, host),
    ).toMatchObject({ memoryMb: 1024, timeoutMs: 60_000 });
  });
});

describe('ceilingProblems', () => {
  it('names the lowest ceiling a value exceeds and who set it', () => {
    expect(
      ceilingProblems({ memoryMb: 2048, timeoutMs: 10_000 }, host, { timeoutMs: 5_000 }),
    ).toEqual([
      { field: 'memoryMb', requested: 2048, ceiling: 1024, setBy: 'host' },
      { field: 'timeoutMs', requested: 10_000, ceiling: 5_000, setBy: 'server' },
    ]);
    expect(
      ceilingProblems({ memoryMb: 1024, timeoutMs: 5_000 }, host, { timeoutMs: 5_000 }),
    ).toEqual([]);
    // A server's own limits above the host's: its ceiling is still the host's.
    expect(ceilingProblems({ memoryMb: 1500 }, host, { memoryMb: 2048 })).toEqual([
      { field: 'memoryMb', requested: 1500, ceiling: 1024, setBy: 'host' },
    ]);
  });
});
