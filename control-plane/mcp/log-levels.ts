/**
 * Console levels as MCP logging levels, and the filter both eras apply: the
 * session's `logging/setLevel` (2025-11-25) or the request's `logLevel`
 * (2026-07-28) is the least severe level sent.
 */
import { LoggingLevelSchema } from '@modelcontextprotocol/core';
import type { LoggingLevel } from '@modelcontextprotocol/server';
import type { LogLevel } from '../../src/protocol/index.js';

/** The MCP level each console method's lines are sent at. */
export const LEVEL_OF_CONSOLE: Readonly<Record<LogLevel, LoggingLevel>> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warn: 'warning',
  error: 'error',
};

const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** True when a line at `level` is sent to a client that asked for `minimum` and above. */
export function isLevelSent(level: LoggingLevel, minimum: LoggingLevel): boolean {
  return SEVERITY.get(level)! >= SEVERITY.get(minimum)!;
}
