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
      Error.prepareStackTrace = (error, sites) => {
        for (const site of sites) {
          reach('site', site);
          reach('site this', site.getThis());
          reach('site function', site.getFunction());
        }
        return 'stack';
      };
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
