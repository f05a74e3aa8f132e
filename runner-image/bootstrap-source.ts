/**
 * The bootstrap's text: runner-image/bootstrap/*.js, which tool-context.ts
 * compiles in each tool context's realm (see the header of bootstrap/install.js).
 * The build inlines it here (`define` in scripts/build-harness.ts), so the
 * harness never reads or imports those files at run time.
 */
declare const MCPHOST_BOOTSTRAP_SOURCE: string;

/** Evaluating it yields `install(bridge)`. */
export const BOOTSTRAP_SOURCE: string = MCPHOST_BOOTSTRAP_SOURCE;
