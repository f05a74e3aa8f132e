/**
 * A differential oracle for the tool realm's web platform: one probe (the
 * text of a JavaScript function) runs in a real tool context, made by the
 * harness's own ToolContextFactory from the built context scripts, and in
 * this process's realm against Node's own implementation; the two outcomes
 * are compared as data.
 *
 * Nothing but strings crosses: the input goes in as JSON text, the probe's
 * value (or the error it threw, described by class name) comes out as JSON
 * text made inside the realm. The host side of the bridge is the harness's
 * own `Invocation`, so digests, base64, legacy decoding and timers take the
 * path they take in a container. No Docker, no harness process: a probe
 * costs well under a millisecond.
 *
 * Probes are written as source text, not host functions: the same text must
 * be compiled in both realms, and a function's `toString()` after the test
 * transform may name helpers that exist in one realm only.
 */
import vm from 'node:vm';
import { expect } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { readContextScripts } from '../../runner-image/context-scripts.js';
import { Invocation } from '../../runner-image/invocation.js';
import { RUN, ToolContextFactory, type ToolContext } from '../../runner-image/tool-context.js';

/**
 * Helpers in scope of every probe, in both realms:
 * - `bytes(view)`: the bytes of a buffer source as an array of numbers;
 * - `errorName(error)`: the class of what was thrown (`DOMException:<name>`
 *   for DOMExceptions), never its message, which implementations word freely;
 * - `attempt(run)`: `{value}` of `run()`, or `{threw}` with its error's name.
 */
const PROBE_HELPERS = `
  const bytes = (view) => Array.from(
    view instanceof ArrayBuffer ? new Uint8Array(view) : new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  const errorName = (error) => {
    if (error === null || (typeof error !== 'object' && typeof error !== 'function')) return 'non-object: ' + String(error);
    const name = error.constructor === undefined ? 'no constructor' : error.constructor.name;
    return name === 'DOMException' ? 'DOMException:' + error.name : name;
  };
  const attempt = (run) => {
    try {
      return { value: run() };
    } catch (error) {
      return { threw: errorName(error) };
    }
  };
`;

/**
 * Wraps a probe into a function of the realm it is compiled in: it takes the
 * input as JSON text, starts the probe, and returns `poll`, which gives the
 * outcome's JSON text once the probe (sync or async) has settled.
 */
function wrapperSource(probe: string): string {
  return `(function () {
  'use strict';
  ${PROBE_HELPERS}
  const probe = (${probe});
  return function run(inputJson) {
    let outcome;
    const record = (value) => { outcome = JSON.stringify(value); };
    try {
      Promise.resolve(probe(JSON.parse(inputJson))).then(
        (value) => record({ value: value === undefined ? '<undefined>' : value }),
        (error) => record({ threw: errorName(error) }),
      );
    } catch (error) {
      record({ threw: errorName(error) });
    }
    return function poll() { return outcome; };
  };
})()`;
}

/** What a probe gave: its value, or the name of the error it threw or rejected with. */
export type Outcome = { value: unknown } | { threw: string };

type Run = (inputJson: string) => () => unknown;

/** How long a probe may take to settle (timers included), in ms. */
const SETTLE_LIMIT_MS = 5_000;

/** Waits for a probe's outcome; `step` lets the realm or the host make progress. */
async function settle(poll: () => unknown, step: () => Promise<void>): Promise<Outcome> {
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  for (;;) {
    const text = poll();
    if (typeof text === 'string') return JSON.parse(text) as Outcome;
    if (text !== undefined) throw new Error('the probe wrapper gave something other than text');
    if (Date.now() > deadline) throw new Error(`the probe did not settle in ${SETTLE_LIMIT_MS} ms`);
    await step();
  }
}

/** One turn of the host's event loop: timers the realm set (through the bridge) may fire. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A tool context made by the harness's own factory, driven like an invocation does. */
export class ToolRealm {
  readonly #context: ToolContext;
  readonly #compiled = new Map<string, Run>();

  private constructor(context: ToolContext) {
    this.#context = context;
  }

  /** Builds the context scripts if stale (as the test setup does) and makes a fresh context. */
  static async open(): Promise<ToolRealm> {
    const { lodashPath, contextScriptsPath } = await buildHarness();
    const factory = new ToolContextFactory(lodashPath, readContextScripts(contextScriptsPath));
    const context = factory.create();
    // The harness's host side of the bridge: web calls and timers take their real path.
    const invocation = new Invocation({
      id: 'oracle',
      limits: { maxResultBytes: 1 << 20, maxLogBytes: 1 << 24, maxLogEntries: 1 << 20 },
      progress: false,
      context,
      // Protocol lines (console output, listener errors) are no part of what is compared.
      write: () => undefined,
      onEnd: () => undefined,
    });
    context.slot.target = invocation.bridge;
    return new ToolRealm(context);
  }

  /** Runs `probe` on `input` in the tool realm. */
  async run(probe: string, input: unknown): Promise<Outcome> {
    let run = this.#compiled.get(probe);
    if (run === undefined) {
      run = new vm.Script(wrapperSource(probe), { filename: 'oracle-probe.js' }).runInContext(
        this.#context.context,
        RUN,
      ) as Run;
      this.#compiled.set(probe, run);
    }
    const poll = run(JSON.stringify(input));
    const context = this.#context;
    context.drain();
    return settle(poll, async () => {
      await nextTurn();
      context.drain();
    });
  }
}

const hostCompiled = new Map<string, Run>();

/**
 * Runs `probe` on `input` in this process's realm, against Node's own web
 * platform, or with the globals `instead` names replaced (a reference
 * implementation in place of Node's).
 */
export async function runOnNode(
  probe: string,
  input: unknown,
  instead: Readonly<Record<string, unknown>> = {},
): Promise<Outcome> {
  const names = Object.keys(instead);
  const key = `${names.join(',')}\n${probe}`;
  let run = hostCompiled.get(key);
  if (run === undefined) {
    // The replacements shadow the globals as parameters of an enclosing function.
    const source = `(function (${names.join(', ')}) { return ${wrapperSource(probe)}; })`;
    const enclosing = new vm.Script(source, { filename: 'oracle-probe.js' }).runInThisContext() as (
      ...values: unknown[]
    ) => Run;
    run = enclosing(...Object.values(instead));
    hostCompiled.set(key, run);
  }
  const poll = run(JSON.stringify(input));
  return settle(poll, nextTurn);
}

/** Both outcomes of one probe on one input. */
export async function bothOutcomes(
  realm: ToolRealm,
  probe: string,
  input: unknown,
): Promise<{ realm: Outcome; node: Outcome }> {
  return { realm: await realm.run(probe, input), node: await runOnNode(probe, input) };
}

/** Fails, showing both outcomes, when the realm and Node disagree on `probe(input)`. */
export async function expectAgreement(
  realm: ToolRealm,
  probe: string,
  input: unknown,
): Promise<void> {
  const outcomes = await bothOutcomes(realm, probe, input);
  expect(outcomes.realm).toEqual(outcomes.node);
}
