/**
 * What the streams (web-streams-polyfill, realm/web/streams.js) cost a tool
 * context, in one process, rounds alternated so drift weighs on every variant
 * alike:
 *  - `create`: a context made as the harness makes it (the streams script
 *    defines its factory in it), against `create, no streams script`: the
 *    same with that script emptied, so the difference is what every context
 *    pays for the streams being available; and that script alone, run in a
 *    fresh bare context, against an empty script;
 *  - first use: in a fresh context, reading `ReadableStream` (the factory
 *    runs: the library evaluated in the context) against reading a global
 *    that needs no setting up; the same once DOMException's group exists
 *    (the factory makes the DOMException class, which the library takes);
 *    and a whole first use (a stream made, read to its end, the microtasks
 *    drained);
 *  - once per container: compiling the script, and its size.
 * Wall time per operation (µs, median and p90 of every sample). Runnable
 * alone: `npx tsx bench/realm-streams-bench.ts`.
 */
import vm from 'node:vm';
import { buildHarness } from '../scripts/build-harness.js';
import { readContextScripts } from '../runner-image/context-scripts.js';
import { RUN, ToolContextFactory, type ToolContext } from '../runner-image/tool-context.js';
import { percentile } from './stats.js';

/** Rounds; each runs every variant once per sample, in rotated order. */
const ROUNDS = 40;
/** Samples of each variant in one round. */
const SAMPLES = 25;

const { lodashPath, contextScriptsPath } = await buildHarness();
const scripts = readContextScripts(contextScriptsPath);
const withStreams = new ToolContextFactory(lodashPath, scripts);
const withoutStreams = new ToolContextFactory(lodashPath, { ...scripts, webStreams: 'undefined' });

const script = (source: string): vm.Script => new vm.Script(source, { filename: 'bench.js' });
const READ_NOTHING = script('void setTimeout');
const READ_DOM_EXCEPTION = script('void DOMException');
const STREAMS_SCRIPT = new vm.Script(scripts.webStreams, { filename: 'web-streams-polyfill.js' });
const EMPTY_SCRIPT = script('undefined');
const READ_STREAM = script('void ReadableStream');
const USE_STREAM = script(`globalThis.done = false;
new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } })
  .getReader().read().then(() => { globalThis.done = true; });`);
const DONE = script('done');

/** Microseconds `run` took. */
function time(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** A variant: what one sample does, returning the µs it measured. */
type Variant = readonly [name: string, sample: () => number];

/** Contexts made ahead of each first-use sample, outside what is timed. */
const fresh = (): ToolContext => withStreams.create();

const variants: Variant[] = [
  ['create (streams script runs in it)', () => time(() => withStreams.create())],
  ['create, no streams script', () => time(() => withoutStreams.create())],
  [
    'run the streams script in a fresh context',
    () => {
      const context = vm.createContext(vm.constants.DONT_CONTEXTIFY);
      return time(() => STREAMS_SCRIPT.runInContext(context, RUN));
    },
  ],
  [
    'run an empty script in a fresh context',
    () => {
      const context = vm.createContext(vm.constants.DONT_CONTEXTIFY);
      return time(() => EMPTY_SCRIPT.runInContext(context, RUN));
    },
  ],
  [
    'first read of DOMException (events group made)',
    () => {
      const context = fresh();
      return time(() => READ_DOM_EXCEPTION.runInContext(context.context, RUN));
    },
  ],
  [
    'first read of setTimeout (no set-up)',
    () => {
      const context = fresh();
      return time(() => READ_NOTHING.runInContext(context.context, RUN));
    },
  ],
  [
    'first read of ReadableStream (library evaluated)',
    () => {
      const context = fresh();
      return time(() => READ_STREAM.runInContext(context.context, RUN));
    },
  ],
  [
    'first read of ReadableStream, DOMException made',
    () => {
      const context = fresh();
      READ_DOM_EXCEPTION.runInContext(context.context, RUN);
      return time(() => READ_STREAM.runInContext(context.context, RUN));
    },
  ],
  [
    'first use: a stream made and read, drained',
    () => {
      const context = fresh();
      return time(() => {
        USE_STREAM.runInContext(context.context, RUN);
        context.drain();
        if (DONE.runInContext(context.context, RUN) !== true)
          throw new Error('the read did not end');
      });
    },
  ],
];

const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
// Warm-up: compiles the scripts and lets V8 optimise the host side.
for (let i = 0; i < 50; i++) for (const [, sample] of variants) sample();
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < variants.length; k++) {
    const [name, sample] = variants[(round + k) % variants.length]!;
    const list = samples.get(name)!;
    for (let i = 0; i < SAMPLES; i++) list.push(sample());
  }
}

const compiles: number[] = [];
for (let i = 0; i < 10; i++) {
  // A distinct source each time: V8 would otherwise find it in its compilation cache.
  const source = `${scripts.webStreams}\n// ${i} ${Date.now()}`;
  compiles.push(time(() => new vm.Script(source, { filename: 'web-streams-polyfill.js' })));
}

const row = (name: string, values: readonly number[]): string =>
  `${name.padEnd(52)} p50 ${percentile(values, 50).toFixed(1).padStart(8)} µs   p90 ${percentile(values, 90).toFixed(1).padStart(8)} µs   (n=${values.length})`;
console.log(
  `node ${process.version}; ${ROUNDS} rounds × ${SAMPLES} samples per variant, alternated`,
);
for (const [name] of variants) console.log(row(name, samples.get(name)!));
console.log(row('compile the streams script (once per container)', compiles));
console.log(
  `streams script: ${scripts.webStreams.length} bytes (context-scripts.json: bootstrap ${scripts.bootstrap.length}, whatwg-url ${scripts.whatwgUrl.length})`,
);
