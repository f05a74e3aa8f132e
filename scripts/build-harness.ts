/**
 * Bundles the harness (runner-image/harness.ts, zod included) into one ESM file
 * and puts beside it lodash.min.js and context-scripts.json (the scripts
 * tool-context.ts compiles to run in tool contexts: the bootstrap, whatwg-url
 * bundled for tool code's `URL`, and web-streams-polyfill for its
 * `ReadableStream`; see runner-image/context-scripts.ts):
 * `dist/runner/harness.mjs`, `lodash.min.js`, `context-scripts.json`. Skips
 * work when the outputs are newer than every input. Runnable as
 * `tsx scripts/build-harness.ts`.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';
import { isMainModule, listFiles, mtimeOrZero, newestMtime } from './file-times.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Folders whose files go into the bundle. */
const SOURCE_DIRS = ['runner-image', 'src'];

/**
 * The bootstrap's entry: runner-image/realm/ holds the realm's code as ES
 * modules (see the header of install.js), bundled into one script.
 */
const BOOTSTRAP_ENTRY = path.join(ROOT, 'runner-image', 'realm', 'install.js');
/** How esbuild's ESM bundle of the entry ends: `export { install }`, perhaps renamed. */
const BUNDLE_EXPORT = /export\s*\{\s*(?:([\w$]+)\s+as\s+)?install\s*\};\s*$/;

/**
 * Where the URL script leaves its factory in the context (realm/web/url.js reads
 * and deletes it); `this` at a script's top level is the context's global.
 */
const URL_SLOT = '__mcphostWhatwgUrl';

/** The language's globals the whatwg-url bundle names (a name missed here costs speed only). */
const URL_INTRINSICS = [
  'Array',
  'ArrayBuffer',
  'BigInt',
  'DataView',
  'Float32Array',
  'Float64Array',
  'Function',
  'Int8Array',
  'Int16Array',
  'Int32Array',
  'Math',
  'Number',
  'Object',
  'Promise',
  'RangeError',
  'Reflect',
  'Set',
  'SharedArrayBuffer',
  'String',
  'Symbol',
  'TypeError',
  'Uint8Array',
  'Uint8ClampedArray',
  'Uint16Array',
  'Uint32Array',
  'isNaN',
  'parseInt',
];

/**
 * The script tool-context.ts compiles in every tool context: the modules of
 * runner-image/realm/ bundled by esbuild, not minified (what runs is what was
 * reviewed), inside one strict function whose result is `install`. Each
 * module is evaluated once per context, in dependency order, primordials.js
 * first; nothing of it is a module a tool could reach, and the bundle's own
 * variables are locals of that function, never globals of the context.
 *
 * Bundled as ESM, its closing `export { install }` then made the function's
 * `return`: an IIFE with a global name would build a CommonJS-style exports
 * object through esbuild's helpers instead, ~15 µs of every context's
 * creation (measured, node 20).
 */
export async function bootstrapSource(): Promise<string> {
  const result = await build({
    entryPoints: [BOOTSTRAP_ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    minify: false,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
  });
  const bundle = result.outputFiles[0]?.text;
  if (bundle === undefined) throw new Error('bootstrap: esbuild produced no output');
  const tail = BUNDLE_EXPORT.exec(bundle);
  if (tail === null) {
    throw new Error('bootstrap: the bundle does not end by exporting `install` alone');
  }
  // Modules are strict, and so must the realm's code stay (in sloppy mode a
  // function called with no receiver would be handed the context's global).
  return `(function () {\n'use strict';\n${bundle.slice(0, tail.index)}return ${tail[1] ?? 'install'};\n})()`;
}

/**
 * The script that gives tool code `URL` and `URLSearchParams`: whatwg-url (the
 * reference implementation of the URL Standard, with tr46 and punycode)
 * bundled for no platform, inside a function that takes the UTF-8
 * TextEncoder/TextDecoder whatwg-url uses (realm/web/url.js gives it frozen
 * ones of the context). It names no global beyond the language's: everything
 * it creates is of the context it runs in.
 */
export async function whatwgUrlSource(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "export { URL, URLSearchParams } from 'whatwg-url';",
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'whatwgUrl',
    platform: 'neutral',
    mainFields: ['main'],
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const bundle = result.outputFiles[0]?.text;
  if (bundle === undefined) throw new Error('whatwg-url: esbuild produced no output');
  // Bound once, as locals: in a vm context every read of a global goes through
  // Node's interceptor, which made each URL parse ~7 times slower (0.2 ms).
  const locals = `const { ${URL_INTRINSICS.join(', ')} } = globalThis;`;
  return `this.${URL_SLOT} = function (TextEncoder, TextDecoder) {\n${locals}\n${bundle}\nreturn whatwgUrl;\n};`;
}

/**
 * Where the streams script leaves its factory in the context (realm/web/streams.js
 * reads and deletes it).
 */
const STREAMS_SLOT = '__mcphostWebStreams';

/**
 * Every global the web-streams-polyfill bundle names, each a local of its
 * factory taken from the record realm/web/streams.js hands it (built from
 * primordials.js, captured before tool code ran): a tool that replaced
 * `TypeError` or `Symbol` before its first stream does not reach the
 * library. Besides the language's: `AbortController` (the realm's, made on
 * first need: each WritableStream's controller has one), `globalThis` (an
 * object holding only a stand-in of the realm's DOMException, which the
 * library looks for there), and `self`, `global`, `queueMicrotask`, `structuredClone`, which
 * it is given as undefined and so does without (a tool's replacement of
 * them never runs in it). The build refuses a bundle naming a global missing
 * here (see `checkFreeGlobals`).
 */
export const STREAMS_INTRINSICS = [
  'AbortController',
  'ArrayBuffer',
  'DataView',
  'Error',
  'Function',
  'Math',
  'Number',
  'Object',
  'Promise',
  'RangeError',
  'String',
  'Symbol',
  'TypeError',
  'Uint8Array',
  'global',
  'globalThis',
  'isFinite',
  'queueMicrotask',
  'self',
  'structuredClone',
  // The stand-ins of STREAMS_DEFINE.
  'intrinsicApply',
  'intrinsicHasOwn',
  'intrinsicThen',
] as const;

/** What the streams script's factory returns: the library's classes, each a global of tool code. */
export const STREAMS_EXPORTS = [
  'ByteLengthQueuingStrategy',
  'CountQueuingStrategy',
  'ReadableByteStreamController',
  'ReadableStream',
  'ReadableStreamBYOBReader',
  'ReadableStreamBYOBRequest',
  'ReadableStreamDefaultController',
  'ReadableStreamDefaultReader',
  'TransformStream',
  'TransformStreamDefaultController',
  'WritableStream',
  'WritableStreamDefaultController',
  'WritableStreamDefaultWriter',
] as const;

/**
 * The three prototype methods the library calls on every operation, each
 * only as `method.call(receiver, ...)`: replaced at build time by stand-ins
 * whose `call` applies the method captured before tool code ran, so a tool
 * that replaced `Promise.prototype.then`, `Function.prototype.apply`,
 * `.call` or `Object.prototype.hasOwnProperty` does not change how its
 * streams work. The library's other reads of the built-ins' methods are
 * left as they are, at call time or when the factory runs (after tool
 * code): `Object.defineProperty`, `Math.min`, `Array.prototype.push`,
 * `shift` and `map`, `Promise.all`, and `Promise.resolve.bind(Promise)` —
 * a tool that replaced `Function.prototype.bind` before its first stream
 * gets streams that answer its own fake. Each only confuses the tool that
 * did it, in its own invocation (every invocation has a fresh context): the
 * realm's own code never trusts what a stream gives it.
 */
const STREAMS_DEFINE = {
  'Promise.prototype.then': 'intrinsicThen',
  'Function.prototype.apply': 'intrinsicApply',
  'Object.prototype.hasOwnProperty': 'intrinsicHasOwn',
};

/**
 * The script that gives tool code ReadableStream, WritableStream,
 * TransformStream and their readers, writers, controllers and queuing
 * strategies: web-streams-polyfill's ponyfill build (no globals of its own,
 * tested against the web-platform-tests), bundled for no platform inside a
 * function that takes the record of STREAMS_INTRINSICS. Like whatwg-url's, it
 * only defines the factory in each context; the factory runs on first use.
 */
export async function webStreamsSource(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `export { ${STREAMS_EXPORTS.join(', ')} } from 'web-streams-polyfill';`,
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    write: false,
    // ESM, its closing `export {…}` made the factory's `return {…}`: an IIFE
    // would build the exports through esbuild's interop helpers, which read
    // `Object.prototype.hasOwnProperty` as the factory runs.
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    define: STREAMS_DEFINE,
    // Not minifyIdentifiers: that would rename the classes (`ReadableStream.name`
    // would be 'A'); the library's dist is minified already, its names kept.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const bundle = result.outputFiles[0]?.text;
  if (bundle === undefined) throw new Error('web-streams-polyfill: esbuild produced no output');
  const tail = /export\s*\{([^}]*)\};?\s*$/.exec(bundle);
  if (tail === null) throw new Error('web-streams-polyfill: the bundle does not end by exporting');
  const exported = (tail[1] as string).split(',').map((part) => {
    const [local, name = local] = part.trim().split(/\s+as\s+/);
    return `${name}: ${local}`;
  });
  const code = bundle.slice(0, tail.index);
  checkFreeGlobals(code);
  const locals = `const { ${STREAMS_INTRINSICS.join(', ')} } = intrinsics;`;
  return `this.${STREAMS_SLOT} = function (intrinsics) {\n'use strict';\n${locals}\n${code}\nreturn { ${exported.join(', ')} };\n};`;
}

/**
 * Fails the build when the streams bundle names a global beyond
 * STREAMS_INTRINSICS (a later version of the library that reads one more would
 * read it off the context's global, where tool code may have replaced it).
 * No scope analysis: the bundle's code, strings and template text left out
 * (`codeOnly`), is searched for the names of this process's globals (the
 * language's, Node's and the web's) and `self`/`window`, other than as a
 * property (`.name`, `name:`) or as a name it declares itself. Catches more
 * than it must, never less.
 */
function checkFreeGlobals(bundle: string): void {
  const code = codeOnly(bundle);
  const candidates = new Set([...Object.getOwnPropertyNames(globalThis), 'self', 'window']);
  // Declared, or assigned (the minifier joins declarations: `var a={},B=class{…}`).
  const declared = new Set(
    [
      ...code.matchAll(/\b(?:class|function|const|let|var)\s+([A-Za-z_$][\w$]*)/g),
      ...code.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*)=(?![=>])/g),
    ].map((match) => match[1]),
  );
  const allowed = new Set<string>([...STREAMS_INTRINSICS, 'NaN', 'Infinity', 'undefined']);
  const unexpected = new Set<string>();
  for (const match of code.matchAll(/(?<![\w$.])[A-Za-z_$][\w$]*(?![\w$]*\s*:(?!:))/g)) {
    const name = match[0];
    if (candidates.has(name) && !declared.has(name) && !allowed.has(name)) unexpected.add(name);
  }
  if (unexpected.size > 0) {
    throw new Error(
      `web-streams-polyfill names globals it is not handed (${[...unexpected].join(', ')}): add them to STREAMS_INTRINSICS and realm/web/streams.js`,
    );
  }
}

/**
 * The script with the text of its string literals and of its templates
 * (not their `${…}` parts) blanked out. Enough for esbuild's minified output,
 * which writes no regular expression literal holding a quote: the check
 * above would then report a name too many, never miss one.
 */
function codeOnly(script: string): string {
  let out = '';
  /** Brace depths at which a template's `${` was opened. */
  const templates: number[] = [];
  let depth = 0;
  let quote = '';
  for (let i = 0; i < script.length; i++) {
    const character = script[i] as string;
    if (quote !== '') {
      if (character === '\\') {
        i++;
      } else if (quote === '`' && character === '$' && script[i + 1] === '{') {
        templates.push(depth);
        depth++;
        i++;
        quote = '';
        out += ' ';
      } else if (character === quote) {
        quote = '';
        out += ' ';
      }
      continue;
    }
    if (character === '"' || character === "'" || character === '`') {
      quote = character;
      out += ' ';
    } else if (character === '{') {
      depth++;
      out += character;
    } else if (character === '}') {
      depth--;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        quote = '`';
        out += ' ';
      } else {
        out += character;
      }
    } else {
      out += character;
    }
  }
  return out;
}

/**
 * zod's messages in English only. zod re-exports every one of its ~50 locales
 * (`z.locales`), and the protocol's namespace import (`import { z }`) keeps
 * them all in the bundle: 366 kB of the 800 kB harness, parsed and evaluated
 * by every runner as it starts, though zod speaks English unless configured
 * otherwise and the harness never does. Measured (node 20): the bundle
 * 800 → 437 kB; the harness as a process, CPU from start to its first result,
 * 203 → 189 ms (medians of 12, with the lazy node:child_process of
 * vm-modules-flag.ts); an idle runner container's memory, once V8 collected,
 * 14.9 → 13.3 MiB.
 */
const ZOD_LOCALES_INDEX = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onLoad({ filter: ZOD_LOCALES_INDEX }, () => ({
      contents: "export { default as en } from './en.js';",
      loader: 'js',
    }));
  },
};

/** Fails the build when a zod locale other than English reached the bundle (the plugin missed). */
function checkZodLocales(metafile: Metafile): void {
  const foreign = Object.keys(metafile.inputs).filter((input) =>
    /[\\/]zod[\\/]v4[\\/]locales[\\/](?!en\.js$|index\.js$)/.test(input),
  );
  if (foreign.length > 0) {
    throw new Error(
      `the harness bundle holds zod locales besides English (${foreign.slice(0, 3).join(', ')}…): the zod-english-only plugin no longer matches zod's layout`,
    );
  }
}

/** Options of `buildHarness`. */
export interface BuildHarnessOptions {
  /** Output folder; default `<repo>/dist/runner`. */
  outDir?: string;
}

/** Builds the harness bundle if stale; returns the paths of its files. */
export async function buildHarness(
  options: BuildHarnessOptions = {},
): Promise<{ harnessPath: string; lodashPath: string; contextScriptsPath: string }> {
  const outDir = path.resolve(options.outDir ?? path.join(ROOT, 'dist', 'runner'));
  const harnessPath = path.join(outDir, 'harness.mjs');
  const lodashPath = path.join(outDir, 'lodash.min.js');
  const contextScriptsPath = path.join(outDir, 'context-scripts.json');
  const lodashSource = path.join(ROOT, 'node_modules', 'lodash', 'lodash.min.js');
  await mkdir(outDir, { recursive: true });

  const sources = (
    await Promise.all(SOURCE_DIRS.map((dir) => listFiles(path.join(ROOT, dir))))
  ).flat();
  sources.push(
    path.join(ROOT, 'scripts', 'build-harness.ts'),
    path.join(ROOT, 'package-lock.json'),
  );
  const built = Math.min(await mtimeOrZero(harnessPath), await mtimeOrZero(contextScriptsPath));
  if ((await newestMtime(sources)) >= built) {
    const result = await build({
      entryPoints: [path.join(ROOT, 'runner-image', 'harness.ts')],
      outfile: harnessPath,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Readable stack traces in diagnostics matter more than a few kB.
      minify: false,
      sourcemap: false,
      legalComments: 'none',
      logLevel: 'warning',
      metafile: true,
      plugins: [zodEnglishOnly],
    });
    checkZodLocales(result.metafile);
    const scripts = {
      bootstrap: asciiOnly(await bootstrapSource()),
      whatwgUrl: asciiOnly(await whatwgUrlSource()),
      webStreams: asciiOnly(await webStreamsSource()),
    };
    await writeFile(contextScriptsPath, JSON.stringify(scripts));
  }
  if ((await mtimeOrZero(lodashSource)) >= (await mtimeOrZero(lodashPath))) {
    await copyFile(lodashSource, lodashPath);
  }
  return { harnessPath, lodashPath, contextScriptsPath };
}

/**
 * A script with every non-ASCII code unit written as a JavaScript escape
 * (`\uXXXX`), which means the same in strings, templates and regular
 * expressions and is only text in comments: read back, the script is a
 * one-byte string in V8 (half the memory of a two-byte one).
 */
function asciiOnly(source: string): string {
  // Where an escape would not mean the same, the build refuses the source
  // instead: a non-ASCII character after a backslash, a line or paragraph
  // separator (it ends a // comment; its escape does not), Unicode whitespace
  // between tokens (an escape there is a syntax error).
  const unsafe = /\\[\u0080-\uffff]|[\u2028\u2029]|(?![\t\n\v\f\r ])\s/.exec(source);
  if (unsafe !== null) {
    throw new Error(
      `a context script holds ${JSON.stringify(unsafe[0])} at offset ${unsafe.index}, which cannot be written ASCII-only without changing its meaning`,
    );
  }
  return source.replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

if (isMainModule(import.meta.url)) {
  const { harnessPath, lodashPath, contextScriptsPath } = await buildHarness();
  console.log(
    `harness: ${harnessPath}\nlodash: ${lodashPath}\ncontext scripts: ${contextScriptsPath}`,
  );
}
