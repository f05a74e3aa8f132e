/**
 * What one invocation-log row and one listed page may hold. A tool that floods
 * its console must not grow the store, nor the answer to `GET
 * /api/invocations` the dashboard polls, without bound: what does not fit is
 * cut, and a line in the logs says so (never silently).
 */
import type { InvocationRecord } from './records.js';

/** One stored log line. */
type LogLine = InvocationRecord['logs'][number];

/** Bytes kept back in a row for the truncation notice. */
const NOTICE_RESERVE_BYTES = 256;

/** Size of a value as stored (JSON text), in bytes. */
export function storedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * The entry cut to at most `maxRowBytes` of error message and log lines (as
 * stored): the error message keeps at most half, the log lines keep as many of
 * the first ones as fit, and a last line says how many were left out.
 */
export function boundInvocationRow(entry: InvocationRecord, maxRowBytes: number): InvocationRecord {
  let errorMessage = entry.errorMessage;
  const messageBudget = Math.floor(maxRowBytes / 2);
  if (errorMessage !== null && Buffer.byteLength(errorMessage, 'utf8') > messageBudget) {
    errorMessage = `${cutToBytes(errorMessage, messageBudget - 4)}…`;
  }
  const messageBytes = Buffer.byteLength(errorMessage ?? '', 'utf8');
  if (
    errorMessage === entry.errorMessage &&
    messageBytes + storedBytes(entry.logs) <= maxRowBytes
  ) {
    return entry;
  }
  const logBudget = maxRowBytes - NOTICE_RESERVE_BYTES - messageBytes;
  const kept: LogLine[] = [];
  let bytes = 2; // the brackets of the array
  for (const line of entry.logs) {
    const size = storedBytes(line) + 1;
    if (bytes + size > logBudget) break;
    kept.push(line);
    bytes += size;
  }
  const dropped = entry.logs.length - kept.length;
  if (dropped > 0) {
    kept.push({
      level: 'warn',
      text: `[mcphost] ${dropped} of ${entry.logs.length} log lines not stored: an invocation log row holds at most ${maxRowBytes} bytes`,
    });
  }
  return { ...entry, errorMessage, logs: kept };
}

/** The notice that replaces the logs of a row left out of a page. */
export function pageOmittedLogs(logBytes: number, maxPageBytes: number): LogLine[] {
  return [
    {
      level: 'warn',
      text: `[mcphost] ${logBytes} bytes of log lines left out: this page reached its limit of ${maxPageBytes} bytes; ask for fewer invocations or filter by server and tool`,
    },
  ];
}

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8, never splitting a character. */
function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Back up to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
