/**
 * The tool realm's EventTarget, AbortController/AbortSignal and crypto
 * against Node's own, on generated inputs (see test/support/realm-oracle.ts):
 * same calls in the same order, same bytes, or the same class of error.
 */
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { ToolRealm, expectAgreement } from '../support/realm-oracle.js';

let realm: ToolRealm;
beforeAll(async () => {
  realm = await ToolRealm.open();
});

const agree = (probe: string, input: unknown): Promise<void> =>
  expectAgreement(realm, probe, input);

/**
 * Listeners by what they do besides logging their call: nothing, stop
 * immediate propagation, prevent the default, remove listener 0 during the
 * dispatch or add it for the other type, or log as an object with `handleEvent`.
 */
const LISTENER_KINDS = 6;

describe('EventTarget', () => {
  it('runs listeners in order, honouring once, signal, passive, removal and stopImmediatePropagation, as Node does', async () => {
    // Every listener of a case has the same capture flag: where both kinds meet,
    // the realm runs capturing listeners first (docs/tool-code.md, as the DOM
    // standard orders them at the target) and Node runs them in the order added.
    const operation = fc.oneof(
      fc
        .record({
          op: fc.constant('add'),
          listener: fc.nat(LISTENER_KINDS - 1),
          type: fc.constantFrom('a', 'b'),
          once: fc.boolean(),
          passive: fc.boolean(),
          signal: fc.boolean(),
        })
        // Node 20 lets a passive listener cancel the event (defaultPrevented
        // becomes true, dispatchEvent returns false); the DOM standard and the
        // realm ignore preventDefault() there. So the listener that cancels is
        // never passive.
        .map((add) => (add.listener === 2 ? { ...add, passive: false } : add)),
      fc.record({
        op: fc.constant('remove'),
        listener: fc.nat(LISTENER_KINDS - 1),
        type: fc.constantFrom('a', 'b'),
        otherCapture: fc.boolean(),
      }),
      fc.record({
        op: fc.constant('dispatch'),
        type: fc.constantFrom('a', 'b'),
        cancelable: fc.boolean(),
      }),
      fc.record({ op: fc.constant('abort') }),
    );
    const probe = `({ capture, operations }) => {
      const target = new EventTarget();
      const controller = new AbortController();
      const log = [];
      const listeners = [];
      // eventPhase and currentTarget are not compared inside listeners: Node 20
      // shows them as during a dispatch to the first listener only (2, the
      // target), to the later ones as after it (0, null); the DOM standard and
      // the realm keep AT_TARGET and the target for all of them.
      const record = (index, event) => log.push([index, event.type, event.target === target,
        event.defaultPrevented, event.cancelable, event.isTrusted]);
      listeners[0] = (event) => record(0, event);
      listeners[1] = (event) => { record(1, event); event.stopImmediatePropagation(); };
      listeners[2] = (event) => { record(2, event); event.preventDefault(); record(2, event); };
      listeners[3] = (event) => { record(3, event); target.removeEventListener(event.type, listeners[0], { capture }); };
      // Adds to the other type: Node 20 also runs a listener added during a dispatch
      // to the event's own type in that same dispatch; the DOM standard and the
      // realm run the listeners there were when it began.
      listeners[4] = (event) => { record(4, event); target.addEventListener(event.type === 'a' ? 'b' : 'a', listeners[0], { capture }); };
      listeners[5] = { handleEvent(event) { record(5, event); } };
      for (const step of operations) {
        if (step.op === 'add') {
          target.addEventListener(step.type, listeners[step.listener], {
            capture, once: step.once, passive: step.passive, signal: step.signal ? controller.signal : undefined,
          });
        } else if (step.op === 'remove') {
          target.removeEventListener(step.type, listeners[step.listener], { capture: step.otherCapture ? !capture : capture });
        } else if (step.op === 'abort') {
          controller.abort();
        } else {
          const event = new Event(step.type, { cancelable: step.cancelable });
          const notCancelled = target.dispatchEvent(event);
          log.push(['dispatched', notCancelled, event.defaultPrevented, event.eventPhase, event.currentTarget]);
        }
      }
      return log;
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          capture: fc.boolean(),
          operations: fc.array(operation, { maxLength: 12 }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  // The DOM standard ties a listener's signal to (type, callback, capture),
  // not to one registration: adding a listener that is already there still
  // adds the signal's abort steps, and those remove whichever listener then
  // matches. add(f); add(f, {signal}); abort() → f is gone; likewise
  // add(f, {signal}); remove(f); add(f); abort().
  it('removes the matching listener when a signal aborts, however it was added, as Node does', async () => {
    const probe = `({ order }) => {
      const target = new EventTarget();
      const controller = new AbortController();
      let calls = 0;
      const listener = () => { calls++; };
      for (const step of order) {
        if (step === 'add') target.addEventListener('a', listener);
        else if (step === 'add with signal') target.addEventListener('a', listener, { signal: controller.signal });
        else if (step === 'remove') target.removeEventListener('a', listener);
      }
      controller.abort();
      target.dispatchEvent(new Event('a'));
      return calls;
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          ['add', 'add with signal'],
          ['add with signal', 'remove', 'add'],
          ['add', 'add with signal', 'add with signal'],
        ),
        (order) => agree(probe, { order }),
      ),
      { numRuns: 10 },
    );
  });
});

describe('AbortController and AbortSignal', () => {
  /** A reason as JSON, or `undefined` (then a DOMException named AbortError). */
  const reason = fc.oneof(fc.constant('<undefined>'), fc.jsonValue({ maxDepth: 1 }));

  it('aborts once, with its reason, through abort(), AbortSignal.abort and AbortSignal.any, as Node does', async () => {
    const sources = fc.array(fc.record({ preAborted: fc.boolean(), reason }), {
      minLength: 0,
      maxLength: 4,
    });
    const probe = `({ sources, abortOrder, nested }) => {
      const log = [];
      const describeReason = (signal) => {
        const r = signal.reason;
        return r !== null && typeof r === 'object' && r.constructor !== Object && !Array.isArray(r) ? errorName(r) : r === undefined ? '<undefined>' : r;
      };
      const reasonOf = (text) => (text === '<undefined>' ? undefined : text);
      const controllers = sources.map(({ preAborted, reason }) => {
        if (preAborted) return { signal: AbortSignal.abort(reasonOf(reason)), abort() {} };
        return new AbortController();
      });
      const signals = controllers.map((c) => c.signal);
      const any = AbortSignal.any(signals);
      const outer = nested ? AbortSignal.any([any]) : any;
      for (const [index, signal] of [...signals, any, outer].entries()) {
        signal.onabort = () => log.push(['onabort', index, signal.aborted, describeReason(signal)]);
        signal.addEventListener('abort', (event) => log.push(['abort event', index, event.type, describeReason(signal)]));
      }
      log.push(['start', any.aborted, outer.aborted, any.aborted ? describeReason(any) : null, outer.aborted ? describeReason(outer) : null]);
      for (const index of abortOrder) {
        const controller = controllers[index % Math.max(1, controllers.length)];
        if (controller === undefined) continue;
        const given = sources[index % sources.length].reason;
        controller.abort(reasonOf(given));
        controller.abort('second time');
        log.push(['after abort', index % controllers.length, any.aborted, outer.aborted, attempt(() => outer.throwIfAborted())]);
      }
      return log;
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          sources,
          abortOrder: fc.array(fc.nat(5), { maxLength: 3 }),
          nested: fc.boolean(),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  it('AbortSignal.timeout aborts later, once, with a TimeoutError, as Node does', async () => {
    const probe = `async ({ ms }) => {
      const signal = AbortSignal.timeout(ms);
      const log = [signal.aborted];
      signal.addEventListener('abort', () => log.push(['abort', errorName(signal.reason)]));
      await new Promise((resolve) => setTimeout(resolve, ms + 30));
      log.push(signal.aborted, attempt(() => signal.throwIfAborted()));
      return log;
    }`;
    await fc.assert(
      fc.asyncProperty(fc.record({ ms: fc.nat(5) }), (input) => agree(probe, input)),
      { numRuns: 10 },
    );
  });
});

const bytes = fc.array(fc.nat(255), { maxLength: 200 });
/** How a probe hands bytes over: every BufferSource kind, views at an offset included. */
const VIEW_OF = `(input, kind) => {
  const padded = new Uint8Array([7, ...input, 9]);
  if (kind === 'ArrayBuffer') return new Uint8Array(input).buffer;
  if (kind === 'DataView') return new DataView(padded.buffer, 1, input.length);
  return padded.subarray(1, 1 + input.length);
}`;
const viewKind = fc.constantFrom('ArrayBuffer', 'Uint8Array', 'DataView');

describe('crypto.subtle', () => {
  it('digests arbitrary bytes with SHA-1/256/384/512, and refuses other names, as Node does', async () => {
    const algorithm = fc.oneof(
      fc.constantFrom('SHA-1', 'SHA-256', 'SHA-384', 'SHA-512', 'sha-256', 'Sha-512'),
      fc.constantFrom('SHA-1', 'SHA-384').map((name) => ({ name })),
      // Not digests, or not names at all.
      fc.constantFrom('SHA-224', 'MD5', 'SHA256', '', 'HMAC'),
    );
    const probe = `async ({ algorithm, data, kind }) => bytes(await crypto.subtle.digest(algorithm, (${VIEW_OF})(data, kind)))`;
    await fc.assert(
      fc.asyncProperty(fc.record({ algorithm, data: bytes, kind: viewKind }), (input) =>
        agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  it('imports HMAC keys, signs and verifies arbitrary bytes as Node does', async () => {
    const probe = `async ({ key, hash, length, data, kind, tamper }) => {
      const params = length === null ? { name: 'HMAC', hash } : { name: 'HMAC', hash, length };
      const imported = await crypto.subtle.importKey('raw', (${VIEW_OF})(key, kind), params, true, ['sign', 'verify']);
      const described = [imported.type, imported.extractable, [...imported.usages].sort(), imported.algorithm.name,
        imported.algorithm.hash.name, imported.algorithm.length];
      const signature = new Uint8Array(await crypto.subtle.sign('HMAC', imported, (${VIEW_OF})(data, kind)));
      const altered = signature.slice();
      if (tamper !== null && altered.length > 0) altered[tamper % altered.length] ^= 1;
      const verified = await crypto.subtle.verify({ name: 'HMAC' }, imported, altered, (${VIEW_OF})(data, kind));
      const exported = bytes(await crypto.subtle.exportKey('raw', imported));
      return [described, bytes(signature), verified, exported];
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(255), { minLength: 0, maxLength: 150 }).chain((key) =>
          fc.record({
            key: fc.constant(key),
            hash: fc.oneof(
              fc.constantFrom('SHA-1', 'SHA-256', 'SHA-384', 'SHA-512'),
              fc.constant({ name: 'SHA-256' }),
            ),
            // A length must be the key's bits, or fewer within its last byte; others are refused.
            length: fc.oneof(
              fc.constant(null),
              fc.constant(key.length * 8),
              fc.integer({ min: key.length * 8 - 7, max: key.length * 8 }),
              fc.nat(1300),
            ),
            data: bytes,
            kind: viewKind,
            tamper: fc.oneof(fc.constant(null), fc.nat(64)),
          }),
        ),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });
  it('generates HMAC keys of the default or a given length as Node does', async () => {
    const probe = `async ({ hash, length }) => {
      const params = length === null ? { name: 'HMAC', hash } : { name: 'HMAC', hash, length };
      const key = await crypto.subtle.generateKey(params, true, ['sign']);
      const raw = await crypto.subtle.exportKey('raw', key);
      return [key.algorithm.name, key.algorithm.hash.name, key.algorithm.length, raw.byteLength, [...key.usages]];
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          hash: fc.constantFrom('SHA-1', 'SHA-256', 'SHA-384', 'SHA-512'),
          // Whole bytes only. The standard lets a length in bits make a key of
          // that many bits; Node refuses one that is not a multiple of 8 with a
          // TypeError, the realm (which holds keys as bytes) with an OperationError.
          length: fc.oneof(
            fc.constant(null),
            fc.nat(128).map((bytes) => bytes * 8),
          ),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 100 },
    );
  });

  // HmacImportParams' length is an [EnforceRange] unsigned long (Web Crypto
  // API, WebIDL): a length that is negative, 2^32 or more, or not finite is a
  // TypeError while the algorithm is normalised, before the key is looked at
  // (where a length that does not match the key would be a DataError).
  it('refuses HMAC lengths out of an unsigned long with a TypeError, as Node does', async () => {
    const probe = `async ({ key, length }) => {
      const given = length === 'NaN' ? NaN : length === 'Infinity' ? Infinity : length;
      await crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256', length: given }, false, ['sign']);
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          key: fc.array(fc.nat(255), { minLength: 1, maxLength: 8 }),
          length: fc.oneof(
            fc.integer({ min: -1024, max: -1 }),
            fc.integer({ min: 2 ** 32, max: 2 ** 40 }),
            fc.constantFrom('NaN', 'Infinity'),
          ),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 20 },
    );
  });
});

describe('crypto.getRandomValues', () => {
  it('fills integer arrays up to 65 536 bytes and refuses the rest as Node does', async () => {
    const probe = `({ kind, length }) => attempt(() => {
      const array = new globalThis[kind](length);
      const returned = crypto.getRandomValues(array);
      return [returned === array, array.length, Object.prototype.toString.call(returned)];
    })`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          kind: fc.constantFrom(
            'Int8Array',
            'Uint8Array',
            'Uint8ClampedArray',
            'Int16Array',
            'Uint16Array',
            'Int32Array',
            'Uint32Array',
            'BigInt64Array',
            'BigUint64Array',
            'Float32Array',
            'Float64Array',
            'DataView',
            'Array',
          ),
          length: fc.oneof(fc.nat(16), fc.integer({ min: 8000, max: 70_000 })),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 200 },
    );
  });
});
