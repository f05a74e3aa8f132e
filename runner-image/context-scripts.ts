/**
 * The scripts every tool context is built from, read from `context-scripts.json`
 * beside the harness (scripts/build-harness.ts writes it, like lodash.min.js):
 * the bootstrap (runner-image/realm/, see the header of realm/install.js),
 * whatwg-url and web-streams-polyfill (see `whatwgUrlSource` and
 * `webStreamsSource` there).
 *
 * A file rather than string constants inlined in the bundle: half a megabyte
 * of literals in the module's source cost each runner ~7 MB of memory
 * (measured: RSS of the harness with no context prepared, 59.9 MB inlined,
 * 52.6 MB without them), since V8 keeps the source and its literals apart.
 * The build writes them ASCII-only, so they are one-byte strings here.
 */
import { readFileSync } from 'node:fs';

export interface ContextScripts {
  /** Evaluating it yields `install(bridge)`. */
  readonly bootstrap: string;
  /** Evaluating it in a context leaves the factory of URL/URLSearchParams where realm/web/url.js takes it. */
  readonly whatwgUrl: string;
  /** Evaluating it in a context leaves the factory of the stream classes where realm/web/streams.js takes it. */
  readonly webStreams: string;
}

/** Reads and checks the file; throws an Error naming what is wrong. */
export function readContextScripts(path: URL | string): ContextScripts {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const scripts = parsed as Partial<Record<keyof ContextScripts, unknown>> | null;
  if (
    scripts === null ||
    typeof scripts !== 'object' ||
    typeof scripts.bootstrap !== 'string' ||
    typeof scripts.whatwgUrl !== 'string' ||
    typeof scripts.webStreams !== 'string'
  ) {
    throw new Error('context-scripts.json must hold {bootstrap, whatwgUrl, webStreams} as strings');
  }
  return {
    bootstrap: scripts.bootstrap,
    whatwgUrl: scripts.whatwgUrl,
    webStreams: scripts.webStreams,
  };
}
