/**
 * The bookkeeping of refusal entries (RefusalWindows): one entry per kind a
 * minute with its count, further kinds of one actor on one more entry, and
 * windows taken out for their counts when their minute ends.
 */
import { describe, expect, it } from 'vitest';
import { RefusalWindows } from '../../../control-plane/admin/audit-refusals.js';

function fakeClock(start = 1_700_000_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe('RefusalWindows', () => {
  it('opens one entry per kind a minute and counts the rest onto it', () => {
    const clock = fakeClock();
    const windows = new RefusalWindows({ now: clock.now });
    const first = windows.note('viewer', 'tool.save');
    expect(first).toMatchObject({ opened: true, overflow: false });
    for (let refusal = 0; refusal < 299; refusal += 1) {
      expect(windows.note('viewer', 'tool.save')).toEqual({ opened: false });
      clock.advance(100);
    }
    // Another kind, and another actor, have their own.
    expect(windows.note('viewer', 'csrf').opened).toBe(true);
    expect(windows.note('operator', 'tool.save').opened).toBe(true);
    const window = first.opened ? first.window : undefined;
    expect(window?.count).toBe(300);
    expect(windows.takeClosed()).toEqual([]);
    clock.advance(60_000);
    // The minute is over: its count is final, and the next refusal opens a new entry.
    expect(windows.takeClosed()).toEqual([window]);
    expect(windows.note('viewer', 'tool.save').opened).toBe(true);
  });

  it('counts an actor’s kinds beyond the allowance on one more entry', () => {
    const clock = fakeClock();
    const windows = new RefusalWindows({ now: clock.now, kindsPerActor: 3 });
    const opened = Array.from({ length: 200 }, (_, index) =>
      windows.note('viewer', `server.delete on made-up-${index}`),
    ).filter((note) => note.opened);
    expect(opened.map((note) => note.opened && note.overflow)).toEqual([false, false, false, true]);
    const overflow = opened[3]!;
    expect(overflow.opened && overflow.window.count).toBe(197);
    // Kinds already open keep counting on their own entry.
    expect(windows.note('viewer', 'server.delete on made-up-0')).toEqual({ opened: false });
  });

  it('closes the least recently refused window early past maxWindows, keeping its count', () => {
    const clock = fakeClock();
    const windows = new RefusalWindows({ now: clock.now, maxWindows: 2 });
    windows.note('a', 'k');
    windows.note('a', 'k');
    windows.note('b', 'k');
    windows.note('c', 'k');
    const closed = windows.takeClosed();
    expect(closed.map((window) => window.count)).toEqual([2]);
    // Windows of a single refusal have nothing more to write.
    expect(windows.takeAll()).toEqual([]);
  });
});
