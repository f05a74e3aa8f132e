/**
 * Keys JavaScript gives a meaning of its own. Argument schemas rebuild records
 * by assignment, so a `__proto__` key in a `where` filter or an inserted row
 * would vanish on the way (the filter silently gone, the select returning
 * every row); `constructor` and `prototype` are refused with it so that no
 * column name is ever mistaken for object machinery further down.
 */
import type { BrokerOperation } from '../../../src/protocol/index.js';
import { McphostError } from '../../errors.js';

/** Object keys refused as column names in `where` and `row`. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** Throws ERR_INVALID_ARGUMENT when the raw `where`/`row` of a db call has a reserved key. */
export function refuseReservedKeys(op: BrokerOperation, args: unknown): void {
  const field = op === 'db.select' ? 'where' : op === 'db.insert' ? 'row' : undefined;
  if (field === undefined || args === null || typeof args !== 'object') return;
  if (!Object.prototype.hasOwnProperty.call(args, field)) return;
  const record: unknown = (args as Record<string, unknown>)[field];
  if (record === null || typeof record !== 'object') return;
  for (const key of Object.keys(record)) {
    if (RESERVED_KEYS.has(key)) {
      throw new McphostError(
        'ERR_INVALID_ARGUMENT',
        `sdk.db ${op.slice(3)}: ${field}: ${JSON.stringify(key)} is not accepted as a column name`,
      );
    }
  }
}
