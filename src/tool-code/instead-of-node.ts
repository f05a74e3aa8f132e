/**
 * What tool code has instead of Node's module system and globals, told where
 * an author written for Node first meets their absence: `require` (a
 * ReferenceError when the tool runs), an `import` statement (a syntax error
 * when the tool is saved) or `import()` (a rejection when it runs). One text
 * for the harness and the control plane, matching docs/tool-code.md ("What
 * is in scope", "What is not available").
 */

/** Tool code has no modules; what it has instead. */
export const INSTEAD_OF_MODULES =
  'Tool code is the body of an async function, not a module: it has no require, import or npm packages. ' +
  'What it may use is already in scope: sdk.http or fetch for HTTP, sdk.db for PostgreSQL and MySQL, ' +
  'sdk.lodash for lodash, and the web platform (URL, TextEncoder, crypto, …); see docs/tool-code.md.';

/** Node globals an author may reach for, and what tool code has instead. */
const INSTEAD_OF_GLOBAL: Readonly<Record<string, string>> = {
  require: INSTEAD_OF_MODULES,
  module: INSTEAD_OF_MODULES,
  exports: INSTEAD_OF_MODULES,
  process:
    "Tool code runs without Node's process: the secrets the tool lists are in env (env.NAME), its arguments in params.",
  Buffer:
    'Tool code has no Buffer: use TextEncoder and TextDecoder for bytes, atob and btoa for base64.',
  global: 'Tool code has no global: use globalThis.',
};

/** V8's message for an undeclared name, as ReferenceError gives it. */
const NOT_DEFINED = /^([A-Za-z_$][\w$]*) is not defined$/;

/** V8's syntax errors for module statements in a function body. */
const MODULE_SYNTAX = new Set([
  'Cannot use import statement outside a module',
  "Unexpected token 'export'",
]);

/**
 * `message` followed by what tool code has instead, when it is the engine's
 * "require is not defined" (or another Node global's); `message` otherwise.
 */
export function withInsteadOfGlobal(message: string): string {
  const name = NOT_DEFINED.exec(message)?.[1];
  const instead =
    name !== undefined && Object.hasOwn(INSTEAD_OF_GLOBAL, name)
      ? INSTEAD_OF_GLOBAL[name]
      : undefined;
  return instead === undefined ? message : `${asSentence(message)} ${instead}`;
}

/** A syntax error's message followed by INSTEAD_OF_MODULES when an import or export statement caused it. */
export function withInsteadOfModuleSyntax(message: string): string {
  return MODULE_SYNTAX.has(message) ? `${asSentence(message)} ${INSTEAD_OF_MODULES}` : message;
}

/** `text` ending in one full stop: unchanged when it already ends with `.`, `?` or `!`. */
export function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.?!…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
