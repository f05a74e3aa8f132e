/**
 * The web platform of tool code (docs/tool-code.md, "The web platform") in the real runner image, in real
 * containers: every global works, gives what Node's own implementation (or
 * the standard's test vectors) gives, and fetch goes through a real broker to
 * a real loopback HTTP server — including the webhook of the seed, signed
 * with HMAC-SHA256 by crypto.subtle.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy, type Broker } from '../../control-plane/broker/index.js';
import type { BrokerOperation } from '../../src/protocol/index.js';
import type { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import type { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import type { InvokeHooks } from '../../control-plane/sandbox/invocation.js';
import { brokerWithDefaults } from '../broker/broker-with-defaults.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import {
  TEST_LIMITS,
  dockerManager,
  hooks,
  runnerImage,
  runtime,
  uniquePlaneName,
} from '../sandbox/docker-helpers.js';

const WEBHOOK_SECRET = 'whsec-test-0123456789';
const POOL = 'web-platform/tool';

let driver: DockerSandbox;
let sandbox: SandboxManager;
let broker: Broker;
let server: LoopbackServer;
/** What the webhook route received, for the assertions. */
const webhooks: { body: string; signature: string | undefined; verified: boolean }[] = [];

beforeAll(async () => {
  server = await startLoopbackServer((request, response, body) => {
    const url = new URL(request.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/json':
        response.writeHead(200, { 'content-type': 'application/json', 'x-reply': 'yes' });
        response.end(JSON.stringify({ hello: 'wörld', query: url.search }));
        return;
      case '/echo':
        response.writeHead(201, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            method: request.method,
            contentType: request.headers['content-type'] ?? null,
            custom: request.headers['x-custom'] ?? null,
            body,
          }),
        );
        return;
      case '/bytes':
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(Buffer.from([0, 1, 127, 128, 254, 255]));
        return;
      case '/missing':
        response.writeHead(404, { 'content-type': 'text/plain' }).end('no such thing');
        return;
      case '/redirect':
        response.writeHead(302, { location: '/json?after=redirect' }).end();
        return;
      case '/stall':
        return; // never answers
      case '/webhook': {
        const signature = request.headers['x-signature-256'];
        const expected = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;
        const verified = signature === expected;
        webhooks.push({
          body,
          signature: typeof signature === 'string' ? signature : undefined,
          verified,
        });
        response.writeHead(verified ? 200 : 401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ verified }));
        return;
      }
      default:
        response.writeHead(404).end();
    }
  });
  broker = brokerWithDefaults({
    // Loopback is refused by default; this test's own server is the one allowed place.
    egress: EgressPolicy.fromAllowList(['127.0.0.1/32']),
    http: { totalTimeoutMs: 3_000, maxResponseBytes: 1024 * 1024, maxRedirects: 3 },
  });
  ({ driver, sandbox } = dockerManager(await runnerImage(), uniquePlaneName('web-platform'), {
    defaults: { minWarm: 0, maxSize: 1, limits: TEST_LIMITS },
  }));
  await sandbox.start();
});

afterAll(async () => {
  await sandbox?.close();
  await driver?.close();
  await broker?.close();
  await server?.close();
});

/** Hooks whose brokered calls go to the real broker. */
function brokered(params: Record<string, unknown> = {}): InvokeHooks {
  return hooks(params, {
    onCall: (operation, args, callContext) =>
      broker.handle(operation as BrokerOperation, args, {
        signal: callContext.signal,
        server: 'web-platform',
        invocation: randomUUID(),
        egressAllow: [],
      }),
  });
}

/** Runs tool code in the container and returns its value (failing the test on a tool error). */
async function run(
  code: string,
  options: { params?: Record<string, unknown>; env?: Record<string, string> } = {},
): Promise<any> {
  const outcome = await sandbox.invoke(
    runtime(POOL, code, { env: options.env ?? {} }),
    brokered({ url: server.url, ...options.params }),
  );
  expect(outcome.error, JSON.stringify(outcome.error)).toBeUndefined();
  return outcome.value;
}

describe('the globals', () => {
  it('every one is present and made in the tool realm', async () => {
    const names = [
      'URL',
      'URLSearchParams',
      'TextEncoder',
      'TextDecoder',
      'atob',
      'btoa',
      'structuredClone',
      'DOMException',
      'Event',
      'EventTarget',
      'CustomEvent',
      'AbortController',
      'AbortSignal',
      'performance',
      'crypto',
      'Crypto',
      'CryptoKey',
      'SubtleCrypto',
      'fetch',
      'Headers',
      'Request',
      'Response',
      'Blob',
      'File',
      'FormData',
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
    const value = await run(
      `return params.names.map((name) => {
         const v = globalThis[name];
         const proto = typeof v === 'function' ? v : Object.getPrototypeOf(v);
         return [name, typeof v, proto.constructor.constructor === Function];
       });`,
      { params: { names } },
    );
    expect(value).toEqual(
      names.map((name) => [
        name,
        ['performance', 'crypto'].includes(name) ? 'object' : 'function',
        true,
      ]),
    );
  });
});

describe('URL and URLSearchParams (whatwg-url)', () => {
  it('parse, resolve, encode and edit like the URL Standard', async () => {
    const value = await run(`
      const u = new URL('../b/c?x=1#h', 'https://user@Exämple.COM:443/a/d/');
      u.searchParams.append('q', 'a b&c');
      const p = new URLSearchParams({ a: '1', b: 'é' });
      p.sort();
      let invalid;
      try { new URL('not a url'); } catch (e) { invalid = [e instanceof TypeError, e.constructor === TypeError]; }
      return {
        href: u.href, host: u.host, origin: u.origin, pathname: u.pathname,
        q: u.searchParams.get('q'), form: p.toString(), entries: [...p],
        invalid, canParse: [URL.canParse('http://x'), URL.canParse('x')],
        json: JSON.stringify({ u: new URL('http://a.test/') }),
      };`);
    expect(value).toEqual({
      href: 'https://user@xn--exmple-cua.com/a/b/c?x=1&q=a+b%26c#h',
      host: 'xn--exmple-cua.com',
      origin: 'https://xn--exmple-cua.com',
      pathname: '/a/b/c',
      q: 'a b&c',
      form: 'a=1&b=%C3%A9',
      entries: [
        ['a', '1'],
        ['b', 'é'],
      ],
      invalid: [true, true],
      canParse: [true, false],
      json: '{"u":"http://a.test/"}',
    });
  });
});

describe('TextEncoder, TextDecoder, atob and btoa', () => {
  it('UTF-8 both ways, streaming, fatal and BOM handling, other encodings', async () => {
    const value = await run(`
      const bytes = new TextEncoder().encode('hé€😀\\ud800');
      const into = new Uint8Array(4);
      const result = new TextEncoder().encodeInto('a€b', into);
      const streaming = new TextDecoder();
      const euro = new Uint8Array([0xe2, 0x82, 0xac]);
      const parts = [streaming.decode(euro.subarray(0, 1), { stream: true }), streaming.decode(euro.subarray(1, 2), { stream: true }), streaming.decode(euro.subarray(2))];
      let fatal;
      try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { fatal = e.name; }
      let label;
      try { new TextDecoder('no-such-encoding'); } catch (e) { label = e.name; }
      return {
        bytes: Array.from(bytes),
        into: [result, Array.from(into)],
        decoded: new TextDecoder().decode(bytes),
        lenient: new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82])),
        parts,
        bom: [new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])).length],
        fromBuffer: new TextDecoder().decode(new TextEncoder().encode('ok').buffer),
        latin: new TextDecoder('latin1').decode(new Uint8Array([0x80, 0x9f, 0xe9, 0x41])),
        sjis: new TextDecoder('shift_jis').decode(new Uint8Array([0x82, 0xa0])),
        encoding: new TextDecoder('  UTF8 ').encoding,
        fatal, label,
      };`);
    expect(value).toEqual({
      bytes: [...Buffer.from('hé€😀\ufffd')],
      into: [{ read: 2, written: 4 }, [0x61, 0xe2, 0x82, 0xac]],
      decoded: 'hé€😀\ufffd',
      lenient: new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82])),
      parts: ['', '', '€'],
      bom: ['A', 2],
      fromBuffer: 'ok',
      latin: '€ŸéA',
      sjis: 'あ',
      encoding: 'utf-8',
      fatal: 'TypeError',
      label: 'RangeError',
    });
  });

  it('atob and btoa follow forgiving-base64 and refuse what the web refuses', async () => {
    const value = await run(`
      const attempt = (f) => { try { return f(); } catch (e) { return [e.name, e.code, e instanceof DOMException]; } };
      return {
        basic: btoa('user:pässword'),
        binary: btoa(String.fromCharCode(0, 255)),
        decoded: atob(' dXNl\\ncjpw\\tYXNz '),
        unpadded: atob('YQ'),
        wide: attempt(() => btoa('€')),
        bad: attempt(() => atob('a')),
        badChar: attempt(() => atob('ab$=')),
      };`);
    expect(value).toEqual({
      basic: Buffer.from('user:pässword', 'latin1').toString('base64'),
      binary: 'AP8=',
      decoded: 'user:pass',
      unpadded: 'a',
      wide: ['InvalidCharacterError', 5, true],
      bad: ['InvalidCharacterError', 5, true],
      badChar: ['InvalidCharacterError', 5, true],
    });
  });
});

describe('structuredClone', () => {
  it('copies what the HTML standard copies and refuses the rest', async () => {
    const value = await run(`
      const shared = new ArrayBuffer(4);
      const original = { map: new Map([[1, { d: new Date(5) }]]), set: new Set(['a']), re: /x+/gi,
        a: new Uint8Array(shared, 0, 2), b: new Uint16Array(shared, 2, 1), err: new RangeError('boom'),
        wrapped: Object('s'), holes: [1, , 3], big: 10n };
      original.self = original;
      Object.defineProperty(original, '__proto__', { value: { injected: true }, enumerable: true });
      class Point { constructor() { this.x = 1; } get y() { return 2; } }
      const copy = structuredClone(original);
      const refuse = (v) => { try { structuredClone(v); return 'cloned'; } catch (e) { return e.name; } };
      return {
        fresh: copy !== original && copy.self === copy,
        map: copy.map.get(1).d instanceof Date && copy.map.get(1).d.getTime(),
        set: [...copy.set], re: [copy.re.source, copy.re.flags],
        sameBuffer: copy.a.buffer === copy.b.buffer && copy.a.buffer !== shared,
        err: [copy.err instanceof RangeError, copy.err.message],
        wrapped: typeof copy.wrapped, holes: [copy.holes.length, 1 in copy.holes], big: copy.big === 10n,
        proto: [Object.getPrototypeOf(copy) === Object.prototype, Object.hasOwn(copy, '__proto__'), ({}).injected === undefined],
        point: [structuredClone(new Point()) instanceof Point, JSON.stringify(structuredClone(new Point()))],
        refused: [refuse(() => 1), refuse(Symbol()), refuse(new WeakMap()), refuse(Promise.resolve()), refuse(new Headers()), refuse(new AbortController())],
        transfer: (() => { try { structuredClone(1, { transfer: [new ArrayBuffer(1)] }); return 'cloned'; } catch (e) { return e.name; } })(),
      };`);
    expect(value).toEqual({
      fresh: true,
      map: 5,
      set: ['a'],
      re: ['x+', 'gi'],
      sameBuffer: true,
      err: [true, 'boom'],
      wrapped: 'object',
      holes: [3, false],
      big: true,
      proto: [true, true, true],
      point: [false, '{"x":1}'],
      refused: [
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
      ],
      transfer: 'DataCloneError',
    });
  });
});

describe('events and cancellation', () => {
  it('AbortController, AbortSignal (abort, timeout, any), EventTarget and their events', async () => {
    const value = await run(`
      const seen = [];
      const controller = new AbortController();
      controller.signal.onabort = (e) => seen.push('onabort:' + e.type + ':' + e.isTrusted);
      controller.signal.addEventListener('abort', () => seen.push('listener'), { once: true });
      controller.signal.addEventListener('abort', () => { throw new Error('a listener failed'); });
      const combined = AbortSignal.any([controller.signal, AbortSignal.timeout(10000)]);
      controller.abort();
      controller.abort('again');
      let thrown;
      try { controller.signal.throwIfAborted(); } catch (e) { thrown = [e.name, e instanceof DOMException, e.code]; }
      const timeout = AbortSignal.timeout(5);
      const reason = await new Promise((resolve) => timeout.addEventListener('abort', () => resolve(timeout.reason.name)));
      const target = new EventTarget();
      const got = [];
      const onPing = (e) => got.push(e.detail);
      target.addEventListener('ping', onPing);
      target.addEventListener('ping', onPing);
      target.dispatchEvent(new CustomEvent('ping', { detail: 1 }));
      target.removeEventListener('ping', onPing);
      target.dispatchEvent(new CustomEvent('ping', { detail: 2 }));
      const cancelable = new Event('x', { cancelable: true });
      target.addEventListener('x', (e) => e.preventDefault());
      let constructed;
      try { new AbortSignal(); } catch (e) { constructed = e.name; }
      return { seen, aborted: controller.signal.aborted, reason: controller.signal.reason.name, thrown,
        combined: [combined.aborted, combined.reason === controller.signal.reason], timeout: reason,
        already: AbortSignal.abort('why').reason, got, dispatched: target.dispatchEvent(cancelable), constructed };`);
    expect(value).toEqual({
      seen: ['onabort:abort:true', 'listener'],
      aborted: true,
      reason: 'AbortError',
      thrown: ['AbortError', true, 20],
      combined: [true, true],
      timeout: 'TimeoutError',
      already: 'why',
      got: [1],
      dispatched: false,
      constructed: 'TypeError',
    });
  });

  it("a listener's exception is reported in the logs, not thrown", async () => {
    const outcome = await sandbox.invoke(
      runtime(
        POOL,
        `const t = new EventTarget(); t.addEventListener('e', () => { throw new Error('listener broke'); });
         return t.dispatchEvent(new Event('e'));`,
      ),
      brokered(),
    );
    expect(outcome.value).toBe(true);
    expect(outcome.logs.map((entry) => [entry.level, entry.text])).toEqual([
      ['error', 'Uncaught (in an event listener) listener broke'],
    ]);
  });
});

describe('performance and crypto', () => {
  it('performance.now counts from the invocation; randomness and UUIDs', async () => {
    const value = await run(`
      const t0 = performance.now();
      const filled = crypto.getRandomValues(new Uint32Array(64));
      const same = crypto.getRandomValues(filled) === filled;
      const ids = new Set(Array.from({ length: 50 }, () => crypto.randomUUID()));
      const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.name; } };
      return {
        now: [t0 >= 0, t0 < 2000, performance.now() >= t0],
        origin: Math.abs(performance.timeOrigin + t0 - Date.now()) < 1000,
        nonZero: filled.some((x) => x !== 0), same, unique: ids.size,
        v4: [...ids].every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
        limit: [attempt(() => crypto.getRandomValues(new Uint8Array(65536))), attempt(() => crypto.getRandomValues(new Uint8Array(65537)))],
        float: attempt(() => crypto.getRandomValues(new Float64Array(2))),
      };`);
    expect(value).toEqual({
      now: [true, true, true],
      origin: true,
      nonZero: true,
      same: true,
      unique: 50,
      v4: true,
      limit: ['ok', 'QuotaExceededError'],
      float: 'TypeMismatchError',
    });
  });

  it('crypto.subtle digests and HMAC agree with Node; keys keep their secret', async () => {
    const data = 'The quick brown fox jumps over the lazy dog';
    const value = await run(
      `
      const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
      const data = new TextEncoder().encode(params.data);
      const digests = {};
      for (const name of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) digests[name] = hex(await crypto.subtle.digest({ name }, data));
      const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('key'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      const signature = await crypto.subtle.sign('HMAC', key, data);
      const generated = await crypto.subtle.generateKey({ name: 'HMAC', hash: { name: 'SHA-512' } }, true, ['sign']);
      const raw = await crypto.subtle.exportKey('raw', generated);
      const reason = async (p) => { try { await p; return 'ok'; } catch (e) { return e.name; } };
      key.usages.push('encrypt');
      key.algorithm.hash.name = 'SHA-1';
      return {
        digests, hmac: hex(signature),
        verify: [await crypto.subtle.verify('HMAC', key, signature, data), await crypto.subtle.verify('HMAC', key, new Uint8Array(32), data)],
        key: [key.type, key.extractable, key.algorithm.name, key.algorithm.length, key instanceof CryptoKey],
        afterTampering: hex(await crypto.subtle.sign('HMAC', key, data)) === hex(signature),
        generated: [raw.byteLength, generated.algorithm.length],
        errors: [
          await reason(crypto.subtle.exportKey('raw', key)),
          await reason(crypto.subtle.digest('MD5', data)),
          await reason(crypto.subtle.encrypt({ name: 'AES-GCM' }, key, data)),
          await reason(crypto.subtle.verify('HMAC', generated, signature, data)),
          await reason(crypto.subtle.importKey('raw', new Uint8Array(0), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])),
          await reason(crypto.subtle.importKey('raw', data, { name: 'HMAC', hash: 'SHA-256' }, false, [])),
        ],
      };`,
      { params: { data } },
    );
    const digest = (algorithm: string): string => createHash(algorithm).update(data).digest('hex');
    expect(value).toEqual({
      digests: {
        'SHA-1': digest('sha1'),
        'SHA-256': digest('sha256'),
        'SHA-384': digest('sha384'),
        'SHA-512': digest('sha512'),
      },
      hmac: createHmac('sha256', 'key').update(data).digest('hex'),
      verify: [true, false],
      key: ['secret', false, 'HMAC', 24, true],
      afterTampering: true,
      generated: [128, 1024],
      errors: [
        'InvalidAccessError',
        'NotSupportedError',
        'NotSupportedError',
        'InvalidAccessError',
        'DataError',
        'SyntaxError',
      ],
    });
  });
});

describe('fetch through the broker', () => {
  it('GET: status, headers and a JSON body; a Response is not a thenable', async () => {
    const value = await run(`
      const response = await fetch(new URL('/json?a=1', params.url));
      const headers = [];
      response.headers.forEach((v, k) => headers.push(k));
      const body = await response.json();
      let second;
      try { await response.text(); } catch (e) { second = e.name; }
      let immutable;
      try { response.headers.set('x', 'y'); } catch (e) { immutable = e.name; }
      return { status: response.status, ok: response.ok, statusText: response.statusText, url: response.url,
        type: response.headers.get('Content-Type'), has: response.headers.has('X-REPLY'),
        entries: [...response.headers.entries()].some(([k, v]) => k === 'x-reply' && v === 'yes'),
        sorted: headers.join(',') === [...headers].sort().join(','), body, bodyUsed: response.bodyUsed, second, immutable,
        thenable: 'then' in response, instance: response instanceof Response && response.headers instanceof Headers };`);
    expect(value).toEqual({
      status: 200,
      ok: true,
      statusText: '',
      url: `${server.url}/json?a=1`,
      type: 'application/json',
      has: true,
      entries: true,
      sorted: true,
      body: { hello: 'wörld', query: '?a=1' },
      bodyUsed: true,
      second: 'TypeError',
      immutable: 'TypeError',
      thenable: false,
      instance: true,
    });
  });

  it('POST bodies: a string, URLSearchParams and bytes, with their content types', async () => {
    const value = await run(`
      const send = async (body, headers) => (await fetch(params.url + '/echo', { method: 'post', body, headers })).json();
      return [
        await send('plain text'),
        await send(new URLSearchParams({ q: 'a b', r: 'é' })),
        await send(new TextEncoder().encode('bytes'), new Headers({ 'Content-Type': 'application/octet-stream', 'X-Custom': 'yes' })),
        await send(JSON.stringify({ a: 1 }), [['content-type', 'application/json']]),
      ];`);
    expect(value).toEqual([
      { method: 'POST', contentType: 'text/plain;charset=UTF-8', custom: null, body: 'plain text' },
      {
        method: 'POST',
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        custom: null,
        body: 'q=a+b&r=%C3%A9',
      },
      { method: 'POST', contentType: 'application/octet-stream', custom: 'yes', body: 'bytes' },
      { method: 'POST', contentType: 'application/json', custom: null, body: '{"a":1}' },
    ]);
  });

  it('POST bodies: a Blob with its type, a FormData as multipart/form-data; blob() and formData()', async () => {
    const value = await run(`
      const send = async (body) => (await fetch(params.url + '/echo', { method: 'POST', body })).json();
      const form = new FormData();
      form.append('name', 'a "quoted"\\nline');
      form.append('file', new Blob(['file text'], { type: 'text/plain' }), 'notes.txt');
      const fetched = await fetch(params.url + '/bytes');
      const blob = await fetched.blob();
      const echo = await send(form);
      const back = await new Response(echo.body, { headers: { 'content-type': echo.contentType } }).formData();
      return {
        blob: await send(new Blob(['blob ', new Uint8Array([98, 111, 100, 121])], { type: 'Text/Custom' })),
        untyped: await send(new Blob(['x'])),
        form: echo,
        fetchedBlob: [blob.type, blob.size, Array.from(await blob.bytes())],
        echoedForm: [...back].map(([name, value]) =>
          [name, typeof value === 'string' ? value : [value.name, value.type, value.size]]),
      };`);
    expect(value.blob).toEqual({
      method: 'POST',
      contentType: 'text/custom',
      custom: null,
      body: 'blob body',
    });
    expect(value.untyped.contentType).toBeNull();
    expect(value.form.contentType).toMatch(
      /^multipart\/form-data; boundary=----mcphost-formdata-[0-9a-f]{24}$/,
    );
    const parsed = await new Response(value.form.body, {
      headers: { 'content-type': value.form.contentType },
    }).formData();
    expect(parsed.get('name')).toBe('a "quoted"\r\nline');
    const file = parsed.get('file') as File;
    expect([file.name, file.type, await file.text()]).toEqual([
      'notes.txt',
      'text/plain',
      'file text',
    ]);
    expect(value.fetchedBlob).toEqual(['application/octet-stream', 6, [0, 1, 127, 128, 254, 255]]);
    expect(value.echoedForm).toEqual([
      ['name', 'a "quoted"\r\nline'],
      ['file', ['notes.txt', 'text/plain', 9]],
    ]);
  });

  it('arrayBuffer gives the exact bytes; errors, redirects and refusals', async () => {
    const value = await run(`
      const bytes = Array.from(new Uint8Array(await (await fetch(params.url + '/bytes')).arrayBuffer()));
      const missing = await fetch(params.url + '/missing');
      const redirected = await fetch(params.url + '/redirect');
      const failure = async (p) => { try { await p; return 'resolved'; } catch (e) { return [e.name, e.code ?? null, e instanceof TypeError]; } };
      return {
        bytes, missing: [missing.status, missing.ok, await missing.text()],
        redirected: (await redirected.json()).query,
        after: [redirected.redirected, redirected.url.endsWith('/json?after=redirect'), missing.redirected, missing.url.endsWith('/missing')],
        denied: await failure(fetch('http://127.0.0.2:9/')),
        invalid: await failure(fetch('not a url')),
        getBody: await failure(fetch(params.url, { body: 'x' })),
        objectBody: await failure(fetch(params.url, { method: 'POST', body: { a: 1 } })),
        manual: await failure(fetch(params.url, { redirect: 'manual' })),
      };`);
    expect(value).toEqual({
      bytes: [0, 1, 127, 128, 254, 255],
      missing: [404, false, 'no such thing'],
      redirected: '?after=redirect',
      after: [true, true, false, true],
      denied: ['TypeError', 'ERR_EGRESS_DENIED', true],
      invalid: ['TypeError', 'ERR_INVALID_ARGUMENT', true],
      getBody: ['TypeError', null, true],
      objectBody: ['TypeError', null, true],
      manual: ['TypeError', null, true],
    });
  });

  it('a fetched body read from its stream, whole or by a BYOB reader, through a TransformStream', async () => {
    const value = await run(`
      const chunks = async (stream) => {
        const reader = stream.getReader();
        const out = [];
        for (;;) { const { done, value } = await reader.read(); if (done) return out; out.push(...value); }
      };
      const streamed = await fetch(params.url + '/bytes');
      const before = [streamed.bodyUsed, streamed.body.locked];
      const bytes = await chunks(streamed.body);
      const after = [streamed.bodyUsed, await streamed.text().then(() => 'read twice', (e) => e.name)];
      const byob = (await fetch(params.url + '/bytes')).body.getReader({ mode: 'byob' });
      const first = await byob.read(new Uint8Array(4));
      const upper = (await fetch(params.url + '/json')).body
        .pipeThrough(new TransformStream({ transform(chunk, controller) { controller.enqueue(new TextDecoder().decode(chunk).toUpperCase()); } }));
      let text = '';
      for await (const part of upper) text += part;
      return { before, bytes, after, byob: Array.from(first.value), json: text.startsWith('{') && text === text.toUpperCase() };`);
    expect(value).toEqual({
      before: [false, false],
      bytes: [0, 1, 127, 128, 254, 255],
      after: [true, 'TypeError'],
      byob: [0, 1, 127, 128],
      json: true,
    });
  });

  it('fetch(new Request(…)) sends the Request’s method, headers and body; init overrides them', async () => {
    const value = await run(`
      const echo = async (input, init) => (await fetch(input, init)).json();
      const request = new Request(params.url + '/echo', { method: 'post', headers: { 'X-Custom': 'from-request' }, body: 'request body' });
      const sent = await echo(request);
      const used = request.bodyUsed;
      const again = await fetch(request).then(() => 'resolved', (e) => e.name);
      const bytes = new Request(new URL('/echo', params.url), {
        method: 'PUT', body: new TextEncoder().encode('bytes'), headers: [['Content-Type', 'application/octet-stream']],
      });
      const overridden = await echo(bytes, { method: 'PATCH', headers: { 'X-Custom': 'from-init' } });
      const wrapped = await echo(new Request(new Request(params.url + '/echo', { method: 'DELETE', headers: { 'X-Custom': 'kept' } })));
      const form = await echo(new Request(params.url + '/echo', { method: 'POST', body: new URLSearchParams({ a: 'b c' }) }));
      return { sent, used, again, overridden, wrapped, form, request: [request.method, request.url, request.headers.get('content-type')] };`);
    expect(value).toEqual({
      sent: {
        method: 'POST',
        contentType: 'text/plain;charset=UTF-8',
        custom: 'from-request',
        body: 'request body',
      },
      used: true,
      again: 'TypeError',
      // init's headers replace the Request's; the body (and no content-type) comes from the Request.
      overridden: { method: 'PATCH', contentType: null, custom: 'from-init', body: 'bytes' },
      wrapped: { method: 'DELETE', contentType: null, custom: 'kept', body: '' },
      form: {
        method: 'POST',
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        custom: null,
        body: 'a=b+c',
      },
      request: ['POST', `${server.url}/echo`, 'text/plain;charset=UTF-8'],
    });
  });

  it('a signal aborts a fetch the server never answers', async () => {
    const value = await run(`
      const controller = new AbortController();
      const pending = fetch(params.url + '/stall', { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const outcome = async (p) => { try { await p; return 'resolved'; } catch (e) { return e.name; } };
      const started = Date.now();
      return {
        aborted: await outcome(pending),
        timedOut: await outcome(fetch(params.url + '/stall', { signal: AbortSignal.timeout(50) })),
        early: await outcome(fetch(params.url + '/json', { signal: AbortSignal.abort() })),
        quick: Date.now() - started < 2000,
      };`);
    expect(value).toEqual({
      aborted: 'AbortError',
      timedOut: 'TimeoutError',
      early: 'AbortError',
      quick: true,
    });
  });

  it('init is read once, field by field', async () => {
    const value = await run(`
      const reads = {};
      const init = {};
      for (const key of ['method', 'headers', 'body', 'signal', 'redirect']) {
        Object.defineProperty(init, key, { get() { reads[key] = (reads[key] ?? 0) + 1; return key === 'method' ? (reads[key] === 1 ? 'POST' : 'GET') : key === 'body' ? 'once' : undefined; } });
      }
      const echoed = await (await fetch(params.url + '/echo', init)).json();
      return { reads, method: echoed.method, body: echoed.body };`);
    expect(value).toEqual({
      reads: { method: 1, headers: 1, body: 1, signal: 1, redirect: 1 },
      method: 'POST',
      body: 'once',
    });
  });

  it('Response and Headers made by tool code', async () => {
    const value = await run(`
      const made = new Response('héllo', { status: 201, headers: { 'X-A': '1' } });
      const copy = made.clone();
      const json = Response.json({ a: 1 });
      const h = new Headers([['Set-Cookie', 'a=1'], ['set-cookie', 'b=2'], ['Accept', 'x']]);
      h.append('accept', 'y');
      return { status: made.status, type: made.headers.get('content-type'), text: await made.text(),
        copy: Array.from(new Uint8Array(await copy.arrayBuffer())).length, json: [json.headers.get('content-type'), await json.json()],
        accept: h.get('ACCEPT'), cookies: h.getSetCookie(), keys: [...h.keys()] };`);
    expect(value).toEqual({
      status: 201,
      type: 'text/plain;charset=UTF-8',
      text: 'héllo',
      copy: 6,
      json: ['application/json', { a: 1 }],
      accept: 'x, y',
      cookies: ['a=1', 'b=2'],
      keys: ['accept', 'set-cookie', 'set-cookie'],
    });
  });

  it('the seed webhook, signed with HMAC-SHA256 (crypto.subtle) and sent with fetch', async () => {
    webhooks.length = 0;
    const value = await run(
      `
      const body = JSON.stringify({ event: params.event, data: params.data, timestamp: new Date().toISOString() });
      const encoder = new TextEncoder();
      const key = await crypto.subtle.importKey('raw', encoder.encode(env.WEBHOOK_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(body));
      const signature = 'sha256=' + Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
      const response = await fetch(params.url + '/webhook', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Signature-256': signature, 'X-Delivery': crypto.randomUUID() },
        body,
      });
      return { status: response.status, answer: await response.json(), signature };`,
      { params: { event: 'order.paid', data: { id: 42 } }, env: { WEBHOOK_SECRET } },
    );
    expect(webhooks).toHaveLength(1);
    const received = webhooks[0]!;
    expect(received.verified).toBe(true);
    expect(JSON.parse(received.body)).toMatchObject({ event: 'order.paid', data: { id: 42 } });
    expect(value).toEqual({
      status: 200,
      answer: { verified: true },
      signature: `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(received.body).digest('hex')}`,
    });
  });
});
