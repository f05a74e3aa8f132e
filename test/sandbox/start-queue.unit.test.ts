// The start queue's order: callers' starts before refills, servers taking turns within each.
import { describe, expect, it } from 'vitest';
import { StartQueue, type StartPurpose } from '../../control-plane/sandbox/pool/start-queue.js';

/** A queue whose starts finish only when the test says so; `order` lists who started, in order. */
function harness(concurrency: number, perOwner?: number) {
  const queue = new StartQueue(concurrency, perOwner);
  const order: string[] = [];
  const finishing: Array<() => void> = [];
  const enqueue = (owner: string | undefined, purpose: StartPurpose = 'demand', label = owner) =>
    queue.enqueue({
      purpose,
      owner,
      stillNeeded: () => true,
      drop: () => undefined,
      run: () => {
        order.push(label ?? 'generic');
        return new Promise<void>((resolve) => finishing.push(resolve));
      },
    });
  /** Finishes the oldest start in flight and lets the queue pick the next. */
  const finishOne = async () => {
    finishing.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { queue, order, enqueue, finishOne };
}

describe('StartQueue', () => {
  it("starts a victim's container after at most one of a churning server's", async () => {
    const { order, enqueue, finishOne } = harness(1);
    for (let index = 0; index < 8; index += 1) enqueue('churner');
    enqueue('victim');
    for (let index = 0; index < 9; index += 1) await finishOne();
    // churner's first was already running when the victim came.
    expect(order.indexOf('victim')).toBe(1);
  });

  it('gives every waiting server a turn before any server gets a second', async () => {
    const { order, enqueue, finishOne } = harness(1);
    for (const owner of ['a', 'a', 'a', 'b', 'b', 'c']) enqueue(owner);
    for (let index = 0; index < 6; index += 1) await finishOne();
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'a']);
  });

  it('a server that comes back after its line emptied waits behind earlier arrivals', async () => {
    const { order, enqueue, finishOne } = harness(1);
    enqueue('a'); // runs
    enqueue('b');
    await finishOne(); // b runs; a has nothing waiting
    enqueue('a');
    enqueue('c');
    await finishOne();
    await finishOne();
    await finishOne();
    expect(order).toEqual(['a', 'b', 'a', 'c']);
  });

  it('keeps a slot free for another server: one server runs at most its share of them', async () => {
    const { queue, order, enqueue, finishOne } = harness(4, 2);
    for (let index = 0; index < 8; index += 1) enqueue('churner');
    expect(queue.running).toBe(2);
    enqueue('victim');
    // Started at once, without waiting for any of the churner's.
    expect(order).toEqual(['churner', 'churner', 'victim']);
    await finishOne();
    expect(queue.running).toBe(3);
    expect(() => new StartQueue(2, 3)).toThrow(TypeError);
  });

  it("keeps callers' starts before refills, and drops starts nobody needs", async () => {
    const { queue, order, enqueue, finishOne } = harness(1);
    enqueue('a', 'demand', 'a-demand');
    enqueue('b', 'refill', 'b-refill');
    enqueue('a', 'demand', 'a-demand-2');
    let dropped = false;
    queue.enqueue({
      purpose: 'demand',
      owner: 'c',
      stillNeeded: () => false,
      drop: () => (dropped = true),
      run: async () => void order.push('never'),
    });
    for (let index = 0; index < 4; index += 1) await finishOne();
    expect(order).toEqual(['a-demand', 'a-demand-2', 'b-refill']);
    expect(dropped).toBe(true);
    expect(queue.queued).toBe(0);
  });
});
