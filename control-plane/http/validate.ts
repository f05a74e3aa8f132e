/**
 * Parses outside input against a schema; a failure is ERR_VALIDATION listing
 * every problem with the path where it sits, so the operator sees what to fix.
 */
import type { z } from 'zod';
import { McphostError } from '../errors.js';

export interface ValidationProblem {
  path: string;
  message: string;
}

/** Returns the parsed value or throws ERR_VALIDATION naming `what` and each problem. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems: ValidationProblem[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const summary = problems
    .slice(0, 5)
    .map((p) => (p.path ? `${p.path}: ${p.message}` : p.message))
    .join('; ');
  throw new McphostError('ERR_VALIDATION', `invalid ${what}: ${summary}`, { details: problems });
}
