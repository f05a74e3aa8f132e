/**
 * The tool realm's Headers and structuredClone against Node's own, on
 * generated inputs (see test/support/realm-oracle.ts): same state after
 * every step, or the same class of error.
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

const validHeaderName = fc.oneof(
  fc.constantFrom(
    'Content-Type',
    'content-type',
    'X-A',
    'x-a',
    'Set-Cookie',
    'set-cookie',
    'Accept',
    'a',
    'Z',
    "!#$%&'*+-.^_`|~",
  ),
  fc.stringMatching(/^[A-Za-z0-9-]{1,6}$/),
);
/** Not tokens: every one must be refused. */
const invalidHeaderName = fc.constantFrom(
  '',
  ' ',
  'a b',
  'a:',
  'é',
  '(x)',
  'a\n',
  '\0',
  'a/b',
  '"q"',
  '\u0100',
);
const validHeaderValue = fc.oneof(
  fc.string({ maxLength: 8 }),
  // HTTP whitespace around a value is trimmed; tab and space inside stay.
  fc
    .tuple(
      fc.constantFrom('', ' ', '\t', ' \r\n', '\n'),
      fc.stringMatching(/^[a-z =;,\t]{0,6}$/),
      fc.constantFrom('', ' ', '\t\t', '\r\n', '\r'),
    )
    .map((parts) => parts.join('')),
  fc.constantFrom('é', 'ÿ', '\u000b', '\u00a0x\u00a0', '\u0001'),
);
/** NUL, CR or LF inside a value, or a character above U+00FF: every one must be refused. */
const invalidHeaderValue = fc.constantFrom('a\0b', 'a\rb', 'a\nb', '\u0100', '😀');
const headerName = fc.oneof(
  { weight: 6, arbitrary: validHeaderName },
  { weight: 1, arbitrary: invalidHeaderName },
);
const headerValue = fc.oneof(
  { weight: 6, arbitrary: validHeaderValue },
  { weight: 1, arbitrary: invalidHeaderValue },
);

describe('Headers', () => {
  it('appends, sets, deletes and reads with valid and invalid names and values as Node does', async () => {
    const operation = fc.oneof(
      fc.tuple(fc.constantFrom('append', 'set'), headerName, headerValue),
      fc.tuple(fc.constantFrom('delete', 'get', 'has'), headerName, fc.constant('')),
      fc.tuple(fc.constant('getSetCookie'), fc.constant(''), fc.constant('')),
    );
    const probe = `({ init, operations }) => {
      const made = attempt(() => new Headers(init));
      if ('threw' in made) return made;
      const headers = new Headers(init);
      const steps = [];
      for (const [name, key, value] of operations) {
        steps.push(attempt(() => name === 'getSetCookie' ? headers.getSetCookie() : headers[name](key, value)));
      }
      const forEachSeen = [];
      headers.forEach((value, key) => forEachSeen.push([key, value]));
      return [steps, [...headers], [...headers.keys()], [...headers.values()], forEachSeen];
    }`;
    const init = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.array(fc.tuple(validHeaderName, validHeaderValue), { maxLength: 4 }),
      },
      { weight: 1, arbitrary: fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.dictionary(headerName, headerValue, { maxKeys: 4 }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({ init, operations: fc.array(operation, { maxLength: 8 }) }),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * A recipe of a value to clone, as JSON: the probe builds it in its own realm.
 * `ref` points at an object made earlier (by its order of creation), so
 * recipes share objects and make cycles.
 */
type Recipe =
  | { t: 'json'; v: null | boolean | number | string }
  | { t: 'number'; v: 'NaN' | '-0' | 'Infinity' | '-Infinity' }
  | { t: 'undefined' | 'function' | 'symbol' | 'weakmap' | 'promise' }
  | { t: 'bigint'; v: string }
  | { t: 'wrapper'; v: boolean | number | string }
  | { t: 'date'; v: number | null }
  | { t: 'regexp'; source: string; flags: string; lastIndex: number }
  | { t: 'error'; name: string; message: string }
  | { t: 'buffer'; bytes: number[] }
  | { t: 'view'; kind: string; bytes: number[]; offset: number; shareWith: number | null }
  | { t: 'array' | 'set'; items: Recipe[] }
  | { t: 'object'; props: [string, Recipe][] }
  | { t: 'map'; entries: [Recipe, Recipe][] }
  | { t: 'ref'; to: number };

const leafRecipe: fc.Arbitrary<Recipe> = fc.oneof(
  fc
    .oneof(
      fc.constant(null),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ maxLength: 6 }),
    )
    .map((v) => ({ t: 'json' as const, v })),
  fc.constantFrom('NaN', '-0', 'Infinity', '-Infinity').map((v) => ({ t: 'number' as const, v })),
  fc.constant({ t: 'undefined' as const }),
  fc
    .bigInt({ min: -(2n ** 70n), max: 2n ** 70n })
    .map((v) => ({ t: 'bigint' as const, v: v.toString() })),
  fc
    .oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }))
    .map((v) => ({ t: 'wrapper' as const, v })),
  fc
    .oneof(fc.constant(null), fc.integer({ min: -8.64e15, max: 8.64e15 }))
    .map((v) => ({ t: 'date' as const, v })),
  fc.record({
    t: fc.constant('regexp' as const),
    source: fc.constantFrom('a+', '^x$', '[\\u0100-\\uffff]', '(?<n>.)\\k<n>', '', '\\/'),
    flags: fc.constantFrom('', 'g', 'gimsuy', 'd', 'v'),
    lastIndex: fc.nat(3),
  }),
  fc.record({
    t: fc.constant('error' as const),
    name: fc.constantFrom(
      'Error',
      'TypeError',
      'RangeError',
      'SyntaxError',
      'ReferenceError',
      'EvalError',
      'URIError',
      'Custom',
    ),
    message: fc.string({ maxLength: 6 }),
  }),
  fc.record({ t: fc.constant('buffer' as const), bytes: fc.array(fc.nat(255), { maxLength: 8 }) }),
  fc.record({
    t: fc.constant('view' as const),
    kind: fc.constantFrom(
      'Uint8Array',
      'Int8Array',
      'Uint8ClampedArray',
      'Int16Array',
      'Uint16Array',
      'Int32Array',
      'Uint32Array',
      'Float32Array',
      'Float64Array',
      'BigInt64Array',
      'BigUint64Array',
      'DataView',
    ),
    bytes: fc.array(fc.nat(255), { minLength: 0, maxLength: 24 }),
    offset: fc.nat(8),
    shareWith: fc.oneof(fc.constant(null), fc.nat(6)),
  }),
  fc.nat(8).map((to) => ({ t: 'ref' as const, to })),
);
const { recipe } = fc.letrec<{ recipe: Recipe }>((tie) => ({
  recipe: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafRecipe,
    fc.record({
      t: fc.constant('array' as const),
      items: fc.array(tie('recipe'), { maxLength: 4 }),
    }),
    fc.record({ t: fc.constant('set' as const), items: fc.array(tie('recipe'), { maxLength: 3 }) }),
    fc.record({
      t: fc.constant('object' as const),
      props: fc.array(
        fc.tuple(
          fc.constantFrom('a', 'b', '0', '1', '__proto__', 'constructor', 'x y', ''),
          tie('recipe'),
        ),
        { maxLength: 4 },
      ),
    }),
    fc.record({
      t: fc.constant('map' as const),
      entries: fc.array(fc.tuple(tie('recipe'), tie('recipe')), { maxLength: 3 }),
    }),
  ),
}));

/**
 * Builds a recipe (in whichever realm runs it) and describes a value as data:
 * every object once, by its order of first visit, later visits as `{ref}`, so
 * sharing and cycles are compared too.
 */
const BUILD_AND_DESCRIBE = `
  const build = (recipe) => {
    const made = [];
    const remember = (value) => { made.push(value); return value; };
    const make = (r) => {
      switch (r.t) {
        case 'json': return r.v;
        case 'number': return Number(r.v);
        case 'undefined': return undefined;
        case 'bigint': return BigInt(r.v);
        case 'wrapper': return remember(Object(r.v));
        case 'date': return remember(new Date(r.v === null ? NaN : r.v));
        case 'regexp': { const re = new RegExp(r.source, r.flags); re.lastIndex = r.lastIndex; return remember(re); }
        case 'error': {
          const Ctor = globalThis[r.name];
          const error = typeof Ctor === 'function' ? new Ctor(r.message) : Object.assign(new Error(r.message), { name: r.name });
          return remember(error);
        }
        case 'buffer': return remember(new Uint8Array(r.bytes).buffer);
        case 'view': {
          const shared = r.shareWith === null ? undefined : made.filter((m) => m instanceof ArrayBuffer)[r.shareWith];
          const buffer = shared !== undefined ? shared : new Uint8Array(r.bytes).buffer;
          const Ctor = globalThis[r.kind];
          const size = Ctor.BYTES_PER_ELEMENT || 1;
          const offset = Math.min(r.offset - (r.offset % size), buffer.byteLength - (buffer.byteLength % size));
          const length = Math.floor((buffer.byteLength - offset) / size);
          if (shared === undefined) remember(buffer);
          return remember(r.kind === 'DataView' ? new DataView(buffer, offset, length) : new Ctor(buffer, offset, length));
        }
        case 'array': { const array = remember([]); for (const item of r.items) array.push(make(item)); return array; }
        case 'set': { const set = remember(new Set()); for (const item of r.items) set.add(make(item)); return set; }
        case 'object': {
          const object = remember({});
          for (const [key, value] of r.props) Object.defineProperty(object, key, { value: make(value), enumerable: true, writable: true, configurable: true });
          return object;
        }
        case 'map': { const map = remember(new Map()); for (const [key, value] of r.entries) map.set(make(key), make(value)); return map; }
        case 'ref': return made.length === 0 ? null : made[r.to % made.length];
        case 'function': return () => 1;
        case 'symbol': return Symbol('s');
        case 'weakmap': return new WeakMap();
        case 'promise': return Promise.resolve(1);
      }
      throw new Error('unknown recipe ' + r.t);
    };
    return make(recipe);
  };
  const describe = (root) => {
    const seen = new Map();
    const number = (n) => (Object.is(n, -0) ? '-0' : String(n));
    const walk = (v) => {
      if (v === undefined) return ['undefined'];
      if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
      if (typeof v === 'number') return ['number', number(v)];
      if (typeof v === 'bigint') return ['bigint', String(v)];
      if (typeof v !== 'object') return ['unexpected', typeof v];
      if (seen.has(v)) return ['ref', seen.get(v)];
      seen.set(v, seen.size);
      const tag = Object.prototype.toString.call(v).slice(8, -1);
      if (Array.isArray(v)) return ['Array', v.length, Object.keys(v).map((k) => [k, walk(v[k])])];
      if (v instanceof Date) return ['Date', number(v.getTime())];
      if (v instanceof RegExp) return ['RegExp', v.source, v.flags, v.lastIndex];
      if (v instanceof Error) return ['Error', Object.getPrototypeOf(v).constructor.name, v.name, v.message, Object.keys(v)];
      if (v instanceof ArrayBuffer) return ['ArrayBuffer', Array.from(new Uint8Array(v))];
      if (ArrayBuffer.isView(v)) return [tag, walk(v.buffer), v.byteOffset, v.byteLength];
      if (v instanceof Map) return ['Map', [...v].map(([key, value]) => [walk(key), walk(value)])];
      if (v instanceof Set) return ['Set', [...v].map(walk)];
      if (tag === 'Boolean' || tag === 'Number' || tag === 'String' || tag === 'BigInt') return [tag, walk(v.valueOf())];
      const proto = Object.getPrototypeOf(v);
      return ['Object', proto === Object.prototype ? 'Object.prototype' : String(proto), Object.keys(v).map((k) => [k, walk(v[k])])];
    };
    return walk(root);
  };
`;

describe('structuredClone', () => {
  it('copies JSON-like values, dates, maps, sets, regexps, errors, buffers, views, sharing and cycles as Node does', async () => {
    const probe = `(recipe) => {
      ${BUILD_AND_DESCRIBE}
      const value = build(recipe);
      const clone = attempt(() => structuredClone(value));
      if ('threw' in clone) return clone;
      const copy = clone.value;
      const fresh = copy === null || typeof copy !== 'object' || copy !== value;
      return [fresh, describe(copy)];
    }`;
    await fc.assert(
      fc.asyncProperty(recipe, (input) => agree(probe, input)),
      { numRuns: 300 },
    );
  });

  it('refuses functions, symbols, weak maps and promises, alone or nested, as Node does', async () => {
    const uncloneable = fc
      .constantFrom('function', 'symbol', 'weakmap', 'promise')
      .map((t) => ({ t }) as Recipe);
    const nested = fc
      .tuple(uncloneable, fc.constantFrom('array', 'object', 'map', 'set'))
      .map(([inner, outer]): Recipe => {
        if (outer === 'object') return { t: 'object', props: [['a', inner]] };
        if (outer === 'map') return { t: 'map', entries: [[{ t: 'json', v: 1 }, inner]] };
        return { t: outer as 'array' | 'set', items: [inner] };
      });
    const probe = `(recipe) => {
      ${BUILD_AND_DESCRIBE}
      return attempt(() => describe(structuredClone(build(recipe))));
    }`;
    await fc.assert(
      fc.asyncProperty(fc.oneof(uncloneable, nested), (input) => agree(probe, input)),
      { numRuns: 50 },
    );
  });
});
