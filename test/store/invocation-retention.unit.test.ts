/** How many invocation-log rows each server keeps (pure: invocation-retention.ts). */
import { describe, expect, it } from 'vitest';
import { rowsKeptPerServer } from '../../control-plane/store/invocation-retention.js';

const floorOf =
  (floor: number, gone: string[] = []) =>
  (server: string) =>
    gone.includes(server) ? 0 : floor;
const kept = (rows: Record<string, number>, floor: number, total: number, gone: string[] = []) =>
  Object.fromEntries(rowsKeptPerServer(new Map(Object.entries(rows)), floorOf(floor, gone), total));

describe('rowsKeptPerServer', () => {
  it('keeps everything within the bound', () => {
    expect(kept({ a: 10, b: 20 }, 5, 30)).toEqual({ a: 10, b: 20 });
  });

  it('prunes the server holding the most first, down to what the bound leaves it', () => {
    expect(kept({ victim: 30, attacker: 300 }, 50, 200)).toEqual({ victim: 30, attacker: 170 });
    expect(kept({ victim: 80, attacker: 400 }, 50, 200)).toEqual({ victim: 80, attacker: 120 });
  });

  it('shares the bound evenly among servers above it, keeping exactly the bound', () => {
    expect(kept({ a: 100, b: 100, c: 100 }, 0, 100)).toEqual({ a: 34, b: 33, c: 33 });
    const sum = (figures: Record<string, number>) =>
      Object.values(figures).reduce((total, each) => total + each, 0);
    expect(sum(kept({ a: 7, b: 90, c: 1000, d: 3 }, 2, 57))).toBe(57);
  });

  it("keeps every server's floor even when the floors pass the bound", () => {
    expect(kept({ a: 100, b: 100, c: 5 }, 40, 50)).toEqual({ a: 40, b: 40, c: 5 });
  });

  it('gives a server that no longer exists no floor', () => {
    expect(kept({ here: 30, gone: 30 }, 25, 30, ['gone'])).toEqual({ here: 25, gone: 5 });
    expect(kept({ here: 30, gone: 30 }, 40, 30, ['gone'])).toEqual({ here: 30, gone: 0 });
  });

  it('keeps nothing of a bound of 0 beyond the floors', () => {
    expect(kept({ a: 3, b: 9 }, 0, 0)).toEqual({ a: 0, b: 0 });
    expect(kept({ a: 3, b: 9 }, 4, 0)).toEqual({ a: 3, b: 4 });
  });
});
