/**
 * Service logs (pino): JSON lines for a log collector, or readable lines for
 * a person at a terminal (LOG_FORMAT, readable-log.ts). Authorization and
 * X-API-Key headers and anything named like a secret are redacted by path, as
 * a second line of defence: the code never logs a token or a secret value on
 * purpose. Redaction happens before either format is written.
 */
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { readableDestination, type LineSink } from './readable-log.js';

export type { Logger };

/** What LOG_FORMAT resolves to once `auto` has looked at stdout. */
export type LogFormat = 'json' | 'pretty';

/** Creates the service logger at `level`, writing JSON to `destination` (default stdout). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'mcphost' },
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'req.headers["x-api-key"]',
          'headers["x-api-key"]',
          'req.headers.cookie',
          'headers.cookie',
          'res.headers["set-cookie"]',
          '*.csrfToken',
          '*.password',
          '*.token',
          '*.secret',
          'env',
        ],
        censor: '[REDACTED]',
      },
    },
    destination,
  );
}

/**
 * LOG_FORMAT as written: `auto` is readable lines when stdout is a terminal
 * (a person is reading) and JSON otherwise (a pipe, a file, a container's log
 * driver); `json` and `pretty` decide alone.
 */
export function chooseLogFormat(
  setting: Config['logFormat'],
  stdoutIsTerminal: boolean,
): LogFormat {
  if (setting === 'auto') return stdoutIsTerminal ? 'pretty' : 'json';
  return setting;
}

/** The stdout the service logger writes to (process.stdout; a test's sink). */
export interface LogOutput extends LineSink {
  readonly isTTY?: boolean;
}

/**
 * The logger `npm start` uses: LOG_LEVEL and LOG_FORMAT from `config`,
 * written to `output` (default process.stdout). Readable lines are coloured
 * on a terminal unless NO_COLOR is set (no-color.org).
 */
export function createServiceLogger(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  output: LogOutput = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): Logger {
  const terminal = output.isTTY === true;
  if (chooseLogFormat(config.logFormat, terminal) === 'json') {
    return output === process.stdout
      ? createLogger(config.logLevel)
      : createLogger(config.logLevel, { write: (line: string) => void output.write(line) });
  }
  const colour = terminal && (env.NO_COLOR ?? '') === '';
  return createLogger(config.logLevel, readableDestination(output, { colour }));
}
