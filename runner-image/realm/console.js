// @ts-check
/**
 * The tool's `console`: each call made into one line (console-format.js) and
 * sent to the host as a `log` of its level.
 */
import { ObjectFreeze } from './primordials.js';
import { bridge } from './bridge.js';
import { formatArguments } from './console-format.js';

/** @param {string} level */
function logger(level) {
  return function () {
    const args = [];
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    bridge('log', level, formatArguments(args));
  };
}

export const toolConsole = ObjectFreeze({
  log: logger('log'),
  info: logger('info'),
  warn: logger('warn'),
  error: logger('error'),
  debug: logger('debug'),
  trace: logger('debug'),
  dir: logger('log'),
});
