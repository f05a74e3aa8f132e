/**
 * The tool realm's Request against Node's own, on generated inputs (see
 * test/support/realm-oracle.ts): the same attributes, headers and body after
 * construction from a URL or from another Request, the same outcomes of
 * reading, cloning and re-wrapping a body, the same signals, or the same
 * class of error. Node's Request has a `body` stream and blob()/formData();
 * the realm has neither (bodies are whole values), so no probe reads them.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolRealm, bothOutcomes, expectAgreement } from '../support/realm-oracle.js';

let realm: ToolRealm;
beforeAll(async () => {
  realm = await ToolRealm.open();
});

const agree = (probe: string, input: unknown): Promise<void> =>
  expectAgreement(realm, probe, input);

/**
 * Helpers of the probes, in both realms: `makeBody` and `makeInit` build a
 * body and a RequestInit from a JSON recipe; `view` gives every attribute of
 * a Request as data; `read` reads a body and gives the outcome.
 */
const BUILD = `
  const makeBody = (recipe) => {
    switch (recipe.kind) {
      case 'null': return null;
      case 'string': return recipe.text;
      case 'form': return new URLSearchParams(recipe.text);
      case 'bytes': return new Uint8Array(recipe.bytes);
      case 'buffer': return new Uint8Array(recipe.bytes).buffer;
      case 'dataview': return new DataView(new Uint8Array(recipe.bytes).buffer);
      default: return undefined;
    }
  };
  const makeSignal = (recipe) => {
    if (recipe === 'null') return null;
    if (recipe === 'aborted') return AbortSignal.abort('early');
    if (recipe === 'live') return new AbortController().signal;
    return { aborted: false };
  };
  const makeInit = (recipe) => {
    if (recipe === null) return undefined;
    const init = {};
    for (const key of Object.keys(recipe)) {
      if (key === 'body') init.body = makeBody(recipe.body);
      else if (key === 'signal') init.signal = makeSignal(recipe.signal);
      else init[key] = recipe[key];
    }
    return init;
  };
  const view = (request) => ({
    method: request.method, url: request.url, headers: [...request.headers],
    destination: request.destination, referrer: request.referrer, referrerPolicy: request.referrerPolicy,
    mode: request.mode, credentials: request.credentials, cache: request.cache, redirect: request.redirect,
    integrity: request.integrity, keepalive: request.keepalive, duplex: request.duplex,
    isReloadNavigation: request.isReloadNavigation, isHistoryNavigation: request.isHistoryNavigation,
    signal: [request.signal instanceof AbortSignal, request.signal.aborted, String(request.signal.reason)],
    bodyUsed: request.bodyUsed, tag: Object.prototype.toString.call(request),
    classes: [request instanceof Request, request.headers instanceof Headers],
  });
  const read = async (request, how) => {
    try {
      const value = await request[how]();
      return { [how]: how === 'arrayBuffer' || how === 'bytes' ? bytes(value) : value, used: request.bodyUsed };
    } catch (error) {
      return { threw: errorName(error), used: request.bodyUsed };
    }
  };
`;

/** URLs: absolute ones to serialise, and relative, malformed and credentialed ones to refuse. */
const url = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'https://example.com',
      'https://example.com/a b?c=d é#frag',
      'HTTP://EXAMPLE.com:80/x/../y/./z',
      'https://exämple.com/',
      'http://127.0.0.1:8080/p?q',
      'https://[::1]:443/',
      'data:text/plain,hi',
      'about:blank',
      'ftp://files.example/x',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/relative',
      'relative',
      '',
      'not a url',
      'https://user:pass@example.com/',
      'https://user@example.com/',
      'https://:pass@example.com/',
    ),
  },
);
const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,7}$/);
const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS') },
  // Normalised from any case; PATCH and others are kept as written.
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('get', 'head', 'post', 'put', 'delete', 'options', 'patch'), fc.nat())
      .map(([name, seed]) =>
        [...name].map((c, i) => ((seed >> i) & 1 ? c.toUpperCase() : c)).join(''),
      ),
  },
  { weight: 1, arbitrary: token },
  // Forbidden, in any case.
  { weight: 2, arbitrary: fc.constantFrom('CONNECT', 'connect', 'TRACE', 'trace', 'Track') },
  // Not tokens.
  { weight: 1, arbitrary: fc.constantFrom('', 'a b', 'GET\n', 'é', 'M(', 'P:') },
);
const headerName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('Content-Type', 'content-type', 'X-A', 'Accept') },
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9-]{1,6}$/) },
  { weight: 1, arbitrary: fc.constantFrom('a b', '', 'é') },
);
const headerValue = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[ a-z0-9/;=,\t]{0,8}$/) },
  { weight: 1, arbitrary: fc.constantFrom('a\nb', '\u0100') },
);
const headers = fc.oneof(
  fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 }),
  fc.dictionary(headerName, headerValue, { maxKeys: 3 }),
);
const bodyRecipe = fc.oneof(
  fc.constant({ kind: 'null' }),
  fc.string({ maxLength: 8 }).map((text) => ({ kind: 'string', text })),
  fc.json({ maxDepth: 1 }).map((text) => ({ kind: 'string', text })),
  fc
    .stringMatching(/^[a-z]=[a-z é+%]{0,4}(&[a-z]=[a-z]{0,3})?$/)
    .map((text) => ({ kind: 'form', text })),
  fc
    .tuple(fc.constantFrom('bytes', 'buffer', 'dataview'), fc.array(fc.nat(255), { maxLength: 8 }))
    .map(([kind, bytes]) => ({ kind, bytes })),
);
/** Mostly one of the valid values, sometimes one to refuse. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });
/** A RequestInit: every member optional, valid values and invalid ones. */
const initRecipe = fc.record(
  {
    method,
    headers,
    body: bodyRecipe,
    signal: mostly(fc.constantFrom('null', 'aborted', 'live'), fc.constant('not a signal')),
    mode: mostly(
      fc.constantFrom('cors', 'no-cors', 'same-origin'),
      fc.constantFrom('navigate', 'CORS', 'bogus'),
    ),
    credentials: mostly(fc.constantFrom('omit', 'same-origin', 'include'), fc.constant('bogus')),
    cache: mostly(
      fc.constantFrom('default', 'no-store', 'reload', 'no-cache', 'force-cache'),
      fc.constantFrom('only-if-cached', 'bogus'),
    ),
    redirect: mostly(fc.constantFrom('follow', 'error', 'manual'), fc.constant('bogus')),
    referrer: mostly(
      fc.constantFrom(
        '',
        'about:client',
        'about:blank',
        'https://ref.example/p?q#f',
        'https://u:p@ref.example/',
      ),
      fc.constantFrom('/relative', 'not a url'),
    ),
    referrerPolicy: mostly(
      fc.constantFrom('', 'no-referrer', 'unsafe-url', 'same-origin'),
      fc.constant('bogus'),
    ),
    integrity: fc.constantFrom('', 'sha256-abc'),
    keepalive: fc.constantFrom(true, false, 0, 1, ''),
    duplex: mostly(fc.constant('half'), fc.constant('full')),
    window: mostly(fc.constant(null), fc.constant(1)),
  },
  { requiredKeys: [] },
);
/** Mostly POST with a body, so that body rules are reached often. */
const postWithBody = fc.record(
  {
    method: fc.constantFrom('POST', 'put', 'Patch'),
    headers,
    body: bodyRecipe,
    signal: fc.constantFrom('null', 'aborted', 'live'),
    referrer: fc.constantFrom('', 'https://ref.example/'),
  },
  { requiredKeys: ['method', 'body'] },
);

describe('new Request(url, init)', () => {
  it('normalises methods, serialises URLs, fills headers and defaults every attribute as Node does', async () => {
    const probe = `async ({ url, asUrl, init }) => {
      ${BUILD}
      const made = attempt(() => {
        const input = asUrl ? (() => { try { return new URL(url); } catch { return url; } })() : url;
        return new Request(input, makeInit(init));
      });
      if ('threw' in made) return made;
      const request = made.value;
      return [view(request), await read(request, 'text')];
    }`;
    let made = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          url,
          asUrl: fc.boolean(),
          init: fc.option(fc.oneof(initRecipe, postWithBody), { nil: null }),
        }),
        async (input) => {
          const outcomes = await bothOutcomes(realm, probe, input);
          expect(outcomes.realm).toEqual(outcomes.node);
          if ('value' in outcomes.node && Array.isArray(outcomes.node.value)) made++;
        },
      ),
      { numRuns: 400 },
    );
    // Refusals must not be all the property checks: most inputs make a Request.
    console.log('made', made);
    expect(made).toBeGreaterThan(150);
  });

  it('refuses what the standard refuses, by class', async () => {
    const probe = `async ({ case: which }) => {
      ${BUILD}
      const u = 'https://example.com/';
      const cases = {
        none: () => new Request(),
        init: () => new Request(u, 5),
        initString: () => new Request(u, 'x'),
        symbolUrl: () => new Request(Symbol('u')),
        symbolMethod: () => new Request(u, { method: Symbol('m') }),
        getBody: () => new Request(u, { body: 'x' }),
        headBody: () => new Request(u, { method: 'head', body: new Uint8Array(1) }),
        noCorsPut: () => new Request(u, { mode: 'no-cors', method: 'PUT' }),
        noCorsPost: () => new Request(u, { mode: 'no-cors', method: 'post' }).mode,
        onlyIfCached: () => new Request(u, { cache: 'only-if-cached', mode: 'same-origin' }).cache,
        headersBad: () => new Request(u, { headers: 5 }),
        headersNull: () => [...new Request(u, { headers: null }).headers],
        objectUrl: () => new Request({ toString: () => u + 'x' }).url,
        nullInit: () => new Request(u, null).method,
        undefinedMembers: () => view(new Request(u, { method: undefined, body: undefined, signal: undefined })),
        called: () => Request(u),
      };
      return attempt(cases[which]);
    }`;
    const cases = [
      'none',
      'init',
      'initString',
      'symbolUrl',
      'symbolMethod',
      'getBody',
      'headBody',
      'noCorsPut',
      'noCorsPost',
      'onlyIfCached',
      'headersBad',
      'headersNull',
      'objectUrl',
      'nullInit',
      'undefinedMembers',
      'called',
    ];
    for (const which of cases) await agree(probe, { case: which });
  });
});

describe('reading init', () => {
  it('reads each member once, in the order Node reads them, with fetch too', async () => {
    const probe = `async ({ throwAt, viaFetch }) => {
      const reads = [];
      const values = { method: 'POST', body: 'x', mode: 'cors', referrer: '', signal: null, window: null, duplex: 'half' };
      const init = {};
      for (const key of ['method', 'headers', 'body', 'referrer', 'referrerPolicy', 'mode', 'credentials',
        'cache', 'redirect', 'integrity', 'keepalive', 'signal', 'window', 'duplex']) {
        Object.defineProperty(init, key, { get() { reads.push(key); if (key === throwAt) throw new RangeError(key); return values[key]; } });
      }
      // fetch refuses the request after reading init (a no-cors PUT), before the network.
      if (viaFetch) values.mode = 'no-cors', values.method = 'PUT';
      const outcome = viaFetch
        ? await fetch('https://example.invalid/', init).then(() => 'sent', (e) => errorName(e))
        : attempt(() => new Request('https://example.com/', init).method);
      return [reads, outcome];
    }`;
    for (const throwAt of [null, 'method', 'headers', 'body', 'mode', 'signal', 'duplex']) {
      for (const viaFetch of [false, true]) await agree(probe, { throwAt, viaFetch });
    }
  });
});

describe('new Request(request, init)', () => {
  it('takes the input Request’s members, body and signal, init overriding, as Node does', async () => {
    const probe = `async ({ first, readFirst, second }) => {
      ${BUILD}
      const made = attempt(() => new Request('https://example.com/first', makeInit(first)));
      if ('threw' in made) return ['first', made];
      const input = made.value;
      const firstRead = readFirst ? await read(input, 'text') : null;
      const outcome = attempt(() => new Request(input, makeInit(second)));
      const inputAfter = [input.bodyUsed, input.signal.aborted];
      if ('threw' in outcome) return [firstRead, outcome, inputAfter];
      const request = outcome.value;
      return [firstRead, view(request), inputAfter, await read(request, 'text'), attempt(() => input.clone().method)];
    }`;
    const nonGet = fc.oneof(postWithBody, initRecipe);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          first: nonGet,
          readFirst: fc.boolean(),
          second: fc.oneof(
            fc.constant(null),
            fc.constant({}),
            initRecipe,
            fc.record({ method: method }, { requiredKeys: [] }),
          ),
        }),
        (input) => {
          // Node 20 checks a no-cors Request's method only when init gives the mode; the
          // standard checks it always (the realm does: see the case below).
          fc.pre(
            !(
              'mode' in input.first &&
              input.first.mode === 'no-cors' &&
              input.second !== null &&
              'method' in input.second &&
              !('mode' in input.second)
            ),
          );
          return agree(probe, input);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a method a no-cors input Request cannot take, as the standard says', async () => {
    const probe = `() => attempt(() => new Request(new Request('https://example.com/', { mode: 'no-cors' }), { method: 'PUT' }))`;
    expect(await realm.run(probe, null)).toEqual({ value: { threw: 'TypeError' } });
  });
});

describe('the body', () => {
  it('reads once, with bodyUsed, clone() and re-wrapping, as Node does', async () => {
    const operation = fc.constantFrom(
      'text',
      'json',
      'arrayBuffer',
      'bytes',
      'clone',
      'wrap',
      'bodyUsed',
    );
    const probe = `async ({ init, operations }) => {
      ${BUILD}
      const made = attempt(() => new Request('https://example.com/', makeInit(init)));
      if ('threw' in made) return made;
      const request = made.value;
      const steps = [];
      for (const operation of operations) {
        if (operation === 'bodyUsed') steps.push(request.bodyUsed);
        else if (operation === 'clone' || operation === 'wrap') {
          const copy = attempt(() => operation === 'clone' ? request.clone() : new Request(request));
          if ('threw' in copy) steps.push(copy);
          else steps.push([view(copy.value), await read(copy.value, 'text'), request.bodyUsed]);
        } else steps.push(await read(request, operation));
      }
      return steps;
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          init: fc.oneof(postWithBody, fc.constant(null)),
          operations: fc.array(operation, { maxLength: 5 }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  it('sets the content-type a body implies unless headers give one', async () => {
    const probe = `async ({ body, contentType }) => {
      ${BUILD}
      const request = new Request('https://example.com/', {
        method: 'POST', body: makeBody(body), headers: contentType === null ? {} : { 'Content-Type': contentType },
      });
      return [request.headers.get('content-type'), await read(request, 'bytes')];
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ body: bodyRecipe, contentType: fc.constantFrom(null, 'x/y', '') }),
        (input) => agree(probe, input),
      ),
      { numRuns: 100 },
    );
  });

  it('refuses a body that is none of the web’s kinds (Node sends it as its string)', async () => {
    const probe = `() => attempt(() => new Request('https://example.com/', { method: 'POST', body: { a: 1 } }))`;
    expect(await realm.run(probe, null)).toEqual({ value: { threw: 'TypeError' } });
  });
});

describe('signals, brand checks and fetch’s refusals', () => {
  it('a Request’s signal follows the given one, through new Request and clone()', async () => {
    const probe = `async ({ reason }) => {
      const controller = new AbortController();
      const request = new Request('https://example.com/', { signal: controller.signal });
      const wrapped = new Request(request);
      const unfollowed = new Request(request, { signal: null });
      const cloned = request.clone();
      const before = [request.signal === controller.signal, request.signal.aborted, wrapped.signal.aborted];
      const seen = [];
      request.signal.addEventListener('abort', () => seen.push('request'));
      cloned.signal.onabort = () => seen.push('clone');
      controller.abort(reason);
      return {
        before, seen,
        after: [request, wrapped, unfollowed, cloned].map((r) => [r.signal.aborted, String(r.signal.reason)]),
        early: new Request('https://example.com/', { signal: AbortSignal.abort(reason) }).signal.reason,
      };
    }`;
    for (const reason of ['why', 'other']) await agree(probe, { reason });
  });

  it('methods and getters check their receiver', async () => {
    const probe = `async ({ member, receiver }) => {
      const request = new Request('https://example.com/', { method: 'POST', body: 'x' });
      const target = receiver === 'object' ? {} : receiver === 'response' ? new Response('x') : request;
      const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, member);
      try {
        const value = descriptor.get ? descriptor.get.call(target) : await descriptor.value.call(target);
        return { value: typeof value };
      } catch (error) {
        return { threw: errorName(error) };
      }
    }`;
    const members = [
      'method',
      'url',
      'headers',
      'signal',
      'mode',
      'referrer',
      'bodyUsed',
      'text',
      'json',
      'arrayBuffer',
      'bytes',
      'clone',
    ];
    for (const member of members) {
      for (const receiver of ['object', 'response', 'request']) {
        await agree(probe, { member, receiver });
      }
    }
    // A Response's body methods refuse a Request, too.
    await agree(
      `async () => {
        try { await Response.prototype.text.call(new Request('https://example.com/')); return 'read'; }
        catch (error) { return errorName(error); }
      }`,
      null,
    );
  });

  it('fetch(request, init) refuses before any request is made, as Node does', async () => {
    // Every case is refused before the network, in Node too: no probe reaches a server.
    const probe = `async ({ case: which }) => {
      const u = 'https://example.invalid/';
      const post = () => new Request(u, { method: 'POST', body: 'x' });
      const used = async () => { const r = post(); await r.text(); return r; };
      const cases = {
        getWithBody: async () => fetch(post(), { method: 'GET' }),
        usedBody: async () => fetch(await used()),
        badMethod: async () => fetch(post(), { method: 'TRACE' }),
        badSignal: async () => fetch(post(), { signal: {} }),
        badMode: async () => fetch(post(), { mode: 'navigate' }),
        aborted: async () => fetch(new Request(u, { signal: AbortSignal.abort() })),
        abortedInit: async () => fetch(post(), { signal: AbortSignal.abort() }),
      };
      const request = cases[which]();
      try { await request; return 'resolved'; } catch (error) { return errorName(error); }
    }`;
    for (const which of [
      'getWithBody',
      'usedBody',
      'badMethod',
      'badSignal',
      'badMode',
      'aborted',
      'abortedInit',
    ]) {
      await agree(probe, { case: which });
    }
    // fetch(request) takes the Request's body: the Request is used after it, in both.
    await agree(
      `async () => {
        const request = new Request('https://example.invalid/', { method: 'POST', body: 'x', signal: AbortSignal.abort() });
        try { await fetch(request); } catch {}
        return request.bodyUsed;
      }`,
      null,
    );
  });
});

describe('what tool code replaces', () => {
  it('URL’s getters, AbortSignal.any, Headers’ methods and JSON.parse do not change Request', async () => {
    const probe = `async () => {
      void URL, AbortSignal, Headers, Request;
      const fake = () => { throw new Error('a replaced built-in was called'); };
      Object.defineProperty(URL.prototype, 'href', { get: fake });
      Object.defineProperty(URL.prototype, 'username', { get: fake });
      AbortSignal.any = fake;
      Headers.prototype.set = fake;
      Headers.prototype.append = fake;
      JSON.parse = fake;
      const controller = new AbortController();
      const request = new Request('https://u.example/a b', {
        method: 'post', body: '{"a":1}', headers: { 'X-A': '1' }, signal: controller.signal, referrer: 'https://r.example/',
      });
      const copy = request.clone();
      controller.abort('stop');
      return [request.url, request.referrer, [...request.headers], await request.json(), copy.signal.aborted, copy.signal.reason];
    }`;
    // A realm of its own: the probe spoils the built-ins of the one it runs in.
    const spoiled = await ToolRealm.open();
    expect(await spoiled.run(probe, null)).toEqual({
      value: [
        'https://u.example/a%20b',
        'https://r.example/',
        [
          ['content-type', 'text/plain;charset=UTF-8'],
          ['x-a', '1'],
        ],
        { a: 1 },
        true,
        'stop',
      ],
    });
  });
});
