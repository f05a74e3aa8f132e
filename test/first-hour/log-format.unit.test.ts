/**
 * LOG_FORMAT: which format a start picks (pure logic: a pseudo-terminal is
 * not needed to test the choice), and what each format writes through the
 * real pino logger, redaction included.
 */
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, createServiceLogger } from '../../control-plane/logger.js';
import { readableLine } from '../../control-plane/readable-log.js';

/** A stdout stand-in that keeps what is written; `isTTY` as a terminal or a pipe reports it. */
function sink(isTTY: boolean): { isTTY: boolean; text: string; write(text: string): boolean } {
  return {
    isTTY,
    text: '',
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

describe('chooseLogFormat', () => {
  it('is readable on a terminal and JSON elsewhere when auto; json and pretty decide alone', () => {
    expect(chooseLogFormat('auto', true)).toBe('pretty');
    expect(chooseLogFormat('auto', false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });
});

describe('the service logger', () => {
  const secretFields = {
    headers: { authorization: 'Bearer tok-123456', 'x-api-key': 'key-abcdef' },
    account: { password: 'hunter2-secret' },
  };

  it('writes JSON lines to a pipe, with secrets redacted', () => {
    const out = sink(false);
    const log = createServiceLogger({ logLevel: 'info', logFormat: 'auto' }, out, {});
    log.info({ component: 'http', status: 200, ...secretFields }, 'request');
    const record = JSON.parse(out.text.trim()) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 30, msg: 'request', component: 'http', status: 200 });
    expect(out.text).toContain('[REDACTED]');
    for (const secret of ['tok-123456', 'key-abcdef', 'hunter2-secret']) {
      expect(out.text).not.toContain(secret);
    }
  });

  it('writes readable lines to a terminal, coloured, with secrets redacted', () => {
    const out = sink(true);
    const log = createServiceLogger({ logLevel: 'info', logFormat: 'auto' }, out, {});
    log.warn(
      { component: 'http', status: 200, route: 'GET /api/servers', ...secretFields },
      'slow request',
    );
    // Yellow: ESC [33m … ESC [0m around the level's name.
    const escape = String.fromCharCode(27);
    expect(out.text.slice(0, 13)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} $/);
    expect(out.text.slice(13)).toBe(
      `${escape}[33mWARN ${escape}[0m [http] slow request status=200 route="GET /api/servers" headers={"authorization":"[REDACTED]","x-api-key":"[REDACTED]"} account={"password":"[REDACTED]"}\n`,
    );
    for (const secret of ['tok-123456', 'key-abcdef', 'hunter2-secret']) {
      expect(out.text).not.toContain(secret);
    }
  });

  it('leaves colour out under NO_COLOR, and when pretty is forced onto a pipe', () => {
    const noColour = sink(true);
    createServiceLogger({ logLevel: 'info', logFormat: 'auto' }, noColour, { NO_COLOR: '1' }).info(
      'hi',
    );
    expect(noColour.text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}hi\n$/);
    const piped = sink(false);
    createServiceLogger({ logLevel: 'info', logFormat: 'pretty' }, piped, {}).info('hi');
    expect(piped.text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}hi\n$/);
  });

  it('writes JSON to a terminal when json is forced, and honours the level', () => {
    const out = sink(true);
    const log = createServiceLogger({ logLevel: 'warn', logFormat: 'json' }, out, {});
    log.info('not shown');
    log.error('shown');
    expect(
      out.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
    ).toEqual(['shown']);
  });
});

describe('readableLine', () => {
  it("puts an error's stack under its line", () => {
    const error = new Error('boom');
    const json = JSON.stringify({
      level: 50,
      time: 0,
      msg: 'request failed',
      requestId: 'r1',
      err: { type: 'Error', message: 'boom', stack: error.stack },
    });
    const [first, second, ...rest] = readableLine(json, { colour: false }).split('\n');
    expect(first).toMatch(/ERROR request failed requestId=r1$/);
    expect(second).toBe('    Error: boom');
    expect(rest.at(-1)).toBe('');
  });

  it('shows an error without a stack by its message, and passes other text on as it is', () => {
    const json = JSON.stringify({ level: 40, time: 0, msg: 'retry', err: { message: 'no route' } });
    expect(readableLine(json, { colour: false })).toMatch(/WARN {2}retry err="no route"\n$/);
    expect(readableLine('not json', { colour: false })).toBe('not json');
  });

  it('never hands a terminal a control character a tenant put in a logged value', () => {
    const hostile = '\x1b]0;owned\x07\x1b[2J';
    const json = JSON.stringify({
      level: 50,
      time: 0,
      msg: `tool failed ${hostile}`,
      component: hostile,
      tool: hostile,
      [`k${hostile}`]: 1,
      err: { message: hostile, stack: `Error: ${hostile}\n    at x` },
    });
    const line = readableLine(json, { colour: false });
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(line).toContain('\\u001b]0;owned\\u0007');
    expect(readableLine(`raw ${hostile}`, { colour: false })).not.toContain('\x1b');
  });
});
