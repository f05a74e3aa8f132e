/**
 * Hostile tool code: every way we know to reach a host-realm object (and from
 * it `process`) must fail. Each probe reports what it found; the verdicts that
 * mean "escaped" are `ESCAPED` and `HOST-ERROR` (a caught value not of the
 * tool's realm).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { HarnessClient, valueOf, type CallHandler } from './harness-client.js';

/** Prepended to each hostile tool: `reach(x)` tries x.constructor.constructor('return process')(). */
const PROBE = `
const verdicts = [];
function reach(label, x) {
  let verdict;
  try {
    if (x === null || x === undefined) verdict = 'nothing';
    else {
      const F = x.constructor && x.constructor.constructor;
      if (F === undefined) verdict = 'no constructor';
      else if (F === Function) verdict = 'context Function';
      else {
        const p = F('return process')();
        verdict = p && typeof p === 'object' && typeof p.pid === 'number' ? 'ESCAPED' : 'no process';
      }
    }
  } catch (e) {
    verdict = e instanceof Error ? 'blocked' : 'HOST-ERROR';
  }
  verdicts.push(label + ': ' + verdict);
}
`;

const ESCAPED = /: (ESCAPED|HOST-ERROR)$/;

/** Installed by a probe: every call site V8 hands prepareStackTrace is tried, with its this and function. */
const CALL_SITE_PROBE = `
Error.prepareStackTrace = (error, sites) => {
  for (const site of sites) {
    reach('site', site);
    reach('site this', site.getThis());
    reach('site function', site.getFunction());
  }
  return 'stack';
};`;

let harness: HarnessClient;

beforeAll(async () => {
  const { harnessPath } = await buildHarness();
  harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
});

afterAll(async () => {
  await harness?.close();
  expect(harness.faults).toEqual([]);
});

async function probe(
  body: string,
  options: Parameters<HarnessClient['invoke']>[1] = {},
): Promise<string[]> {
  const outcome = await harness.invoke(`${PROBE}\n${body}\nreturn verdicts;`, options);
  const verdicts = valueOf(outcome) as string[];
  expect(verdicts.length).toBeGreaterThan(0);
  return verdicts;
}

function expectContained(verdicts: string[]): void {
  expect(verdicts.filter((verdict) => ESCAPED.test(verdict))).toEqual([]);
}

const httpOk: CallHandler = () => ({
  ok: true,
  value: { status: 200, headers: { a: 'b' }, body: '{}' },
});

describe('escape attempts', () => {
  it('the probe itself detects a host object (control)', async () => {
    // Sanity check of the probe against the tool's own realm.
    const verdicts = await probe('reach("own object", {}); reach("own function", () => 1);');
    expect(verdicts).toEqual(['own object: context Function', 'own function: context Function']);
  });

  it('this, globalThis, the tool function and its caller', async () => {
    const verdicts = await probe(`
      reach('this', this);
      reach('globalThis', globalThis);
      reach('global proto', Object.getPrototypeOf(globalThis));
      const attempt = (get) => { try { return get(); } catch (e) { return e; } };
      reach('callee', attempt(() => arguments.callee));
      reach('caller', attempt(() => arguments.callee.caller));
      function inner() { return inner.caller; }
      reach('inner caller', attempt(inner));
      reach('this.constructor', this.constructor);`);
    expectContained(verdicts);
  });

  it('params, nested params and env', async () => {
    const verdicts = await probe(
      `reach('params', params); reach('nested', params.nested); reach('list', params.list); reach('env', env);`,
      { params: { nested: { a: 1 }, list: [1] }, env: { KEY: 'v' } },
    );
    expectContained(verdicts);
    expect(verdicts).toContain('params: context Function');
  });

  it('console and its methods and return values', async () => {
    const verdicts = await probe(`
      reach('console', console);
      for (const k of Object.keys(console)) { reach('console.' + k, console[k]); reach(k + '()', console[k]('x')); }`);
    expectContained(verdicts);
  });

  it('sdk, sdk.http, its promise, the response and its methods', async () => {
    const verdicts = await probe(
      `
      reach('sdk', sdk);
      reach('sdk.http', sdk.http);
      const promise = sdk.http({ url: 'https://example.com' });
      reach('promise', promise);
      reach('promise.then', promise.then);
      const response = await promise;
      reach('response', response);
      for (const k of Object.keys(response)) { reach(k, response[k]); reach(k + '()', response[k]()); }`,
      { onCall: httpOk },
    );
    expectContained(verdicts);
  });

  it('sdk.db handles and their results', async () => {
    const verdicts = await probe(
      `
      const db = sdk.db({ type: 'pg', connection: { host: 'h', database: 'd', user: 'u' } });
      reach('db', db); reach('db.select', db.select);
      const rows = await db.select('t', {}); reach('rows', rows); reach('row', rows[0]);`,
      { onCall: () => ({ ok: true, value: [{ id: 1 }] }) },
    );
    expectContained(verdicts);
  });

  it('sdk.lodash and what it returns', async () => {
    const verdicts = await probe(`
      const _ = sdk.lodash;
      reach('lodash', _); reach('groupBy', _.groupBy); reach('groupBy()', _.groupBy([1], String));
      reach('chain', _.chain([1])); reach('template', (() => { try { return _.template('x') } catch (e) { return e } })());`);
    expectContained(verdicts);
  });

  it('an Error from an error reply', async () => {
    const verdicts = await probe(
      `try { await sdk.http({ url: 'https://example.com' }) } catch (e) { reach('error', e); reach('error proto', Object.getPrototypeOf(e)); }`,
      { onCall: () => ({ ok: false, error: { code: 'ERR_HTTP_FAILED', message: 'refused' } }) },
    );
    expectContained(verdicts);
    expect(verdicts).toContain('error: context Function');
  });

  it('the error of import(), static and computed', async () => {
    const verdicts = await probe(`
      for (const spec of ['fs', 'node:child_process', 'data:text/javascript,export default 1']) {
        try { await import(spec); verdicts.push(spec + ': IMPORTED ESCAPED') } catch (e) { reach('import ' + spec, e) }
      }`);
    expectContained(verdicts);
    expect(verdicts.join('\n')).not.toMatch(/IMPORTED/);
  });

  it('code left over from an ended invocation cannot reach the next one through import()', async () => {
    // Leftover microtasks never run once the result is out (the context's queue is
    // not drained again); if they did, an import() refused with an object would
    // hand them the running invocation's realm.
    const first = await harness.invoke(`
      Promise.resolve().then(() => null).then(() => null).then(async () => {
        try { await import('late') } catch (e) {
          if (e !== null && typeof e === 'object') Object.getPrototypeOf(Object.getPrototypeOf(e)).polluted = 'stolen';
        }
      });
      return [typeof Atomics.waitAsync, typeof FinalizationRegistry];`);
    expect(valueOf(first)).toEqual(['undefined', 'undefined']);
    const second = await harness.invoke(
      "await new Promise((r) => setTimeout(r, 400)); return ({}).polluted ?? 'clean';",
    );
    expect(valueOf(second)).toBe('clean');
  });

  it('Symbol.for("nodejs.util.inspect.custom") is never called', async () => {
    const outcome = await harness.invoke(`
      const hook = Symbol.for('nodejs.util.inspect.custom');
      let called = 0;
      const bait = { [hook](depth, options, inspect) { called++; return 'HOOKED'; }, plain: 1 };
      console.log(bait);
      console.log('%o %O %s', bait, bait, bait);
      const error = new Error('bait'); error[hook] = bait[hook];
      console.error(error);
      return called;`);
    expect(valueOf(outcome)).toBe(0);
    expect(outcome.logs.map((log) => log.text).join('\n')).not.toMatch(/HOOKED/);
  });

  it('Error.prepareStackTrace call sites from host-driven callbacks (timer, reply, getter during serialisation)', async () => {
    const verdicts = await probe(
      `
      ${CALL_SITE_PROBE}
      await new Promise((resolve) => setTimeout(() => { new Error('in timer').stack; resolve(); }, 1));
      const args = { get url() { new Error('in getter').stack; return 'https://example.com'; } };
      await sdk.http(args);
      console.log({ get x() { new Error('in log').stack; return 1; } });
      function viaCaller() { reach('timer caller', viaCaller.caller); }
      await new Promise((resolve) => setTimeout(() => { viaCaller(); resolve(); }, 1));`,
      { onCall: httpOk },
    );
    expectContained(verdicts);
    expect(verdicts.some((verdict) => verdict.startsWith('site:'))).toBe(true);
  });

  it('what lodash throws while it loads never reaches Node to be displayed (attack review)', async () => {
    // A getter lodash's start-up reads throws an Error of the tool's realm: run as
    // a script with Node's default displayErrors, Node would read its stack on
    // the host's side and hand host-realm call sites to prepareStackTrace.
    const verdicts = await probe(
      `
      ${CALL_SITE_PROBE}
      for (const name of ['global', 'self']) {
        Object.defineProperty(globalThis, name, { configurable: true, get() { throw new Error('from ' + name); } });
      }
      const order = [];
      Promise.resolve().then(() => order.push('microtask'));
      let loaded;
      try { loaded = sdk['lod' + 'ash']; } catch (e) { loaded = 'threw ' + e.message; }
      order.push('after the read');
      await null;
      verdicts.push('order: ' + order.join(', '));
      verdicts.push('lodash: ' + typeof loaded);`,
    );
    expectContained(verdicts);
    // Reading sdk.lodash runs no queued microtask in the middle of the tool's statement.
    expect(verdicts).toContain('order: after the read, microtask');
  });

  it('a stack overflow while calling into the host', async () => {
    const verdicts = await probe(
      `
      let caught = [];
      function dive(n) { try { dive(n + 1); } catch (e) { if (caught.length < 5) caught.push(e); } console.log(''); }
      function diveHttp(n) { try { diveHttp(n + 1); } catch (e) { if (caught.length < 10) caught.push(e); } sdk.http({ url: 'x' }).catch(() => {}); }
      try { dive(0) } catch (e) { caught.push(e) }
      try { diveHttp(0) } catch (e) { caught.push(e) }
      caught.forEach((e, i) => reach('overflow ' + i, e));`,
      { limits: { maxLogBytes: 1 }, onCall: () => 'no-reply' },
    );
    expectContained(verdicts);
  });

  it('hijacked Promise.prototype.then and Object.prototype.then see only tool-realm values', async () => {
    const verdicts = await probe(
      `
      const originalThen = Promise.prototype.then;
      Promise.prototype.then = function (onOk, onErr) { reach('then this', this); reach('then onOk', onOk); return originalThen.call(this, onOk, onErr); };
      Object.defineProperty(Object.prototype, 'then', { configurable: true, get() { reach('thenable get', this); return undefined; } });
      const r = await sdk.http({ url: 'https://example.com' });
      reach('response', r);
      delete Object.prototype.then;
      Promise.prototype.then = originalThen;`,
      { onCall: httpOk },
    );
    expectContained(verdicts);
  });

  it('a returned thenable and a toJSON on the result run in the tool realm only', async () => {
    const outcome = await harness.invoke(`${PROBE}
      const result = { toJSON(key) { reach('toJSON this', this); return verdicts; } };
      return { then(resolve) { reach('then resolve', resolve); resolve(result); } };`);
    const verdicts = valueOf(outcome) as string[];
    expect(verdicts.length).toBe(2);
    expectContained(verdicts);
  });
});

/** A fetch reply as the broker gives it (base64 body, since fetch asks for it). */
const fetchOk: CallHandler = () => ({
  ok: true,
  value: {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"a":1}').toString('base64'),
  },
});

describe('the web platform', () => {
  it('every web global, its lazy accessor, its instances and what they return', async () => {
    const verdicts = await probe(`
      const names = ['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'structuredClone',
        'DOMException', 'Event', 'EventTarget', 'CustomEvent', 'AbortController', 'AbortSignal', 'performance',
        'crypto', 'Crypto', 'CryptoKey', 'SubtleCrypto', 'fetch', 'Headers', 'Request', 'Response',
        'Blob', 'File', 'FormData', 'ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader',
        'ReadableStreamBYOBRequest', 'ReadableStreamDefaultController', 'ReadableByteStreamController',
        'WritableStream', 'WritableStreamDefaultWriter', 'WritableStreamDefaultController', 'TransformStream',
        'TransformStreamDefaultController', 'ByteLengthQueuingStrategy', 'CountQueuingStrategy'];
      for (const name of names) {
        const accessor = Object.getOwnPropertyDescriptor(globalThis, name);
        reach(name + ' getter', accessor.get);
        reach(name + ' setter', accessor.set);
        reach(name, globalThis[name]);
        reach(name + ' prototype', globalThis[name].prototype ?? Object.getPrototypeOf(globalThis[name]));
      }
      const attempt = (f) => { try { return f(); } catch (e) { return e; } };
      const url = new URL('https://user:pw@example.com/a?b=c#d');
      reach('url', url); reach('searchParams', url.searchParams);
      reach('searchParams iterator', url.searchParams[Symbol.iterator]()); reach('iterator step', url.searchParams.entries().next());
      reach('url error', attempt(() => new URL('::')));
      reach('encoded', new TextEncoder().encode('x')); reach('encodeInto', new TextEncoder().encodeInto('x', new Uint8Array(2)));
      reach('decoder', new TextDecoder()); reach('decode error', attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([255]))));
      reach('label error', attempt(() => new TextDecoder('nope')));
      reach('atob error', attempt(() => atob('*')));
      reach('clone', structuredClone({ a: new Map([[1, new Date()]]) })); reach('clone error', attempt(() => structuredClone(() => 1)));
      const controller = new AbortController();
      reach('controller', controller); reach('signal', controller.signal);
      controller.signal.addEventListener('abort', (event) => { reach('abort event', event); reach('event target', event.target); reach('composedPath', event.composedPath()); });
      controller.abort(); reach('abort reason', controller.signal.reason);
      reach('timeout signal', AbortSignal.timeout(1)); reach('any signal', AbortSignal.any([controller.signal]));
      reach('event', new CustomEvent('x', { detail: {} }));
      reach('performance', performance); reach('now', performance.now()); reach('toJSON', performance.toJSON());
      reach('crypto', crypto); reach('subtle', crypto.subtle); reach('random', crypto.getRandomValues(new Uint8Array(4)));
      reach('quota error', attempt(() => crypto.getRandomValues(new Uint8Array(65537))));
      const digest = crypto.subtle.digest('SHA-256', new Uint8Array(1));
      reach('digest promise', digest); reach('digest', await digest);
      const key = await crypto.subtle.importKey('raw', new Uint8Array(8), { name: 'HMAC', hash: 'SHA-1' }, true, ['sign']);
      reach('key', key); reach('key algorithm', key.algorithm); reach('key usages', key.usages);
      reach('signature', await crypto.subtle.sign('HMAC', key, new Uint8Array(1)));
      reach('exported', await crypto.subtle.exportKey('raw', key));
      reach('subtle error', await crypto.subtle.encrypt('AES-GCM', key, new Uint8Array(1)).catch((e) => e));
      const headers = new Headers({ a: 'b' });
      reach('headers', headers); reach('headers iterator', headers.entries()); reach('headers step', headers.entries().next());
      const made = new Response('x'); reach('made response', made); reach('made text', made.text());
      const blob = new Blob(['ab', new Uint8Array([1])], { type: 'a/b' });
      reach('blob', blob); reach('blob slice', blob.slice(1)); reach('blob text', blob.text());
      reach('blob bytes', await blob.bytes()); reach('blob buffer', await blob.arrayBuffer());
      reach('blob error', attempt(() => new Blob('x')));
      const file = new File([blob], 'f'); reach('file', file);
      const form = new FormData(); form.append('a', '1'); form.append('b', blob);
      reach('form', form); reach('form iterator', form.entries()); reach('form step', form.entries().next());
      reach('form file', form.get('b')); reach('form all', form.getAll('a'));
      const sent = new Response(form); reach('form response', sent);
      reach('parsed form', await sent.formData());
      reach('response blob', await new Response('x').blob());
      reach('formData error', await new Response('x').formData().catch((e) => e));
      const stream = blob.stream(); reach('blob stream', stream);
      const reader = stream.getReader(); reach('reader', reader);
      const chunk = reader.read(); reach('read promise', chunk); reach('read result', await chunk); reach('chunk', (await chunk).value);
      reach('locked error', attempt(() => stream.getReader()));
      const byob = new Response('xyz').body.getReader({ mode: 'byob' }); reach('byob reader', byob);
      reach('byob read', await byob.read(new Uint8Array(2)));
      const source = new ReadableStream({ start(c) { reach('stream controller', c); c.enqueue('a'); } });
      reach('made stream', source); reach('tee', source.tee());
      const transform = new TransformStream({ transform(c, t) { reach('transform controller', t); t.enqueue(c); } });
      reach('transform', transform); reach('writable', transform.writable); reach('writer', transform.writable.getWriter());
      const iterator = new Response('abc').body[Symbol.asyncIterator](); reach('stream iterator', iterator); reach('iterator step', await iterator.next());
      reach('stream error', attempt(() => new ReadableStream({ type: 'nope' })));
      reach('cancelled', await new ReadableStream().cancel('why'));
      reach('strategy', new CountQueuingStrategy({ highWaterMark: 1 })); reach('size', new ByteLengthQueuingStrategy({ highWaterMark: 1 }).size);`);
    expectContained(verdicts);
    expect(verdicts).toContain('url: context Function');
    expect(verdicts).toContain('abort event: context Function');
  });

  it('fetch: its promise, the Response, headers, bodies and errors', async () => {
    const verdicts = await probe(
      `
      const promise = fetch('https://example.com/', { method: 'POST', body: new Uint8Array([1, 2]) });
      reach('fetch promise', promise);
      const response = await promise;
      reach('response', response); reach('headers', response.headers);
      response.headers.forEach((value, name, owner) => reach('forEach owner', owner));
      reach('clone', response.clone());
      reach('text promise', response.clone().text()); reach('json', await response.clone().json());
      reach('arrayBuffer', await response.clone().arrayBuffer()); reach('bytes', await response.bytes());
      reach('reread', await response.text().catch((e) => e));
      reach('abort', await fetch('https://example.com/', { signal: AbortSignal.abort() }).catch((e) => e));
      reach('bad init', await fetch('https://example.com/', { method: 'GET', body: 'x' }).catch((e) => e));
      const request = new Request('https://example.com/', { method: 'POST', body: 'x', headers: { a: 'b' } });
      reach('request', request); reach('request signal', request.signal); reach('request headers', request.headers);
      reach('request clone', request.clone()); reach('request text', request.clone().text());
      reach('request fetch', await fetch(request)); reach('used request', await fetch(request).catch((e) => e));
      reach('bad request', (() => { try { return new Request('/relative'); } catch (e) { return e; } })());`,
      { onCall: fetchOk },
    );
    expectContained(verdicts);
    const failed = await probe(
      `const error = await fetch('https://example.com/').catch((e) => e);
       reach('network error', error); reach('its cause', error.cause);`,
      { onCall: () => ({ ok: false, error: { code: 'ERR_EGRESS_DENIED', message: 'refused' } }) },
    );
    expectContained(failed);
    expect(failed).toContain('network error: context Function');
  });

  it('Error.prepareStackTrace call sites inside the web platform and whatwg-url', async () => {
    const verdicts = await probe(
      `
      Error.prepareStackTrace = (error, sites) => {
        for (const site of sites) { reach('site this', site.getThis()); reach('site function', site.getFunction()); }
        return 'stack';
      };
      const stackOf = (f) => { try { f(); } catch (e) { return e.stack; } };
      stackOf(() => new URL('http://[bad'));
      stackOf(() => new URLSearchParams({ get a() { throw new Error('getter'); } }));
      stackOf(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xc3])));
      stackOf(() => structuredClone({ get a() { throw new Error('clone getter'); } }));
      stackOf(() => atob('@'));
      new Headers({ get a() { new Error('headers getter').stack; return 'v'; } });
      const target = new EventTarget();
      target.addEventListener('e', () => { new Error('listener').stack; });
      target.dispatchEvent(new Event('e'));
      await fetch('https://example.com/', { get method() { new Error('init getter').stack; return 'GET'; } });
      await crypto.subtle.digest({ get name() { new Error('algorithm getter').stack; return 'SHA-256'; } }, new Uint8Array(1));
      Error.prepareStackTrace = undefined;`,
      { onCall: fetchOk },
    );
    expectContained(verdicts);
  });

  it('thenables and hostile getters around fetch see only tool-realm values', async () => {
    const verdicts = await probe(
      `
      Object.defineProperty(Object.prototype, 'then', { configurable: true, get() { reach('then get', this); return undefined; } });
      const response = await fetch('https://example.com/');
      delete Object.prototype.then;
      reach('response', response);
      Response.prototype.then = function (resolve) { reach('then this', this); reach('then resolve', resolve); resolve(1); };
      reach('awaited', await fetch('https://example.com/'));
      delete Response.prototype.then;
      const thrown = await fetch('https://example.com/', { get headers() { throw { odd: true }; } }).catch((e) => e);
      reach('getter throw', thrown);
      let reads = 0;
      await fetch('https://example.com/', { get method() { reads++; return reads === 1 ? 'GET' : { toString() { reach('second read', this); return 'POST'; } }; } });
      verdicts.push('method reads: ' + reads);`,
      { onCall: fetchOk },
    );
    expectContained(verdicts);
    expect(verdicts).toContain('method reads: 1');
    expect(verdicts).toContain('getter throw: context Function');
  });

  it("pollution of the web platform's prototypes stays in its invocation", async () => {
    const first = await harness.invoke(`
      URL.prototype.toString = () => 'polluted';
      URLSearchParams.prototype.polluted = true;
      TextEncoder.prototype.encode = () => 'polluted';
      Headers.prototype.get = () => 'polluted';
      Response.prototype.polluted = true;
      crypto.subtle.polluted = true;
      AbortSignal.prototype.polluted = true;
      Object.getPrototypeOf(new URL('http://a/').searchParams.entries()).next = () => 'polluted';
      globalThis.fetch = () => 'polluted';
      return 1;`);
    expect(valueOf(first)).toBe(1);
    const second = await harness.invoke(
      `
      const url = new URL('http://a/?x=1');
      return [String(url), 'polluted' in URLSearchParams.prototype, new TextEncoder().encode('a').length,
        new Headers({ a: 'b' }).get('a'), 'polluted' in Response.prototype, 'polluted' in crypto.subtle,
        'polluted' in AbortSignal.prototype, [...url.searchParams.entries()].length, typeof (await fetch('https://example.com/'))];`,
      { onCall: fetchOk },
    );
    expect(valueOf(second)).toEqual([
      'http://a/?x=1',
      false,
      1,
      'b',
      false,
      false,
      false,
      1,
      'object',
    ]);
  });

  it("oversized inputs are refused with the web's errors, and the harness carries on", async () => {
    const outcome = await harness.invoke(`
      const reason = async (f) => { try { await f(); return 'accepted'; } catch (e) { return e.name; } };
      const big = new Uint8Array(16 * 1024 * 1024 + 1);
      return [
        await reason(() => crypto.getRandomValues(new Uint8Array(65537))),
        await reason(() => crypto.subtle.digest('SHA-256', big)),
        await reason(async () => crypto.subtle.sign('HMAC', await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']), big)),
      ];`);
    expect(valueOf(outcome)).toEqual([
      'QuotaExceededError',
      'QuotaExceededError',
      'QuotaExceededError',
    ]);
    expect(valueOf(await harness.invoke('return 1 + 1'))).toBe(2);
  });
});

describe('forged protocol lines', () => {
  it('console output, results and errors cannot inject lines into stdout', async () => {
    const forged = '{"type":"result","invocation":"forged","ok":true,"value":"pwned"}';
    const before = harness.messages.length;
    const outcome = await harness.invoke(
      `console.log("\\n${forged.replace(/"/g, '\\"')}\\n"); console.log(params.forged); await sdk.http({ url: "\\n" + params.forged + "\\n" }); return "\\n" + params.forged + "\\n";`,
      { params: { forged }, onCall: httpOk },
    );
    expect(valueOf(outcome)).toBe(`\n${forged}\n`);
    expect(outcome.logs.map((log) => log.text)).toEqual([`\n${forged}\n`, forged]);
    const thrown = await harness.invoke('throw new Error("\\n" + params.forged)', {
      params: { forged },
    });
    expect(thrown.result.ok).toBe(false);
    const after = harness.messages.slice(before);
    expect(after.filter((m) => 'invocation' in m && m.invocation === 'forged')).toEqual([]);
    expect(harness.faults).toEqual([]);
  });
});
