/**
 * What a failed zod parse says to a person: each problem with the path where
 * it sits. The one formatter of zod problems in the control plane (admin API
 * bodies, store inputs, Authorization Server metadata, option checks), so
 * problems read the same wherever they are reported. Chosen over zod 4's
 * `z.prettifyError`, which yields one multi-line string (`✖ message\n  → at
 * path`): the admin API returns each problem with its path in `details`, for a
 * client to place by field, and error messages and log lines need one line.
 */
import type { z } from 'zod';

export interface ValidationProblem {
  /** Dotted path of the offending field; empty for the value as a whole. */
  path: string;
  message: string;
}

/** The problems of a failed parse, in the order zod found them. */
export function validationProblems(error: z.ZodError): ValidationProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

/** `path: message; path: message…` for at most `limit` problems (default all). */
export function summariseProblems(
  problems: readonly ValidationProblem[],
  limit = problems.length,
): string {
  return problems
    .slice(0, limit)
    .map((problem) => (problem.path ? `${problem.path}: ${problem.message}` : problem.message))
    .join('; ');
}

/** A failed parse in one line (`path: message; …`), for option checks and log lines. */
export function describeProblems(error: z.ZodError): string {
  return summariseProblems(validationProblems(error));
}
