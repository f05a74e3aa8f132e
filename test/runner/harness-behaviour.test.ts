import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { errorOf, HarnessClient, valueOf, type CallHandler } from './harness-client.js';

let harnessPath: string;
let harness: HarnessClient;

beforeAll(async () => {
  ({ harnessPath } = await buildHarness());
  harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
});

afterAll(async () => {
  await harness?.close();
  expect(harness.faults).toEqual([]);
});

describe('start', () => {
  it('announces ready first, with the protocol version and node version', () => {
    expect(harness.messages[0]).toEqual({ type: 'ready', protocol: 1, node: process.version });
  });

  it('relaunches itself with --experimental-vm-modules when started without it', async () => {
    const plain = await HarnessClient.start(harnessPath);
    const outcome = await plain.invoke('return typeof params');
    expect(valueOf(outcome)).toBe('object');
    await plain.close();
    expect((await plain.exited).code).toBe(0);
  });
});

describe('results', () => {
  it.each([
    ['return 42', 42],
    ['return "text"', 'text'],
    ['return true', true],
    ['return null', null],
    ['return', null],
    ['return undefined', null],
    ['return [1, "a", null]', [1, 'a', null]],
    ['return { a: { b: [1, 2] }, skipped: undefined, fn() {} }', { a: { b: [1, 2] } }],
    ['return new Date(0)', '1970-01-01T00:00:00.000Z'],
    ['return await new Promise((resolve) => setTimeout(() => resolve("later"), 5))', 'later'],
  ])('%s', async (code, expected) => {
    expect(valueOf(await harness.invoke(code))).toEqual(expected);
  });

  it('keeps non-ASCII text and line separators intact', async () => {
    const text = 'é ✓ 😀 \u2028 "quoted"\n next';
    expect(valueOf(await harness.invoke('return params.text', { params: { text } }))).toBe(text);
  });
});

describe('failures', () => {
  it('reports a thrown Error with its message and position in the tool code', async () => {
    const error = errorOf(await harness.invoke('const a = 1;\n  throw new Error("boom");'));
    expect(error).toEqual({ code: 'ERR_TOOL_ERROR', message: 'boom', line: 2, column: 9 });
  });

  it('stringifies a thrown non-Error', async () => {
    expect(errorOf(await harness.invoke('throw "plain"'))).toEqual({
      code: 'ERR_TOOL_ERROR',
      message: 'plain',
    });
    expect(errorOf(await harness.invoke('throw 7'))).toMatchObject({ message: '7' });
    expect(errorOf(await harness.invoke('throw Object.create(null)'))).toMatchObject({
      code: 'ERR_TOOL_ERROR',
    });
  });

  it('reports a runtime TypeError from tool code', async () => {
    const error = errorOf(await harness.invoke('return params.missing.deeper'));
    expect(error).toMatchObject({ code: 'ERR_TOOL_ERROR', line: 1, column: 23 });
    expect(error.message).toMatch(/Cannot read properties of undefined/);
  });

  it('fails the invocation when a timer callback throws', async () => {
    const error = errorOf(
      await harness.invoke(
        'setTimeout(() => { throw new Error("in timer") }, 1); await new Promise(() => {})',
      ),
    );
    expect(error).toMatchObject({ code: 'ERR_TOOL_ERROR', message: 'in timer' });
  });

  it('reports a syntax error with line and column', async () => {
    const error = errorOf(await harness.invoke('const a = 1;\nreturn a b;'));
    expect(error).toEqual({
      code: 'ERR_TOOL_SYNTAX',
      message: "Unexpected identifier 'b'",
      line: 2,
      column: 10,
    });
  });

  it('survives an unhandled rejection in tool code', async () => {
    valueOf(await harness.invoke('Promise.reject(new Error("nobody listens")); return 1'));
    expect(valueOf(await harness.invoke('return 2'))).toBe(2);
  });
});

describe('unserialisable and oversized results', () => {
  it.each([
    ['return { a: { b: 1n } }', 'result contains a BigInt at .a.b; return JSON data instead'],
    [
      'return [0, { x: [1, 2n] }]',
      'result contains a BigInt at [1].x[1]; return JSON data instead',
    ],
    [
      'const o = { list: [] }; o.list.push({ back: o }); return o',
      'result contains a circular reference at .list[0].back; return JSON data instead',
    ],
    [
      'return { "odd key": 3n }',
      'result contains a BigInt at ["odd key"]; return JSON data instead',
    ],
    [
      'return 10n',
      'result is a BigInt; return JSON data (object, array, string, number, boolean or null)',
    ],
    [
      'return () => 1',
      'result is a function; return JSON data (object, array, string, number, boolean or null)',
    ],
    [
      'return Symbol("s")',
      'result is a symbol; return JSON data (object, array, string, number, boolean or null)',
    ],
  ])('%s', async (code, message) => {
    expect(errorOf(await harness.invoke(code))).toEqual({
      code: 'ERR_RESULT_NOT_SERIALISABLE',
      message,
    });
  });

  it('refuses a result larger than maxResultBytes, naming the limit', async () => {
    const error = errorOf(
      await harness.invoke('return "x".repeat(2000)', { limits: { maxResultBytes: 1000 } }),
    );
    expect(error).toEqual({
      code: 'ERR_RESULT_TOO_LARGE',
      message: 'result is 2002 bytes of JSON, more than the limit of 1000 bytes',
    });
    // Exactly at the limit passes: "x" * 998 plus two quotes.
    const exact = await harness.invoke('return "x".repeat(998)', {
      limits: { maxResultBytes: 1000 },
    });
    expect(valueOf(exact)).toHaveLength(998);
  });

  it('counts the limit in UTF-8 bytes', async () => {
    const error = errorOf(
      await harness.invoke('return "é".repeat(600)', { limits: { maxResultBytes: 1000 } }),
    );
    expect(error.message).toBe('result is 1202 bytes of JSON, more than the limit of 1000 bytes');
  });
});

describe('params and env', () => {
  it('passes an optional parameter that was not supplied as undefined', async () => {
    const outcome = await harness.invoke(
      'return [typeof params.limit, "limit" in params, params.query]',
      {
        params: { query: 'q' },
      },
    );
    expect(valueOf(outcome)).toEqual(['undefined', false, 'q']);
  });

  it('gives env only the secrets sent, frozen', async () => {
    const outcome = await harness.invoke(
      '"use strict"; let threw = false; try { env.API_KEY = "x" } catch { threw = true } return [Object.keys(env), env.API_KEY, threw]',
      {
        env: { API_KEY: 'secret-1' },
      },
    );
    expect(valueOf(outcome)).toEqual([['API_KEY'], 'secret-1', true]);
  });

  it('has no require, process, Buffer or module in scope', async () => {
    const outcome = await harness.invoke(
      'return [typeof require, typeof process, typeof Buffer, typeof module, typeof global, typeof self, typeof _]',
    );
    expect(valueOf(outcome)).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  it('refuses eval and new Function (code generation from strings is off)', async () => {
    const outcome = await harness.invoke(
      'const out = []; for (const f of [() => eval("1"), () => new Function("return 1")]) { try { f(); out.push("ran") } catch (e) { out.push(e instanceof EvalError) } } return out',
    );
    expect(valueOf(outcome)).toEqual([true, true]);
  });
});

describe('console', () => {
  it('sends each console call as a log message, formatted like console', async () => {
    const outcome = await harness.invoke(
      [
        'console.log("plain", 1, true, null, undefined);',
        'console.info({ a: 1, "b c": [1, "two"], d: { e: { f: { g: { h: 1 } } } } });',
        'console.warn("%s is %d years", "Ann", 42, "extra");',
        'console.error(new Error("bad"));',
        'console.debug([], {}, 10n, Symbol("s"), function named() {}, -0);',
        'const cyclic = { name: "c" }; cyclic.self = cyclic; console.log(cyclic);',
        'console.log(new Map([["k", 1]]), new Set([1]));',
      ].join('\n'),
    );
    valueOf(outcome);
    const lines = outcome.logs.map((log) => [log.level, log.text]);
    expect(lines[0]).toEqual(['log', 'plain 1 true null undefined']);
    expect(lines[1]).toEqual([
      'info',
      "{ a: 1, 'b c': [ 1, 'two' ], d: { e: { f: { g: [Object] } } } }",
    ]);
    expect(lines[2]).toEqual(['warn', 'Ann is 42 years extra']);
    expect(lines[3]?.[0]).toBe('error');
    expect(lines[3]?.[1]).toMatch(/^Error: bad\n\s+at .*tool\.js:4:15/);
    expect(lines[4]).toEqual(['debug', '[] {} 10n Symbol(s) [Function: named] -0']);
    expect(lines[5]).toEqual(['log', "{ name: 'c', self: [Circular] }"]);
    expect(lines[6]).toEqual(['log', "Map(1) { 'k' => 1 } Set(1) { 1 }"]);
  });

  it('keeps the order of logs and sdk calls', async () => {
    const onCall: CallHandler = () => ({
      ok: true,
      value: { status: 200, headers: {}, body: 'b' },
    });
    const outcome = await harness.invoke(
      'console.log("one"); const r = await sdk.http({ url: "https://example.com/" }); console.log("two", r.status()); await sdk.http({ url: "https://example.com/2" }); console.log("three");',
      { onCall },
    );
    valueOf(outcome);
    expect(outcome.sequence.map((m) => (m.type === 'log' ? m.text : `call:${m.call}`))).toEqual([
      'one',
      'call:0',
      'two 200',
      'call:1',
      'three',
    ]);
  });

  it('stops at maxLogBytes with one notice line, each line charged at least 64 bytes', async () => {
    const outcome = await harness.invoke(
      'for (let i = 0; i < 100; i++) console.log("0123456789"); return "done"',
      {
        limits: { maxLogBytes: 200 },
      },
    );
    expect(valueOf(outcome)).toBe('done');
    // 10 bytes of text, 64 charged: three lines fit in 200 bytes.
    expect(outcome.logs.map((log) => log.text)).toEqual([
      '0123456789',
      '0123456789',
      '0123456789',
      '[mcphost] log output passed the limit of 1000 lines or 200 bytes; the rest is dropped',
    ]);
    expect(outcome.logs[3]?.level).toBe('warn');
  });

  it('charges empty lines too: a console.log("") flood ends at the budget', async () => {
    const outcome = await harness.invoke(
      'for (let i = 0; i < 1e6; i++) console.log(""); return "done"',
      { limits: { maxLogBytes: 64 * 1024, maxLogEntries: 100_000 } },
    );
    expect(valueOf(outcome)).toBe('done');
    expect(outcome.logs).toHaveLength(1024 + 1);
    expect(outcome.logs.at(-1)?.text).toMatch(/passed the limit/);
  });

  it('stops at maxLogEntries with one notice line', async () => {
    const outcome = await harness.invoke(
      'for (let i = 0; i < 1e5; i++) console.log("x"); return "done"',
      { limits: { maxLogBytes: 1024 * 1024, maxLogEntries: 50 } },
    );
    expect(valueOf(outcome)).toBe('done');
    expect(outcome.logs).toHaveLength(51);
    expect(outcome.logs.at(-1)).toMatchObject({
      level: 'warn',
      text: '[mcphost] log output passed the limit of 50 lines or 1048576 bytes; the rest is dropped',
    });
  });
});

describe('sdk.lodash', () => {
  it('offers the usual collection helpers', async () => {
    const code = `
      const _ = sdk.lodash;
      const rows = [
        { team: 'a', name: 'x', score: 3 }, { team: 'b', name: 'y', score: 5 },
        { team: 'a', name: 'z', score: 1 }, { team: 'b', name: 'y', score: 2 },
      ];
      return {
        groupBy: _.groupBy(rows, 'team'),
        orderBy: _.orderBy(rows, ['score'], ['desc']).map((r) => r.score),
        sumBy: _.sumBy(rows, 'score'),
        countBy: _.countBy(rows, 'team'),
        uniqBy: _.uniqBy(rows, 'name').map((r) => r.name),
        filter: _.filter(rows, { team: 'b' }).length,
        pick: _.pick(rows[0], ['name', 'score']),
        maxBy: _.maxBy(rows, 'score').name,
        isArray: Array.isArray(_.map([1], (x) => x)),
      };`;
    expect(valueOf(await harness.invoke(code))).toEqual({
      groupBy: {
        a: [
          { team: 'a', name: 'x', score: 3 },
          { team: 'a', name: 'z', score: 1 },
        ],
        b: [
          { team: 'b', name: 'y', score: 5 },
          { team: 'b', name: 'y', score: 2 },
        ],
      },
      orderBy: [5, 3, 2, 1],
      sumBy: 11,
      countBy: { a: 2, b: 2 },
      uniqBy: ['x', 'y', 'z'],
      filter: 2,
      pick: { name: 'x', score: 3 },
      maxBy: 'y',
      isArray: true,
    });
  });
});

describe('sdk.http and sdk.db', () => {
  it('sends an http call and reads status, body and headers from the reply', async () => {
    const onCall: CallHandler = (call) => ({
      ok: true,
      value: {
        status: 404,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seen: call.args }),
      },
    });
    const outcome = await harness.invoke(
      'const r = await sdk.http({ method: "POST", url: "https://api.example.com/x", headers: { a: "b" }, body: "hi" }); return { status: r.status(), type: r.headers()["content-type"], body: r.json() }',
      { onCall },
    );
    const request = {
      method: 'POST',
      url: 'https://api.example.com/x',
      headers: { a: 'b' },
      body: 'hi',
    };
    expect(outcome.calls[0]).toMatchObject({ op: 'http', call: 0, args: request });
    expect(valueOf(outcome)).toEqual({
      status: 404,
      type: 'application/json',
      body: { seen: request },
    });
  });

  it('rejects with the error of an error reply, message and code', async () => {
    const onCall: CallHandler = () => ({
      ok: false,
      error: { code: 'ERR_EGRESS_DENIED', message: 'destination 169.254.169.254 is not allowed' },
    });
    const outcome = await harness.invoke(
      'try { await sdk.http({ url: "http://169.254.169.254/" }) } catch (e) { return [e instanceof Error, e.message, e.code] }',
      { onCall },
    );
    expect(valueOf(outcome)).toEqual([
      true,
      'destination 169.254.169.254 is not allowed',
      'ERR_EGRESS_DENIED',
    ]);
    const uncaught = await harness.invoke('await sdk.http({ url: "http://169.254.169.254/" })', {
      onCall,
    });
    // Not caught, the refusal fails the invocation with its own code (call-failure-codes.ts).
    expect(errorOf(uncaught)).toMatchObject({
      code: 'ERR_EGRESS_DENIED',
      message: 'destination 169.254.169.254 is not allowed',
    });
  });

  it('sends db.select, db.insert and db.query with their documented arguments', async () => {
    const connection = {
      host: 'db.internal',
      port: 5432,
      database: 'app',
      user: 'u',
      password: 'p',
    };
    const onCall: CallHandler = (call) => {
      if (call.op === 'db.select') return { ok: true, value: [{ id: 1, name: 'a' }] };
      if (call.op === 'db.insert') return { ok: true, value: { id: 2, name: 'b' } };
      return { ok: true, value: { rows: [{ n: 3 }] } };
    };
    const outcome = await harness.invoke(
      `const db = sdk.db({ type: 'pg', connection: params.connection });
       const rows = await db.select('users', { name: 'a' });
       const created = await db.insert('users', { name: 'b' });
       const counted = await db.query('select count(*) as n from users where id > $1', [0]);
       const all = await db.select('users');
       return { rows, created, counted, isArray: Array.isArray(rows), proto: Object.getPrototypeOf(created) === Object.prototype, all: all.length };`,
      { onCall, params: { connection } },
    );
    expect(valueOf(outcome)).toEqual({
      rows: [{ id: 1, name: 'a' }],
      created: { id: 2, name: 'b' },
      counted: { rows: [{ n: 3 }] },
      isArray: true,
      proto: true,
      all: 1,
    });
    expect(outcome.calls.map((call) => [call.op, call.args])).toEqual([
      ['db.select', { type: 'pg', connection, table: 'users', where: { name: 'a' } }],
      ['db.insert', { type: 'pg', connection, table: 'users', row: { name: 'b' } }],
      [
        'db.query',
        {
          type: 'pg',
          connection,
          sql: 'select count(*) as n from users where id > $1',
          values: [0],
        },
      ],
      ['db.select', { type: 'pg', connection, table: 'users', where: {} }],
    ]);
  });

  it('rejects sdk arguments that are not JSON with ERR_INVALID_ARGUMENT, without a call', async () => {
    const outcome = await harness.invoke(
      'try { await sdk.http({ url: "x", body: 1n }) } catch (e) { return e.code }',
    );
    expect(valueOf(outcome)).toBe('ERR_INVALID_ARGUMENT');
    expect(outcome.calls).toEqual([]);
  });

  it('ignores a reply that arrives after the result (a call the tool did not await)', async () => {
    let release: (() => void) | undefined;
    const answered = new Promise<void>((resolve) => (release = resolve));
    const onCall: CallHandler = async (call) => {
      // Answered only once the invocation's result is out.
      await harness.next((m) => m.type === 'result' && m.invocation === call.invocation);
      release?.();
      return { ok: true, value: { status: 200, headers: {}, body: '' } };
    };
    expect(
      valueOf(
        await harness.invoke('sdk.http({ url: "https://example.com" }); return "early"', {
          onCall,
        }),
      ),
    ).toBe('early');
    await answered;
    expect(valueOf(await harness.invoke('return "still alive"'))).toBe('still alive');
  });
});

describe('isolation between invocations', () => {
  it('leaks no globals or prototype changes into the next invocation', async () => {
    valueOf(
      await harness.invoke(
        'globalThis.leaked = 1; Array.prototype.extra = 2; Object.prototype.polluted = 3; JSON.stringify = () => "hijacked"; sdk.lodash.hacked = 4; return 0',
      ),
    );
    const outcome = await harness.invoke(
      'return [typeof leaked, [].extra, ({}).polluted, JSON.stringify([1]), sdk.lodash.hacked]',
    );
    expect(valueOf(outcome)).toEqual(['undefined', null, null, '[1]', null]);
  });

  it('still serialises results and logs when tool code replaces JSON and Array methods', async () => {
    const outcome = await harness.invoke(
      'JSON.stringify = () => "{}"; Array.prototype.join = () => "x"; console.log({ a: [1, 2] }); return { ok: [1, 2] }',
    );
    expect(valueOf(outcome)).toEqual({ ok: [1, 2] });
  });

  it('never fires a timer after the invocation returned', async () => {
    const first = await harness.invoke(
      'setTimeout(() => console.log("late timeout"), 20); setInterval(() => console.log("late interval"), 5); return 1',
    );
    valueOf(first);
    // Time for the timers to fire if they could: what is tested is that nothing comes.
    await new Promise((resolve) => setTimeout(resolve, 80));
    const second = await harness.invoke('return 2');
    valueOf(second);
    expect(harness.messages.filter((m) => m.type === 'log' && m.text.startsWith('late'))).toEqual(
      [],
    );
  });

  it('runs timers within an invocation, clearTimeout included', async () => {
    const outcome = await harness.invoke(`
      const seen = [];
      const cleared = setTimeout(() => seen.push('cleared'), 5);
      clearTimeout(cleared);
      let n = 0;
      await new Promise((resolve) => { const id = setInterval(() => { seen.push('tick'); if (++n === 3) { clearInterval(id); resolve(); } }, 2); });
      await new Promise((resolve) => setTimeout(resolve, 10, 'arg'));
      queueMicrotask(() => seen.push('micro'));
      await null;
      return seen;`);
    expect(valueOf(outcome)).toEqual(['tick', 'tick', 'tick', 'micro']);
  });
});
