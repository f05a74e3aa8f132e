/**
 * Tool code may replace any global of its realm (`globalThis.TypeError =
 * Fake`); the realm's own code must not notice, since it takes its built-ins
 * from primordials.js, captured before tool code runs. Each case runs the
 * same tool code in two fresh tool contexts (made by the harness's own
 * factory, as in test/support/realm-oracle.ts), one with TypeError, Symbol,
 * parseInt and parseFloat replaced first: both must give the same outcome and
 * the same console lines, and no fake may ever be called.
 */
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { readContextScripts } from '../../runner-image/context-scripts.js';
import { Invocation } from '../../runner-image/invocation.js';
import { RUN, ToolContextFactory } from '../../runner-image/tool-context.js';

let factory: ToolContextFactory;
beforeAll(async () => {
  const { lodashPath, contextScriptsPath } = await buildHarness();
  factory = new ToolContextFactory(lodashPath, readContextScripts(contextScriptsPath));
});

/**
 * Replaces the globals with fakes that record every use in `fakeCalls`, and
 * keeps the originals for the tool code's own checks. Symbol's fake names
 * string keys, so a realm that read `Symbol.iterator` after it would define
 * its iterators under 'fakeIterator'.
 */
const REPLACE_GLOBALS = `
  globalThis.fakeCalls = [];
  globalThis.OriginalTypeError = TypeError;
  globalThis.TypeError = function FakeTypeError() { fakeCalls.push('TypeError'); };
  globalThis.Symbol = {
    get iterator() { fakeCalls.push('Symbol.iterator'); return 'fakeIterator'; },
    get toStringTag() { fakeCalls.push('Symbol.toStringTag'); return 'fakeTag'; },
  };
  globalThis.parseInt = function () { fakeCalls.push('parseInt'); return 999; };
  globalThis.parseFloat = function () { fakeCalls.push('parseFloat'); return 999; };
`;

const KEEP_GLOBALS = `
  globalThis.fakeCalls = [];
  globalThis.OriginalTypeError = TypeError;
`;

/** What one run of tool code gave: its value (JSON), its console lines, and the fakes it reached. */
interface Run {
  value: unknown;
  logs: string[];
  fakeCalls: string[];
}

/**
 * Runs `body` (statements ending in `return`) as tool code in a fresh tool
 * context, after `prelude`. Everything the body reaches is created lazily, so
 * the web platform's classes are set up after the replacement.
 */
function runInFreshRealm(prelude: string, body: string): Run {
  const context = factory.create();
  const logs: string[] = [];
  const invocation = new Invocation({
    id: 'replaced-globals',
    limits: { maxResultBytes: 1 << 20, maxLogBytes: 1 << 20, maxLogEntries: 1 << 10 },
    progress: false,
    context,
    write: (line) => {
      const message = JSON.parse(line) as { type: string; text?: string };
      if (message.type === 'log' && message.text !== undefined) logs.push(message.text);
    },
    onEnd: () => undefined,
  });
  context.slot.target = invocation.bridge;
  // Tool code as the harness runs it: a function handed the tool's console.
  // The outcome leaves the realm as JSON text, through a stringify taken
  // before the replacement.
  const source = `(function tool(params, env, console) {
    const stringify = JSON.stringify;
    ${prelude}
    let outcome;
    try {
      outcome = { value: (function () { ${body} })() };
    } catch (error) {
      outcome = { threw: error instanceof OriginalTypeError ? 'TypeError'
        : error !== null && typeof error === 'object' && typeof error.name === 'string'
          ? error.name : 'something else: ' + error };
    }
    globalThis.outcomeText = stringify({ outcome: outcome, fakeCalls: fakeCalls });
  })`;
  const tool: unknown = new vm.Script(source, {
    filename: 'replaced-globals-tool.js',
  }).runInContext(context.context, RUN);
  invocation.start(tool, '{}', '{}', 'null', 'null');
  context.drain();
  const text = new vm.Script('outcomeText').runInContext(context.context, RUN) as string;
  const { outcome, fakeCalls } = JSON.parse(text) as { outcome: unknown; fakeCalls: string[] };
  return { value: outcome, logs, fakeCalls };
}

/** The body's run with the globals replaced, after checking it against a run without. */
function expectUnaffected(body: string): Run {
  const baseline = runInFreshRealm(KEEP_GLOBALS, body);
  const replaced = runInFreshRealm(REPLACE_GLOBALS, body);
  expect(replaced.fakeCalls).toEqual([]);
  expect(replaced.value).toEqual(baseline.value);
  expect(replaced.logs).toEqual(baseline.logs);
  return replaced;
}

describe('the realm after tool code replaced TypeError, Symbol, parseInt and parseFloat', () => {
  it('structuredClone still throws its own errors and clones errors to the real classes', () => {
    const run = expectUnaffected(`
      const attempt = (fn) => { try { fn(); return 'no error'; } catch (error) {
        return error instanceof OriginalTypeError ? 'TypeError' : error.name; } };
      const copy = structuredClone(new OriginalTypeError('boom'));
      return {
        noArgument: attempt(() => structuredClone()),
        badOptions: attempt(() => structuredClone(1, 'not an object')),
        uncloneable: attempt(() => structuredClone(() => 1)),
        uncloneableInside: attempt(() => structuredClone({ inner: new WeakMap() })),
        errorCopy: [copy instanceof OriginalTypeError, copy.message],
        typedArray: Array.from(structuredClone(new Int16Array([1, -2]))),
      };
    `);
    expect(run.value).toEqual({
      value: {
        noArgument: 'TypeError',
        badOptions: 'TypeError',
        uncloneable: 'DataCloneError',
        uncloneableInside: 'DataCloneError',
        errorCopy: [true, 'boom'],
        typedArray: [1, -2],
      },
    });
  });

  it('Headers and Response keep their iterators and their tag', () => {
    const run = expectUnaffected(`
      const headers = new Headers([['b', '2'], ['a', '1']]);
      const response = new Response('x', { headers: { 'x-one': '1' } });
      return {
        headers: [...headers],
        responseHeaders: [...response.headers],
        tag: Object.prototype.toString.call(response),
      };
    `);
    expect(run.value).toEqual({
      value: {
        headers: [
          ['a', '1'],
          ['b', '2'],
        ],
        responseHeaders: [
          ['content-type', 'text/plain;charset=UTF-8'],
          ['x-one', '1'],
        ],
        tag: '[object Response]',
      },
    });
  });

  it('Blob, File and FormData keep their iterators, tags and errors', () => {
    const run = expectUnaffected(`
      const attempt = (fn) => { try { fn(); return 'no error'; } catch (error) {
        return error instanceof OriginalTypeError ? 'TypeError' : error.name; } };
      const blob = new Blob(['ab', new Uint8Array([99])], { type: 'Text/Plain' });
      const file = new File([blob.slice(-2)], 'f.txt');
      const form = new FormData();
      form.append('a', '1');
      form.append('b', blob);
      form.set('c', file, 'g.txt');
      return {
        blob: [blob.size, blob.type, file.size, file.name],
        entries: [...form].map(([name, value]) => [name, typeof value === 'string' ? value : value.name]),
        tags: [Object.prototype.toString.call(blob), Object.prototype.toString.call(file),
          Object.prototype.toString.call(form)],
        errors: [attempt(() => new Blob('x')), attempt(() => new File([])),
          attempt(() => new FormData().append('a', 'b', 'c')), attempt(() => new FormData({}))],
      };
    `);
    expect(run.value).toEqual({
      value: {
        blob: [3, 'text/plain', 2, 'f.txt'],
        entries: [
          ['a', '1'],
          ['b', 'blob'],
          ['c', 'g.txt'],
        ],
        tags: ['[object Blob]', '[object File]', '[object FormData]'],
        errors: ['TypeError', 'TypeError', 'TypeError', 'TypeError'],
      },
    });
  });

  it("console.log's %i, %d and %f still parse their numbers", () => {
    const run = expectUnaffected(`
      console.log('%d %f', '7', '1.5');
      console.log('%i %f', '42.9px', '2.5e1x');
      return 'logged';
    `);
    expect(run.logs).toEqual(['7 1.5', '42 25']);
  });
});

describe('the streams after tool code replaced TypeError, Symbol, parseInt and parseFloat', () => {
  it('ReadableStream, set up after the replacement, throws its own errors and keeps its symbols', () => {
    const run = expectUnaffected(`
      const attempt = (fn) => { try { fn(); return 'no error'; } catch (error) {
        return error instanceof OriginalTypeError ? 'TypeError' : error.name; } };
      let controller;
      const stream = new ReadableStream({ start(c) { controller = c; } }, { highWaterMark: 2 });
      controller.enqueue('a');
      const reader = stream.getReader();
      return {
        badType: attempt(() => new ReadableStream({ type: 'nope' })),
        badSize: attempt(() => new ReadableStream({}, { highWaterMark: -1 })),
        lockedTwice: attempt(() => stream.getReader()),
        illegal: attempt(() => new ReadableStreamDefaultController()),
        desiredSize: controller.desiredSize,
        locked: stream.locked,
        reading: Object.prototype.toString.call(reader.read()),
        tag: Object.prototype.toString.call(stream),
        symbols: Object.getOwnPropertySymbols(ReadableStream.prototype).length,
        transform: typeof new TransformStream().readable.getReader,
      };
    `);
    expect(run.value).toEqual({
      value: {
        badType: 'TypeError',
        badSize: 'RangeError',
        lockedTwice: 'TypeError',
        illegal: 'TypeError',
        desiredSize: 1,
        locked: true,
        reading: '[object Promise]',
        tag: '[object ReadableStream]',
        symbols: 2,
        transform: 'function',
      },
    });
  });
});
