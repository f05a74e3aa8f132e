/**
 * The text of the script that gives tool code `URL` and `URLSearchParams`:
 * whatwg-url bundled by scripts/build-harness.ts (see `whatwgUrlSource`
 * there), which tool-context.ts compiles once and runs in each tool context.
 * The build inlines it here (`define`), so the harness reads no file for it.
 */
declare const MCPHOST_WHATWG_URL_SOURCE: string;

/** Evaluating it in a context leaves the factory of URL/URLSearchParams where web-platform.js takes it. */
export const WHATWG_URL_SOURCE: string = MCPHOST_WHATWG_URL_SOURCE;
