/**
 * Calls refused before any code ran — arguments that do not match, an
 * unknown tool, a refused origin or credential, a caller past its rate, no
 * container to be had — are counted per server, error code and time bucket
 * instead of being logged one row each: they cost the caller nothing to make,
 * and one row each would let anyone who can reach a server fill the log.
 */
import { z } from 'zod';

/** One bucket's count of refusals of one server and code. */
export const refusalCountSchema = z.strictObject({
  server: z.string().min(1).max(128),
  /** The error code the caller was answered with (`ERR_INVALID_ARGUMENT`, …). */
  code: z
    .string()
    .regex(/^ERR_[A-Z0-9_]+$/)
    .max(64),
  /** Start of the bucket (ISO 8601, UTC). */
  bucketStart: z.iso.datetime(),
  count: z.number().int().min(1),
});
export type RefusalCount = z.infer<typeof refusalCountSchema>;

/** Filter of `listRefusals`/`sumRefusals`: newest first, `limit` (buckets) defaults to 1000, at most 10000. */
export const refusalQuerySchema = z.strictObject({
  /** Only these servers (an operator's own); absent = every server. */
  servers: z.array(z.string()).optional(),
  /** Only buckets that start at or after this time (ISO 8601). */
  since: z.iso.datetime({ offset: true }).optional(),
  limit: z.number().int().min(1).max(10_000).default(1000),
});
export type RefusalQuery = z.input<typeof refusalQuerySchema>;

/** Refusals of one server and code over the kept buckets. */
export interface RefusalTotal {
  server: string;
  code: string;
  count: number;
  /** Start of the oldest bucket counted (ISO 8601). */
  firstBucket: string;
  /** Start of the newest bucket counted (ISO 8601). */
  lastBucket: string;
}
