/**
 * The user the runner image runs as. Image building sets its files' owner to
 * it, and the sandbox starts containers as it; it lives here so that the
 * sandbox depends on image building and not the other way round.
 */

/** Numeric user:group the runner image runs as (no passwd lookup needed). */
export const RUNNER_USER = '10001:10001';
