/**
 * Database values as they travel back to tool code over JSON:
 * - Date → ISO 8601 string (UTC);
 * - bigint → number when it is a safe integer, else its decimal string;
 * - Buffer / Uint8Array (bytea, BLOB, BIT) → base64 string;
 * - DECIMAL/NUMERIC stay strings (drivers return them so to keep precision);
 * - objects and arrays (json/jsonb columns, pg arrays) are walked.
 */

/** Converts a driver value (row, array, scalar) into plain JSON values. */
export function toJsonSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value !== 'object') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonSafe);
  const plain: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) plain[key] = toJsonSafe(item);
  return plain;
}

/** Parses a 64-bit integer column's text: a number when exact, else the string (pg int8, count(*)). */
export function parseInt8Text(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}
