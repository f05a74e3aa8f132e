/**
 * Log lines a person reads at a terminal: `12:04:05.120 INFO  [http] request
 * status=200 ms=1.4`, an error's stack indented below its line. A pino
 * destination: pino has already serialised (and redacted) the record when it
 * reaches `write`, so what is censored in JSON is censored here too. Kept
 * here rather than pino-pretty (docs/decisions.md, "First hour"): one line
 * per record is all it has to do.
 */

/** Where the readable lines go (process.stdout, or a test's sink). */
export interface LineSink {
  write(text: string): unknown;
}

/** pino's numeric levels, as a person reads them (padded to one width). */
const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** ANSI colours of the level names; 90 grey, 36 cyan, 32 green, 33 yellow, 31 red, 35 magenta. */
const LEVEL_COLOURS: Readonly<Record<number, number>> = {
  10: 90,
  20: 36,
  30: 32,
  40: 33,
  50: 31,
  60: 35,
};

/** Fields every record carries that say nothing to the person reading. */
const SHOWN_ELSEWHERE = new Set([
  'level',
  'time',
  'msg',
  'pid',
  'hostname',
  'service',
  'component',
]);

/**
 * Text with every control character escaped (`\x1b` → `\u001b`): a logged
 * value may come from a tenant (a tool's error, a client's name), and a raw
 * escape sequence would act on the operator's terminal.
 */
function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- control characters are what it finds
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A value as `key=value` shows it: bare when unambiguous, else JSON (which escapes controls). */
function valueText(value: unknown): string {
  if (typeof value === 'string')
    return /^[^\s"=]+$/.test(value) ? printable(value) : JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return printable(String(value));
}

/** `HH:MM:SS.mmm` in local time: what the clock on the reader's wall says. */
function clockText(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** The stack of an `err` field (pino's error serialiser), indented under the line. */
function stackText(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const stack = (error as { stack?: unknown }).stack;
  if (typeof stack !== 'string') return undefined;
  return stack
    .split('\n')
    .map((line) => `    ${printable(line)}`)
    .join('\n');
}

/**
 * One pino JSON record as a readable line (and its error's stack), ending in
 * a line break. Text that is not a JSON record is passed on as it is.
 */
export function readableLine(json: string, options: { colour: boolean }): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return printable(json);
    }
    record = parsed as Record<string, unknown>;
  } catch {
    return printable(json);
  }
  const level = typeof record.level === 'number' ? record.level : 30;
  const name = LEVEL_NAMES[level] ?? String(record.level).padEnd(5);
  const colour = LEVEL_COLOURS[level];
  const levelText = options.colour && colour !== undefined ? `\x1b[${colour}m${name}\x1b[0m` : name;
  const parts = [clockText(record.time), levelText];
  if (typeof record.component === 'string') parts.push(`[${printable(record.component)}]`);
  if (typeof record.msg === 'string' && record.msg !== '') parts.push(printable(record.msg));
  let stack: string | undefined;
  for (const [key, value] of Object.entries(record)) {
    if (SHOWN_ELSEWHERE.has(key) || value === undefined) continue;
    if (key === 'err') {
      stack = stackText(value);
      const message = (value as { message?: unknown } | null)?.message;
      if (stack !== undefined) continue;
      parts.push(`err=${valueText(typeof message === 'string' ? message : value)}`);
      continue;
    }
    parts.push(`${printable(key)}=${valueText(value)}`);
  }
  return `${parts.join(' ')}\n${stack === undefined ? '' : `${stack}\n`}`;
}

/**
 * A pino destination that writes readable lines to `sink`; `colour` colours
 * the level names (a terminal that honours ANSI escapes).
 */
export function readableDestination(
  sink: LineSink,
  options: { colour: boolean },
): { write(json: string): void } {
  return {
    write(json: string) {
      // pino writes one record per call, with its line break.
      sink.write(readableLine(json.trimEnd(), options));
    },
  };
}
