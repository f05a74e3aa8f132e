/**
 * HeldRefusals: a throttled network's answers wait their delay, at most
 * `maxHeld` at once (the rest are answered at once), and a client that
 * leaves frees its slot without being written to.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeldRefusals } from '../../../control-plane/http/held-refusals.js';

/** What HeldRefusals reads of a response: its `close` event and `destroyed`. */
function fakeResponse(): ServerResponse & { leave(): void } {
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    leave() {
      res.destroyed = true;
      res.emit('close');
    },
  });
  return res as unknown as ServerResponse & { leave(): void };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('HeldRefusals', () => {
  it('answers after the delay, and at once past maxHeld', () => {
    const held = new HeldRefusals({ delayMs: 1_000, maxHeld: 2 });
    const answered: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      held.answer(fakeResponse(), () => answered.push(index));
    }
    expect(answered).toEqual([2]);
    expect(held.held).toBe(2);
    vi.advanceTimersByTime(999);
    expect(answered).toEqual([2]);
    vi.advanceTimersByTime(1);
    expect(answered).toEqual([2, 0, 1]);
    expect(held.held).toBe(0);
  });

  it('frees the slot of a client that leaves, and writes nothing to it', () => {
    const held = new HeldRefusals({ delayMs: 1_000, maxHeld: 1 });
    const res = fakeResponse();
    const answer = vi.fn();
    held.answer(res, answer);
    res.leave();
    expect(held.held).toBe(0);
    vi.advanceTimersByTime(2_000);
    expect(answer).not.toHaveBeenCalled();
  });

  it('answers at once with no delay, and refuses bad options', () => {
    const answer = vi.fn();
    new HeldRefusals({ delayMs: 0, maxHeld: 10 }).answer(fakeResponse(), answer);
    expect(answer).toHaveBeenCalledOnce();
    expect(() => new HeldRefusals({ delayMs: -1, maxHeld: 1 })).toThrow(TypeError);
    expect(() => new HeldRefusals({ delayMs: 1, maxHeld: 0.5 })).toThrow(TypeError);
  });
});
