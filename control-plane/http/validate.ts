/**
 * Parses outside input against a schema; a failure is ERR_VALIDATION listing
 * every problem with the path where it sits, so the operator sees what to fix.
 */
import type { z } from 'zod';
import { McphostError } from '../errors.js';
import { summariseProblems, validationProblems } from '../validation-problems.js';

export type { ValidationProblem } from '../validation-problems.js';

/** Returns the parsed value or throws ERR_VALIDATION naming `what` and each problem. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = validationProblems(result.error);
  throw new McphostError('ERR_VALIDATION', `invalid ${what}: ${summariseProblems(problems, 5)}`, {
    details: problems,
  });
}
