/**
 * Structured JSON logs (pino). Authorization and X-API-Key headers and
 * anything named like a secret are redacted by path, as a second line of defence: the code never
 * logs a token or a secret value on purpose.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

/** Creates the service logger at `level`. */
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
