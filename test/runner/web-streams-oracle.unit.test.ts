/**
 * The tool realm's ReadableStream (web-streams-polyfill, realm/web/streams.js)
 * against Node's own, on generated inputs (see test/support/realm-oracle.ts):
 * the same values, done flags, calls of the source, desired sizes and
 * settlements in the same order, or the same class of error.
 *
 * Each probe logs what happens as it happens (a read's result is logged when
 * its promise settles), so the order in which the two implementations settle
 * their promises is compared too.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolRealm, expectAgreement } from '../support/realm-oracle.js';

let realm: ToolRealm;
beforeAll(async () => {
  realm = await ToolRealm.open();
});

const agree = (probe: string, input: unknown): Promise<void> =>
  expectAgreement(realm, probe, input);

/** Runs per property: each run is a few hundred µs in each realm. */
const RUNS = 150;

const chunk = fc.oneof(
  fc.integer({ min: -5, max: 99 }),
  fc.string({ maxLength: 3 }),
  fc.constant(null),
  fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
);
const highWaterMark = fc.constantFrom(0, 1, 2, 5);

/**
 * Helpers of the probes (in both realms): `show(value)` keeps undefined
 * apart from a missing value in the JSON; `watch(promise, log, tag)` and
 * `settleRead` log a promise's settlement when it happens; `ticks(n)` waits
 * n microtasks; `settled()` waits until no microtask is left (a timer), so
 * a read that never settles does not hold the probe.
 */
const HELPERS = `
  const show = (value) => (value === undefined ? '<undefined>' : value);
  const watch = (promise, log, tag) => promise.then(
    (value) => { log.push([tag, 'fulfilled', show(value)]); },
    (error) => { log.push([tag, 'rejected', errorName(error)]); },
  );
  const settleRead = (promise, log, tag) => promise.then(
    (result) => { log.push([tag, result.done, show(result.value)]); },
    (error) => { log.push([tag, 'rejected', errorName(error)]); },
  );
  const ticks = async (n) => { for (let i = 0; i < n; i++) await undefined; };
  const settled = () => new Promise((resolve) => setTimeout(resolve, 0));
`;

/** A probe: `HELPERS` in scope, then `body` as an async function of the input. */
const probeOf = (parameters: string, body: string): string =>
  `async (${parameters}) => {\n${HELPERS}\n${body}\n}`;

describe('ReadableStream against Node', () => {
  it('enqueue, close and error from the controller, read through a reader', async () => {
    const operation = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.constant('enqueue'), chunk) },
      { weight: 4, arbitrary: fc.tuple(fc.constant('read'), fc.constant(0)) },
      { weight: 1, arbitrary: fc.tuple(fc.constant('close'), fc.constant(0)) },
      { weight: 1, arbitrary: fc.tuple(fc.constant('error'), fc.string({ maxLength: 3 })) },
      { weight: 2, arbitrary: fc.tuple(fc.constant('desiredSize'), fc.constant(0)) },
      { weight: 2, arbitrary: fc.tuple(fc.constant('tick'), fc.integer({ min: 1, max: 3 })) },
    );
    const probe = probeOf(
      '{ hwm, operations }',
      `
      let controller;
      const stream = new ReadableStream({ start(c) { controller = c; } }, { highWaterMark: hwm });
      const log = [];
      const reader = stream.getReader();
      watch(reader.closed, log, 'closed');
      const reads = [];
      for (const [name, argument] of operations) {
        if (name === 'enqueue') log.push(['enqueue', attempt(() => controller.enqueue(argument))]);
        else if (name === 'close') log.push(['close', attempt(() => controller.close())]);
        else if (name === 'error') log.push(['error', attempt(() => controller.error(new RangeError(argument)))]);
        else if (name === 'desiredSize') log.push(['desiredSize', controller.desiredSize]);
        else if (name === 'tick') await ticks(argument);
        else reads.push(settleRead(reader.read(), log, 'read ' + reads.length));
      }
      await settled();
      return log;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({ hwm: highWaterMark, operations: fc.array(operation, { maxLength: 12 }) }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('a pull source with a highWaterMark and a size: when pull is called, with what desiredSize', async () => {
    const probe = probeOf(
      '{ hwm, chunks, sized, asyncPull, reads, closeAtEnd }',
      `
      const log = [];
      let next = 0;
      const stream = new ReadableStream({
        start(c) { log.push(['start', c.desiredSize]); },
        pull(c) {
          log.push(['pull', c.desiredSize]);
          const step = () => {
            if (next < chunks.length) c.enqueue(chunks[next++]);
            else if (closeAtEnd) c.close();
            log.push(['after pull', c.desiredSize]);
          };
          if (!asyncPull) return step();
          return ticks(2).then(step);
        },
      }, sized ? { highWaterMark: hwm, size: (chunk) => chunk.length } : { highWaterMark: hwm });
      await settled();
      const reader = stream.getReader();
      for (let i = 0; i < reads; i++) {
        const result = await Promise.race([reader.read(), settled().then(() => 'pending')]);
        if (result === 'pending') { log.push(['read', 'pending']); break; }
        log.push(['read', result.done, show(result.value)]);
        await settled();
      }
      return log;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          hwm: highWaterMark,
          chunks: fc.array(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 6 }),
          sized: fc.boolean(),
          asyncPull: fc.boolean(),
          reads: fc.integer({ min: 0, max: 8 }),
          closeAtEnd: fc.boolean(),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('cancel with a reason: what the source sees, what the reader and its reads get', async () => {
    const probe = probeOf(
      '{ queued, state, via, reason, cancelThrows, readsBefore }',
      `
      const log = [];
      let controller;
      const stream = new ReadableStream({
        start(c) { controller = c; for (const value of queued) c.enqueue(value); },
        cancel(why) {
          log.push(['source cancel', show(why)]);
          if (cancelThrows) throw new SyntaxError('no');
          return ticks(2).then(() => 'ignored');
        },
      });
      if (state === 'closed') controller.close();
      if (state === 'errored') controller.error(new RangeError('broken'));
      const reader = via === 'stream' ? null : stream.getReader();
      if (reader !== null) watch(reader.closed, log, 'closed');
      const reads = [];
      for (let i = 0; i < readsBefore; i++) {
        if (reader !== null) reads.push(settleRead(reader.read(), log, 'read ' + i));
      }
      const target = reader === null ? stream : reader;
      watch(target.cancel(reason), log, 'cancel');
      if (reader !== null) reads.push(settleRead(reader.read(), log, 'read after cancel'));
      await settled();
      log.push(['locked', stream.locked]);
      if (via === 'locked stream') {
        const other = new ReadableStream();
        other.getReader();
        await watch(other.cancel(reason), log, 'cancel of a locked stream');
      }
      return log;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          queued: fc.array(chunk, { maxLength: 3 }),
          state: fc.constantFrom('readable', 'closed', 'errored'),
          via: fc.constantFrom('reader', 'stream', 'locked stream'),
          reason: fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.constant(null)),
          cancelThrows: fc.boolean(),
          readsBefore: fc.integer({ min: 0, max: 4 }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('tee: both branches read, in any interleaving, with cancels and an error', async () => {
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('read 1', 'read 2') },
      { weight: 1, arbitrary: fc.constantFrom('cancel 1', 'cancel 2', 'enqueue', 'tick') },
      { weight: 1, arbitrary: fc.constantFrom('close', 'error') },
    );
    // Per branch, its reads in order (they settle in order) and the set of
    // its other settlements (closed, cancel); the source's own log. When a
    // cancel settles against a read, or one branch against the other, is a
    // matter of promise hops, which are Node's own (a cancel of a closed
    // stream settles a hop later there than the standard's resolved promise).
    const probe = probeOf(
      '{ queued, steps }',
      `
      const logs = { source: [], 1: { reads: [], events: [] }, 2: { reads: [], events: [] } };
      let controller;
      let added = 100;
      const stream = new ReadableStream({
        start(c) { controller = c; for (const value of queued) c.enqueue(value); },
        cancel(reason) { logs.source.push(['source cancel', show(reason)]); },
      });
      const branches = stream.tee();
      logs.source.push(['locked', stream.locked, branches[0].locked, branches[1].locked]);
      const readers = branches.map((branch) => branch.getReader());
      watch(readers[0].closed, logs[1].events, 'closed');
      watch(readers[1].closed, logs[2].events, 'closed');
      for (const name of steps) {
        const [verb, which] = name.split(' ');
        const reader = readers[Number(which) - 1];
        const log = logs[which];
        if (verb === 'read') settleRead(reader.read(), log.reads, 'read');
        else if (verb === 'cancel') watch(reader.cancel('why ' + which), log.events, 'cancel');
        else if (verb === 'enqueue') logs.source.push([name, attempt(() => controller.enqueue(added++))]);
        else if (verb === 'close') logs.source.push([name, attempt(() => controller.close())]);
        else if (verb === 'error') logs.source.push([name, attempt(() => controller.error(new TypeError('e')))]);
        else await ticks(2);
      }
      await settled();
      for (const branch of [logs[1], logs[2]]) branch.events.sort((a, b) => (String(a) < String(b) ? -1 : 1));
      return logs;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          queued: fc.array(chunk, { maxLength: 4 }),
          steps: fc.array(step, { maxLength: 10 }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('async iteration: for await to the end, break, throw, and preventCancel', async () => {
    const probe = probeOf(
      '{ chunks, stopAt, how, preventCancel, ending }',
      `
      const log = [];
      const stream = new ReadableStream({
        start(c) {
          for (const value of chunks) c.enqueue(value);
          if (ending === 'close') c.close();
          if (ending === 'error') c.error(new RangeError('end'));
        },
        cancel(reason) { log.push(['source cancel', show(reason)]); },
      });
      const iterable = preventCancel === null ? stream : stream.values({ preventCancel });
      let index = 0;
      const run = (async () => {
        for await (const value of iterable) {
          log.push(['value', show(value), stream.locked]);
          if (index++ === stopAt) {
            if (how === 'break') break;
            if (how === 'throw') throw new SyntaxError('stop');
            if (how === 'return') return 'returned';
          }
        }
        return 'ended';
      })();
      watch(run, log, 'loop');
      await settled();
      log.push(['locked after', stream.locked]);
      const again = attempt(() => stream.getReader());
      log.push(['getReader after', 'threw' in again ? again.threw : 'ok']);
      return log;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          chunks: fc.array(chunk, { maxLength: 5 }),
          stopAt: fc.integer({ min: 0, max: 5 }),
          how: fc.constantFrom('break', 'throw', 'return', 'none'),
          preventCancel: fc.constantFrom(null, true, false),
          ending: fc.constantFrom('close', 'error', 'open'),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('locks: getReader, releaseLock with reads pending, and the readers of a released lock, by class', async () => {
    const action = fc.constantFrom(
      'getReader',
      'releaseLock',
      'read',
      'closed',
      'cancel',
      'locked',
      'new reader',
      'byob reader',
      'tick',
    );
    const probe = probeOf(
      '{ queued, closed, actions }',
      `
      const log = [];
      const stream = new ReadableStream({
        start(c) { for (const value of queued) c.enqueue(value); if (closed) c.close(); },
      });
      let reader = null;
      const pending = [];
      for (const name of actions) {
        if (name === 'getReader') {
          const made = attempt(() => stream.getReader());
          if ('value' in made) reader = made.value;
          log.push([name, 'threw' in made ? made.threw : 'ok']);
        } else if (name === 'new reader') {
          const made = attempt(() => new ReadableStreamDefaultReader(stream));
          if ('value' in made) reader = made.value;
          log.push([name, 'threw' in made ? made.threw : 'ok']);
        } else if (name === 'byob reader') {
          log.push([name, attempt(() => { stream.getReader({ mode: 'byob' }); return 'ok'; })]);
        } else if (name === 'locked') {
          log.push([name, stream.locked]);
        } else if (name === 'tick') {
          await ticks(2);
        } else if (reader === null) {
          log.push([name, 'no reader']);
        } else if (name === 'releaseLock') {
          log.push([name, attempt(() => reader.releaseLock())]);
        } else if (name === 'read') {
          pending.push(settleRead(reader.read(), log, 'read ' + pending.length));
        } else if (name === 'closed') {
          pending.push(watch(reader.closed, log, 'closed ' + pending.length));
        } else {
          pending.push(watch(reader.cancel('c'), log, 'cancel ' + pending.length));
        }
      }
      await settled();
      return log;`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          queued: fc.array(chunk, { maxLength: 3 }),
          closed: fc.boolean(),
          actions: fc.array(action, { maxLength: 10 }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses bad underlying sources, strategies and constructions as Node does', async () => {
    const probe = probeOf(
      '{ source, strategy }',
      `
      const made = (s) => {
        if (s === 'undefined') return undefined;
        if (s === 'null') return null;
        if (s === 'bad type') return { type: 'nope' };
        if (s === 'bytes') return { type: 'bytes' };
        if (s === 'pull not callable') return { pull: 1 };
        if (s === 'start throws') return { start() { throw new SyntaxError('s'); } };
        if (s === 'negative hwm') return { highWaterMark: -1 };
        if (s === 'NaN hwm') return { highWaterMark: NaN };
        if (s === 'size not callable') return { size: 3 };
        if (s === 'sized') return { size: () => 1, highWaterMark: 2 };
        if (s === 'number') return 5;
        return {};
      };
      return [
        attempt(() => { new ReadableStream(made(source), made(strategy)); return 'made'; }),
        attempt(() => new ReadableStreamDefaultController()),
        attempt(() => new ReadableStreamDefaultReader({})),
        attempt(() => ReadableStream.prototype.getReader.call({})),
        attempt(() => Object.getOwnPropertyDescriptor(ReadableStream.prototype, 'locked').get.call({})),
        Object.prototype.toString.call(new ReadableStream()),
        typeof ReadableStream.prototype[Symbol.asyncIterator],
        [new CountQueuingStrategy({ highWaterMark: 3 }).highWaterMark, new ByteLengthQueuingStrategy({ highWaterMark: 4 }).size(new Uint8Array(7))],
      ];`,
    );
    // One of the two refused at a time: when both are, Node checks the
    // strategy's highWaterMark before the source, where the standard converts
    // the source first (its TypeError before ExtractHighWaterMark's RangeError).
    // Nor a byte source with a refused strategy: Node refuses any `size` there
    // with a RangeError, where the standard first converts the strategy (a
    // `size` that is not callable: TypeError).
    const validSource = fc.constantFrom('undefined', 'null', 'empty', 'bytes', 'start throws');
    const validDefaultSource = fc.constantFrom('undefined', 'null', 'empty', 'start throws');
    const validStrategy = fc.constantFrom('undefined', 'null', 'empty', 'sized');
    const badSource = fc.constantFrom('bad type', 'pull not callable', 'number');
    const badStrategy = fc.constantFrom('negative hwm', 'NaN hwm', 'size not callable', 'number');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ source: validSource, strategy: validStrategy }),
          fc.record({ source: badSource, strategy: validStrategy }),
          fc.record({ source: validDefaultSource, strategy: badStrategy }),
        ),
        (input) => agree(probe, input),
      ),
      { numRuns: RUNS },
    );
  });
});

describe('the streams in the realm', () => {
  it('are made in the realm, refused by structuredClone, and named as on the web', async () => {
    const outcome = await realm.run(
      `async () => {
        const names = ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader',
          'ReadableStreamBYOBRequest', 'ReadableStreamDefaultController', 'ReadableByteStreamController',
          'WritableStream', 'WritableStreamDefaultWriter', 'WritableStreamDefaultController',
          'TransformStream', 'TransformStreamDefaultController', 'ByteLengthQueuingStrategy',
          'CountQueuingStrategy'];
        // Every class, prototype and object reached is of this realm: its
        // constructor's constructor is this realm's Function, never the host's.
        const ofRealm = (value) => value.constructor.constructor === Function
          && Object.getPrototypeOf(Object.getPrototypeOf(value)) !== null;
        let controller;
        const stream = new ReadableStream({ start(c) { controller = c; } });
        const reader = stream.getReader();
        const writable = new WritableStream({ start(c) { globalThis.writableController = c; } });
        await undefined;
        return {
          classes: names.map((name) => [name, globalThis[name].name, globalThis[name] instanceof Function]),
          objects: [stream, reader, controller, reader.read(), reader.closed, writable,
            writable.getWriter(), writableController, writableController.signal,
            new TransformStream(), new CountQueuingStrategy({ highWaterMark: 1 })].map(ofRealm),
          cloned: attempt(() => structuredClone(stream)),
        };
      }`,
      null,
    );
    const names = [
      'ReadableStream',
      'ReadableStreamDefaultReader',
      'ReadableStreamBYOBReader',
      'ReadableStreamBYOBRequest',
      'ReadableStreamDefaultController',
      'ReadableByteStreamController',
      'WritableStream',
      'WritableStreamDefaultWriter',
      'WritableStreamDefaultController',
      'TransformStream',
      'TransformStreamDefaultController',
      'ByteLengthQueuingStrategy',
      'CountQueuingStrategy',
    ];
    expect(outcome).toEqual({
      value: {
        classes: names.map((name) => [name, name, true]),
        objects: Array.from({ length: 11 }, () => true),
        cloned: { threw: 'DOMException:DataCloneError' },
      },
    });
  });
});
