/**
 * The resume budget's rule (pure logic): detached streams are counted per
 * caller on a server, per server and in all; past a bound the oldest go —
 * the caller's own first, then its server's, then (service bound) those of
 * the server keeping the most — and each replica keeps an equal share.
 */
import { describe, expect, it } from 'vitest';
import { eventCost, ResumeBudget } from '../../../control-plane/mcp/resume-budget.js';

/** A budget whose held streams record when they are dropped. */
function budget(maxBytesPerCaller: number, maxBytesPerServer: number, maxBytes: number, share = 1) {
  const dropped: string[] = [];
  const resume = new ResumeBudget({
    maxBytesPerCaller,
    maxBytesPerServer,
    maxBytes,
    share: () => share,
  });
  const hold = (name: string, server: string, caller: string, bytes: number) => {
    const held = resume.hold(server, caller, () => dropped.push(name));
    held.charge(bytes);
    return held;
  };
  return { resume, dropped, hold };
}

describe('ResumeBudget', () => {
  it("drops the caller's oldest streams past its bound, the newest stays", () => {
    const { resume, dropped, hold } = budget(300, 10_000, 10_000);
    hold('a1', 'alpha', 'a', 100);
    hold('a2', 'alpha', 'a', 100);
    hold('a3', 'alpha', 'a', 100);
    expect(dropped).toEqual([]);
    hold('a4', 'alpha', 'a', 150);
    expect(dropped).toEqual(['a1', 'a2']);
    expect(resume.bytes).toBe(250);
  });

  it('drops a stream that alone outgrows its caller, and nothing else of anyone', () => {
    const { dropped, hold } = budget(300, 10_000, 10_000);
    hold('b1', 'alpha', 'b', 100);
    const big = hold('a1', 'alpha', 'a', 200);
    big.charge(200);
    expect(dropped).toEqual(['a1']);
    // Released with the drop: more charges of it count nothing.
    big.charge(1000);
    expect(dropped).toEqual(['a1']);
  });

  it("at the server's bound, drops the caller's own older streams first, then the server's oldest", () => {
    const { dropped, hold } = budget(1000, 300, 10_000);
    hold('b1', 'alpha', 'b', 100);
    hold('a1', 'alpha', 'a', 100);
    hold('c1', 'alpha', 'c', 100);
    hold('a2', 'alpha', 'a', 100);
    expect(dropped).toEqual(['a1']);
    hold('d1', 'alpha', 'd', 100);
    expect(dropped).toEqual(['a1', 'b1']);
    // A caller with no older stream of its own: the server's oldest goes.
    hold('e1', 'alpha', 'e', 100);
    expect(dropped).toEqual(['a1', 'b1', 'c1']);
  });

  it("never touches another server's streams below the service bound", () => {
    const { dropped, hold } = budget(1000, 300, 10_000);
    hold('quiet', 'quiet', 'q', 200);
    for (let index = 0; index < 10; index += 1) hold(`loud${index}`, 'loud', `l${index}`, 100);
    expect(dropped).not.toContain('quiet');
  });

  it('at the service bound, drops from the server keeping the most', () => {
    const { dropped, hold } = budget(1000, 1000, 500);
    hold('quiet', 'quiet', 'q', 100);
    hold('loud1', 'loud', 'l', 200);
    hold('loud2', 'loud', 'l', 200);
    hold('loud3', 'loud', 'm', 100);
    expect(dropped).toEqual(['loud1']);
  });

  it('keeps 1/share of each bound on each replica', () => {
    const { dropped, hold } = budget(400, 10_000, 10_000, 2);
    hold('a1', 'alpha', 'a', 150);
    hold('a2', 'alpha', 'a', 100);
    expect(dropped).toEqual(['a1']);
  });

  it('frees what a released stream held, once', () => {
    const { resume, hold } = budget(1000, 1000, 1000);
    const held = hold('a1', 'alpha', 'a', 300);
    held.release();
    held.release();
    expect(resume.bytes).toBe(0);
  });

  it('keeps nothing with bounds of 0, and counts every event at least 64 bytes', () => {
    const { dropped, hold } = budget(0, 0, 0);
    hold('a1', 'alpha', 'a', eventCost(''));
    expect(dropped).toEqual(['a1']);
    expect(eventCost('')).toBe(64);
    expect(eventCost('é')).toBe(66);
  });
});
