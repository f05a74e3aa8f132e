/**
 * Hostile tool code against the realm's new surface (Request, Blob, File,
 * FormData, multipart, MIME types and the streams of web-streams-polyfill):
 * each case runs tool code in a fresh tool context made by the harness's own
 * ToolContextFactory, with the harness's own Invocation on the bridge, and
 * looks at what the tool got and what the context sent the host (protocol
 * lines). The realm's promise (primordials.js) is that a tool replacing a
 * built-in before it first uses one of these classes only confuses itself:
 * the realm's own checks keep holding, and its internal objects (a Headers
 * list, a Blob's bytes, a body's state) never reach tool code.
 */
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { readContextScripts } from '../../runner-image/context-scripts.js';
import { Invocation } from '../../runner-image/invocation.js';
import { RUN, ToolContextFactory, type ToolContext } from '../../runner-image/tool-context.js';

let factory: ToolContextFactory;
beforeAll(async () => {
  const { lodashPath, contextScriptsPath } = await buildHarness();
  factory = new ToolContextFactory(lodashPath, readContextScripts(contextScriptsPath));
});

/** A protocol line the invocation wrote. */
interface Line {
  type: string;
  op?: string;
  args?: { headers?: Record<string, string>; body?: string };
  ok?: boolean;
  value?: unknown;
  error?: { code: string; message: string };
}

/** What one run gave: the lines written, and the result's value (or the error's message). */
interface Run {
  lines: Line[];
  result: unknown;
}

/**
 * Runs `body` as the body of an async tool function in `context` (a fresh one
 * by default) until its result is written; brokered calls stay pending.
 */
async function runTool(body: string, context: ToolContext = factory.create()): Promise<Run> {
  const lines: Line[] = [];
  const invocation = new Invocation({
    id: 'hostile',
    limits: { maxResultBytes: 1 << 20, maxLogBytes: 1 << 20, maxLogEntries: 1 << 10 },
    progress: false,
    context,
    write: (line) => lines.push(JSON.parse(line) as Line),
    onEnd: () => undefined,
  });
  context.slot.target = invocation.bridge;
  const tool: unknown = new vm.Script(
    `(async function tool(params, env, console, sdk) {\n${body}\n})`,
    { filename: 'hostile-tool.js' },
  ).runInContext(context.context, RUN);
  invocation.start(tool, '{}', '{}', 'null', 'null');
  for (let turn = 0; turn < 1000; turn++) {
    context.drain();
    const result = lines.find((line) => line.type === 'result');
    if (result !== undefined) {
      return { lines, result: result.ok === true ? result.value : result.error?.message };
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the tool wrote no result');
}

/** The headers of the brokered http calls the run made. */
function sentHeaders(run: Run): Record<string, string>[] {
  return run.lines
    .filter((line) => line.type === 'call' && line.op === 'http')
    .map((line) => line.args?.headers ?? {});
}

describe('realm internals behind a tool-defined Array.prototype index accessor', () => {
  // Realm code appends with `list[list.length] = value`, an ordinary [[Set]]:
  // with no own element there, it runs a setter the tool put on Array.prototype,
  // handing it the realm's internal array (`this`) and the value.
  const PLANT_INDEX_SETTER = (setter: string): string => `
    Object.defineProperty(Array.prototype, '0', { configurable: true, set: ${setter} });
  `;

  it('keeps CR LF out of a header value sent to the broker', async () => {
    const run = await runTool(`
      ${PLANT_INDEX_SETTER(`function (pair) {
        if (Array.isArray(pair) && pair[0] === 'x-a') pair[1] = 'ok\\r\\nX-Injected: 1';
        Object.defineProperty(this, '0', { value: pair, writable: true, enumerable: true, configurable: true });
      }`)}
      const headers = new Headers({ 'x-a': 'b' });
      delete Array.prototype[0];
      void fetch(new Request('https://example.com/', { headers }));
      return [...headers];
    `);
    for (const record of sentHeaders(run)) {
      for (const value of Object.values(record)) expect(value).not.toMatch(/[\r\n\0]/);
    }
    expect(run.result).not.toEqual([['x-a', 'ok\r\nX-Injected: 1']]);
  });

  // whatwg-url (URL, and Request's URL) is a library that pushes on arrays of its own with
  // Array.prototype.push, as web-streams-polyfill does: a tool that plants a setter sees its own
  // URL's path segments, which only confuses that tool (build-harness.ts says so of both).
  it('hands the setter no array of its own while Headers, Blob, FormData and bodies work', async () => {
    const run = await runTool(`
      // A string, not an array: appending to an array would run the setter again.
      let reached = '';
      ${PLANT_INDEX_SETTER(`function (value) {
        reached += Object.prototype.toString.call(value) + ' ';
        Object.defineProperty(this, '0', { value, writable: true, enumerable: true, configurable: true });
      }`)}
      try {
        const headers = new Headers({ 'x-a': 'b' });
        const form = new FormData();
        form.append('name', 'value');
        form.append('file', new Blob(['abc']), 'a.txt');
        const response = new Response(form, { headers });
        await response.formData();
        await new Response(new Blob(['x', new Uint8Array([1])]), { headers }).text();
      } finally {
        delete Array.prototype[0];
      }
      return reached;
    `);
    expect(run.result).toBe('');
  });

  it('builds a Blob of the parts given', async () => {
    const run = await runTool(`
      ${PLANT_INDEX_SETTER('function () {}')}
      const blob = new Blob(['abc']);
      delete Array.prototype[0];
      return [blob.size, await blob.text()];
    `);
    expect(run.result).toEqual([3, 'abc']);
  });
});

describe("a Blob's bytes, which nothing may write (blob.js)", () => {
  it('never reach an Object.prototype.then getter while a body is read', async () => {
    // body.js resolves a promise with the body's internal state: resolving
    // reads its `then`, so a getter on Object.prototype gets the state, and
    // with a Blob body, the Blob's own bytes.
    const run = await runTool(`
      const blob = new Blob(['secret']);
      const slice = blob.slice();
      const request = new Request('https://example.com/', { method: 'POST', body: blob });
      let seen = 'nothing';
      Object.defineProperty(Object.prototype, 'then', { configurable: true, get() {
        if (this !== null && this.kind === 'bytes' && this.data !== undefined) {
          seen = 'the body state';
          this.data[0] = 0x58;
        }
        return undefined;
      } });
      await request.text();
      delete Object.prototype.then;
      return [seen, await blob.text(), await slice.text()];
    `);
    expect(run.result).toEqual(['nothing', 'secret', 'secret']);
  });

  it('never reach a %TypedArray%.prototype.length getter while fetch encodes a body', async () => {
    // bytes.toBinary (and fetch.js) read `bytes.length` off the prototype, where
    // every other place takes the captured getter.
    const run = await runTool(`
      const blob = new Blob(['secret']);
      const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
      const original = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'length');
      let seen = 'nothing';
      Object.defineProperty(TypedArrayPrototype, 'length', { configurable: true, get() {
        const length = original.get.call(this);
        if (length === 6 && seen === 'nothing') {
          seen = 'a view of the body';
          this[0] = 0x58;
        }
        return length;
      } });
      try {
        void fetch('https://example.com/', { method: 'POST', body: blob });
      } finally {
        Object.defineProperty(TypedArrayPrototype, 'length', original);
      }
      return [seen, await blob.text()];
    `);
    expect(run.result).toEqual(['nothing', 'secret']);
    // What was sent is the Blob's bytes: base64 of 'secret'.
    const call = run.lines.find((line) => line.type === 'call' && line.op === 'http');
    expect(call?.args?.body).toBe('c2VjcmV0');
  });
});

describe('cost of parsing what a body or its headers say', () => {
  it(
    'parses a Content-Type with many parameters in time linear in its length',
    { timeout: 60_000 },
    async () => {
      // mime.js checks each parameter against all kept before it (parameterOf):
      // n parameters cost n²/2 comparisons. Measured: 40,000 (349 KB) take 4.4 s.
      const started = Date.now();
      const run = await runTool(`
        let type = 'text/plain';
        for (let i = 0; i < 60000; i++) type += ';p' + i + '=1';
        const blob = await new Response('x', { headers: { 'content-type': type } }).blob();
        return blob.type.length;
      `);
      expect(typeof run.result).toBe('number');
      expect(Date.now() - started).toBeLessThan(3_000);
    },
  );
});

describe('streams after tool code replaced a built-in (web-streams-polyfill)', () => {
  it('Function.prototype.bind replaced before the first stream confuses that tool only; the next context is sound', async () => {
    // The library takes `Promise.resolve.bind(Promise)` as its factory runs,
    // on the first read of a stream global, after tool code: `.bind` is read
    // off Function.prototype then. Accepted (build-harness.ts, STREAMS_DEFINE):
    // the tool gets its own fake back, in its own invocation only.
    const fooled = await runTool(`
      Function.prototype.bind = function () { return function () { return 'fake'; }; };
      const reader = new ReadableStream({ start(controller) { controller.enqueue(1); controller.close(); } }).getReader();
      return JSON.stringify(await reader.read());
    `);
    expect(fooled.result).not.toBe('{"value":1,"done":false}');
    const next = await runTool(`
      const reader = new ReadableStream({ start(controller) { controller.enqueue(1); controller.close(); } }).getReader();
      return JSON.stringify(await reader.read());
    `);
    expect(next.result).toBe('{"value":1,"done":false}');
  });
});

describe('what is sound (regression guards)', () => {
  it('reaches no object of another realm from the new classes, their instances, promises and errors', async () => {
    const run = await runTool(`
      const roots = [globalThis];
      for (const name of ['Blob', 'File', 'FormData', 'Request', 'Response', 'Headers', 'fetch',
        'ReadableStream', 'WritableStream', 'TransformStream', 'ByteLengthQueuingStrategy',
        'CountQueuingStrategy', 'ReadableStreamBYOBReader', 'ReadableStreamDefaultReader',
        'WritableStreamDefaultWriter', 'ReadableByteStreamController',
        'ReadableStreamDefaultController', 'WritableStreamDefaultController',
        'TransformStreamDefaultController', 'ReadableStreamBYOBRequest']) roots.push(globalThis[name]);
      const blob = new Blob(['a']);
      const form = new FormData();
      form.append('x', blob);
      const request = new Request('https://example.com/', { method: 'POST', body: form });
      roots.push(blob, new File(['b'], 'f'), form, request, request.signal, request.headers,
        form.entries(), request.headers.entries(), blob.text(), request.clone().formData(),
        new Response(blob).blob());
      roots.push(new ReadableStream({ start(c) { roots.push(c); } }).getReader(),
        new ReadableStream().values());
      const bytes = new ReadableStream({ type: 'bytes', start(c) { roots.push(c); } });
      const byob = bytes.getReader({ mode: 'byob' });
      roots.push(byob, byob.read(new Uint8Array(4)));
      roots.push(new WritableStream({ start(c) { roots.push(c, c.signal); } }).getWriter());
      const transform = new TransformStream({ start(c) { roots.push(c); } });
      roots.push(transform.readable, transform.writable);
      const failures = [() => new Blob(1), () => Blob.prototype.text.call(1), () => new Request(''),
        () => new Response(null, 1), () => new ReadableStream(1), () => new FormData(1),
        () => new ReadableStream().pipeTo(1), () => new WritableStream().abort(),
        () => new Request('https://x/', { body: {}, method: 'POST' })];
      for (const fail of failures) {
        try {
          const value = fail();
          roots.push(value);
          if (value !== null && typeof value.then === 'function') value.then(null, (e) => roots.push(e));
        } catch (error) {
          roots.push(error);
        }
      }
      await null;
      await null;
      const seen = new Set();
      const queue = [...roots];
      const foreign = [];
      while (queue.length > 0) {
        const object = queue.pop();
        if (object === null || (typeof object !== 'object' && typeof object !== 'function')) continue;
        if (seen.has(object)) continue;
        seen.add(object);
        let top = object;
        while (Object.getPrototypeOf(top) !== null) top = Object.getPrototypeOf(top);
        // Array.prototype[Symbol.unscopables] is the one null-prototype object of the language here.
        if (top !== Object.prototype && top !== Array.prototype[Symbol.unscopables]) {
          foreign.push(Object.prototype.toString.call(object));
        }
        if (typeof object === 'function' && object !== Function.prototype && !(object instanceof Function)) {
          foreign.push('function ' + object.name);
        }
        queue.push(Object.getPrototypeOf(object));
        for (const key of Reflect.ownKeys(object)) {
          const descriptor = Object.getOwnPropertyDescriptor(object, key);
          if (descriptor !== undefined) queue.push(descriptor.value, descriptor.get, descriptor.set);
        }
      }
      return { many: seen.size > 500, foreign };
    `);
    expect(run.result).toEqual({ many: true, foreign: [] });
  });

  it("leaves nothing a context planted on the new classes for the next context's", async () => {
    const first = await runTool(`
      Blob.prototype.text = () => 'planted';
      ReadableStream.prototype.getReader = () => 'planted';
      Request.prototype.planted = true;
      Object.prototype.planted = true;
      globalThis.__mcphostWebStreams = () => 'planted';
      return 'planted';
    `);
    expect(first.result).toBe('planted');
    const second = await runTool(`
      return [await new Blob(['a']).text(), typeof new ReadableStream().getReader(),
        'planted' in Request.prototype, typeof globalThis.__mcphostWebStreams];
    `);
    expect(second.result).toEqual(['a', 'object', false, 'undefined']);
  });
});
